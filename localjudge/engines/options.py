"""Every engine option once, and what the options make of a judge: checked values, its identity.

`ENGINE_OPTIONS` is the one table of engine options: which engines take each and, for those a
command line sets, how its flag reads (value type, metavar, choices, help). The engine choice
(`choice.py`), a sweep's model keys, and the flags of the CLI and of the pytest plugin (both
generated from it: `localjudge.cli.engine_flags`) all read it, so a new option is one row. The
engines check `max_rows` and build their identity here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localjudge.repetition import MAX_REPEAT_WORDS

ENGINES = ("transformers", "vllm", "server")
TRANSFORMERS, VLLM, SERVER = ("transformers",), ("vllm",), ("server",)
LOCAL = ("transformers", "vllm")  # the engines that load the model themselves


@dataclass(frozen=True)
class EngineOption:
    """One engine option: the engines that take it and, when it has a flag, how the flag reads.

    Attributes:
        engines: The engines that take it (any other refuses it: `choice.EngineOptionError`).
        help: The flag's help; empty: no flag (a keyword of `load_judge` and a sweep's model key
            only). ``{engine}`` and ``{batch}`` stand for what each door calls the engine flag and
            the batch size (`localjudge.cli.engine_flags`).
        kind: The value's type; ``bool``: a switch that takes no value.
        metavar: The value's name in the help; None: the flag's own name (or its choices).
        choices: The only values taken; None: any of `kind`.
        repeat: Given more than once, the values make a list (``--base-url``).
        default: The flag's value when not given; None and a switch's False both mean "not given".
    """

    engines: tuple[str, ...]
    help: str = ""
    kind: type = str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    repeat: bool = False
    default: Any = None

    @property
    def flag(self) -> bool:
        """Whether a command line sets it (the CLI's ``--max-rows``, the plugin's ``--localjudge-max-rows``)."""
        return bool(self.help)


# Every engine option, once, in the order its flag is shown in --help (within its engine's group).
ENGINE_OPTIONS: dict[str, EngineOption] = {
    "dtype": EngineOption(LOCAL, '"auto" (the default; transformers: float32 on CPU, the checkpoint\'s dtype on GPU; '
                                 'vllm: the checkpoint\'s), "bfloat16", ...'),
    "max_context": EngineOption(LOCAL, "longest prompt + answer to run (default: the model's declared length; needed "
                                       "when it declares none); longer rows are unscored", int, "TOKENS"),
    "max_rows": EngineOption(LOCAL, "most rows decoded at once (default: the whole batch; vllm: its max_num_seqs); "
                                    "with {batch} above it, finished rows' places are taken by waiting ones",
                             int, "N"),
    "allow_pickle": EngineOption(LOCAL, "accept pickle (.bin) weights: can run code", bool, default=False),
    "trust_remote_code": EngineOption(LOCAL, "run code shipped with the model", bool, default=False),
    "repeat_guard": EngineOption(LOCAL),
    "device_map": EngineOption(TRANSFORMERS, '"cpu", "cuda", "auto" (shard over GPUs via accelerate); default: GPU '
                                             'if any'),
    "decoder": EngineOption(TRANSFORMERS, "loop: localjudge's own greedy loop (finished rows leave the batch, forced "
                                          "tokens checked in one pass; the default); generate: transformers' "
                                          "generate, the fallback (same tokens)", choices=("loop", "generate")),
    "prefix_cache": EngineOption(TRANSFORMERS),
    "tensor_parallel_size": EngineOption(VLLM, "GPUs one model is split over (tensor parallel)", int, "N"),
    "pipeline_parallel_size": EngineOption(VLLM, "stages the layers are split into, over GPUs or nodes", int, "N"),
    "gpu_memory_utilization": EngineOption(VLLM, "fraction of GPU memory vLLM may take (vLLM's default 0.9)",
                                           float, "F"),
    "distributed_executor_backend": EngineOption(VLLM, "mp: one node; ray: several nodes (start the Ray cluster "
                                                       "first)", choices=("mp", "ray")),
    "enforce_eager": EngineOption(VLLM, "no torch.compile or CUDA graphs: starts faster, runs slower", bool),
    "kv_cache_memory_bytes": EngineOption(VLLM),
    "fixed_schedule": EngineOption(VLLM),
    "load_format": EngineOption(VLLM),
    "base_url": EngineOption(SERVER, "the server's OpenAI-compatible URL, e.g. http://127.0.0.1:8000/v1 (required "
                                     "with {engine} server); several servers of the same model (repeat the flag or "
                                     "separate URLs with commas): rows are spread over them", metavar="URL",
                             repeat=True),
    "served_model": EngineOption(SERVER, "the model name to request (default: the only model the server lists)",
                                 metavar="NAME"),
    "api_key_env": EngineOption(SERVER, "environment variable holding the server's API key (sent as a Bearer "
                                        "header; never logged or written to results)", metavar="VAR"),
    "concurrency": EngineOption(SERVER, "requests in flight at once per server; the server batches them (default: "
                                        "8)", int, "N"),
    "request_timeout": EngineOption(SERVER, "seconds one request may take before it is retried, then unscored "
                                            "(default: 600)", float, "S"),
    "tokenizer": EngineOption(SERVER, "the served model's local tokenizer folder: localjudge renders the prompt "
                                      "itself and sends token ids (vllm, sglang, llama-cpp); without it the server "
                                      "applies its own chat template", metavar="PATH"),
    # the same names as `engines.server.KINDS` (tests/unit/engines/test_engine_options.py): the server
    # package imports this module, so this one cannot import it
    "server_kind": EngineOption(SERVER, "the server's request dialect (default: detected from the server)",
                                choices=("vllm", "sglang", "llama-cpp", "ollama", "openai")),
}
OPTIONS = {engine: {name for name, option in ENGINE_OPTIONS.items() if engine in option.engines} for engine in ENGINES}
FLAGS = tuple(name for name, option in ENGINE_OPTIONS.items() if option.flag)


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
