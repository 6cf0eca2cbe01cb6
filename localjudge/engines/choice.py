"""Choosing the engine a judge runs on: ``transformers`` (localjudge's own decode loop, any model
transformers loads, CPU or GPU), ``vllm`` (vLLM's scheduler: GPU workstations, several GPUs or
nodes) or ``server`` (an inference server already running, over HTTP). The CLI, sweeps and the
pytest plugin load judges through `load_judge`.

Each engine takes its own options; giving one to another engine is an error that names the
option, never silently ignored. Light: an engine's heavy imports happen in its `load` (the server
engine has none).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from localjudge.engines.options import ENGINE_OPTIONS, ENGINES, OPTIONS
from localjudge.engines.server import ServerJudge  # light: the standard library's HTTP
from localjudge.judge import Judge


class EngineOptionError(ValueError):
    """An option given to an engine that does not take it."""

    def __init__(self, option: str, engine: str) -> None:
        self.owners = ENGINE_OPTIONS[option][0] if option in ENGINE_OPTIONS else ()  # the engines that take it
        self.option, self.engine, self.owner = option, engine, self.owners[0] if self.owners else None
        where = f"an option of the {self.owner} engine" if self.owner else "not an option of any engine"
        super().__init__(f"{option} is {where}, not of the {engine} engine")


def check_engine(engine: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options that are set (not None), after checking the engine knows each of them."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    given = {key: value for key, value in options.items() if value is not None}
    for key in given:
        if key not in OPTIONS[engine]:
            raise EngineOptionError(key, engine)
    return given


def load_judge(model_path: str | Path | None, *, engine: str = "transformers", **options: Any) -> Judge:
    """Load a judge from a local model on `engine` (`TransformersJudge.load` or
    `VLLMJudge.load`, with `options` as their keywords; None means the engine's default).

    On the ``server`` engine (`ServerJudge`, which needs `base_url`) `model_path` is the served
    model's local folder whose tokenizer renders the prompts, the same as its `tokenizer` option;
    None for none (the server then applies its own chat template)."""
    given = check_engine(engine, options)
    if engine == "server":
        tokenizer = given.pop("tokenizer", None)
        if model_path is not None and tokenizer is not None and Path(model_path) != Path(tokenizer):
            raise ValueError(f"the model path {str(model_path)!r} and tokenizer {str(tokenizer)!r} differ: give one")
        if "base_url" not in given:
            raise ValueError("the server engine needs base_url (the server's URL, e.g. http://127.0.0.1:8000/v1)")
        return ServerJudge(given.pop("base_url"), tokenizer=tokenizer if model_path is None else model_path, **given)
    if model_path is None:
        raise ValueError(f"the {engine} engine needs a local model path")
    if engine == "vllm":
        from localjudge.engines.vllm import VLLMJudge

        return VLLMJudge.load(model_path, **given)
    from localjudge.engines.transformers import TransformersJudge

    return TransformersJudge.load(model_path, **given)


def rank_gpus(local_rank: int, per_rank: int, visible: str | None) -> str:
    """The GPUs (a ``CUDA_VISIBLE_DEVICES`` value) of one data-parallel rank whose engine takes
    `per_rank` GPUs (tensor x pipeline parallel): the rank's consecutive share of `visible`
    (the current ``CUDA_VISIBLE_DEVICES``; None: all, numbered from 0)."""
    start = local_rank * per_rank
    if visible:
        devices = [d.strip() for d in visible.split(",") if d.strip()]
        if start + per_rank > len(devices):
            raise ValueError(f"rank {local_rank} needs GPUs {start}..{start + per_rank - 1} but only "
                             f"{len(devices)} are visible ({visible})")
        return ",".join(devices[start:start + per_rank])
    return ",".join(str(i) for i in range(start, start + per_rank))


def rank_cpus(local_rank: int, local_world: int, allowed: Iterable[int]) -> list[int]:
    """The CPU cores of one data-parallel rank on a machine without GPUs: its consecutive, equal
    share of `allowed` (this process's cores), so that the ranks' engines do not bind the same
    cores (vLLM's CPU build binds every engine to the first cores it sees). Empty when there are
    more ranks than cores: the ranks then share them."""
    cores = sorted(allowed)
    share = len(cores) // local_world if local_world > 0 else 0
    return cores[local_rank * share:(local_rank + 1) * share] if share else []
