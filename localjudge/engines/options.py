"""Every engine option once, and what the options make of a judge: checked values, its identity.

`ENGINE_OPTIONS` is the one table of option names: which engines take each, and whether
`localjudge score` has a flag for it. The engine choice (`choice.py`), the CLI's flags and a
sweep's model keys all read it. The engines check `max_rows` and build their identity here.
"""

from __future__ import annotations

from typing import Any

from localjudge.repetition import MAX_REPEAT_WORDS

ENGINES = ("transformers", "vllm", "server")
TRANSFORMERS, VLLM, SERVER = ("transformers",), ("vllm",), ("server",)
LOCAL = ("transformers", "vllm")  # the engines that load the model themselves
# Every engine option, once: the engines that take it, and whether `localjudge score` has a flag
# for it (``--max-rows``); the rest are keywords of `load_judge` and keys of a sweep's model entry.
ENGINE_OPTIONS: dict[str, tuple[tuple[str, ...], bool]] = {
    "dtype": (LOCAL, True),
    "max_context": (LOCAL, True),
    "max_rows": (LOCAL, True),
    "trust_remote_code": (LOCAL, True),
    "allow_pickle": (LOCAL, True),
    "repeat_guard": (LOCAL, False),
    "device_map": (TRANSFORMERS, True),
    "decoder": (TRANSFORMERS, True),
    "prefix_cache": (TRANSFORMERS, False),
    "tensor_parallel_size": (VLLM, True),
    "pipeline_parallel_size": (VLLM, True),
    "gpu_memory_utilization": (VLLM, True),
    "distributed_executor_backend": (VLLM, True),
    "enforce_eager": (VLLM, True),
    "kv_cache_memory_bytes": (VLLM, False),
    "fixed_schedule": (VLLM, False),
    "load_format": (VLLM, False),
    "base_url": (SERVER, True),
    "served_model": (SERVER, True),
    "api_key_env": (SERVER, True),
    "concurrency": (SERVER, True),
    "request_timeout": (SERVER, True),
    "tokenizer": (SERVER, True),
    "server_kind": (SERVER, True),
}
OPTIONS = {engine: {name for name, (engines, _) in ENGINE_OPTIONS.items() if engine in engines} for engine in ENGINES}
FLAGS = tuple(name for name, (_, flag) in ENGINE_OPTIONS.items() if flag)


def check_max_rows(max_rows: Any) -> int | None:
    """`max_rows` (rows in flight at once) checked: None (the engine's default) or a positive int."""
    if max_rows is not None and (isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1):
        raise ValueError(f"max_rows must be a positive number of rows, got {max_rows!r}")
    return max_rows


def judge_identity(weights: str, dtype: Any, *, repeat_guard: bool, suffix: str = "") -> str:
    """A judge's identity, part of every result key: the weights (folder name and fingerprint),
    the dtype, greedy decoding, the repetition guard when on, and what else sets the engine's
    answers apart (`suffix`: ``+generate``, ``+vllm-0.32.0``)."""
    guard = f"+repeat-guard-{MAX_REPEAT_WORDS}" if repeat_guard else ""
    return f"{weights}:{dtype}:greedy{guard}{suffix}"
