"""Choosing the engine a judge runs on: ``transformers`` (localjudge's own decode loop, any model
transformers loads, CPU or GPU), ``vllm`` (vLLM's scheduler: GPU workstations, several GPUs or
nodes) or ``server`` (an inference server already running, over HTTP).

Each engine is declared once (`ENGINE_OF`): what it cannot load without, its loader and its
placement in this process (`placement`); its options are rows of the one table
(`options.ENGINE_OPTIONS`). `check_judge` checks a choice without reading a file and raises
typed errors (`EngineOptionError`, `MissingOptionError`, `OptionValueError`) that each door
(the CLI's flags, a sweep's keys, the pytest plugin's options) words its own way; `load_judge`
is the library's call, `JudgeSpec` (spec.py) the value the doors build. Giving an engine another
engine's option is an error that names the option, never silently ignored. Light: an engine's
heavy imports happen in its loader (the server engine has none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge.engines.options import ENGINE_OPTIONS, ENGINES, OPTIONS
from localjudge.engines.placement import Place, place_transformers, place_vllm
from localjudge.engines.server import ServerJudge  # light: the standard library's HTTP
from localjudge.judge import Judge

ModelPath = str | Path | None


class EngineOptionError(ValueError):
    """An option given to an engine that does not take it (`owners`: the engines that do)."""

    def __init__(self, option: str, engine: str, owners: tuple[str, ...] | None = None) -> None:
        if owners is None:
            owners = ENGINE_OPTIONS[option].engines if option in ENGINE_OPTIONS else ()
        self.option, self.engine, self.owners = option, engine, owners
        self.owner = owners[0] if owners else None
        where = f"an option of the {self.owner} engine" if self.owner else "not an option of any engine"
        super().__init__(f"{option} is {where}, not of the {engine} engine")


class MissingOptionError(ValueError):
    """What an engine cannot load without, not given: ``model`` (a local engine's model path) or
    an option (the server engine's ``base_url``)."""

    def __init__(self, option: str, engine: str) -> None:
        self.option, self.engine = option, engine
        super().__init__(f"the {engine} engine needs {NEEDS_TEXT.get(option, option)}")


class OptionValueError(ValueError):
    """An option's value out of its range: `option` must be `rule`, got `value`."""

    def __init__(self, option: str, value: Any, rule: str) -> None:
        self.option, self.value, self.rule = option, value, rule
        super().__init__(f"{option} must be {rule}, got {value!r}")


NEEDS_TEXT = {"model": "a local model path", "base_url": "base_url (the server's URL, e.g. http://127.0.0.1:8000/v1)"}


@dataclass(frozen=True)
class Engine:
    """One engine as a judge spec uses it.

    Attributes:
        needs: What it cannot load without: ``"model"`` (a local model path) or an option's name.
        load: (model path or None, the checked options) -> the judge; its heavy imports inside.
        place: How it is placed in this process (`placement.Place`: threads, a rank's devices,
            its environment); None: nothing to place here (it takes no ``threads`` either).
    """

    needs: str
    load: Callable[[ModelPath, dict[str, Any]], Judge]
    place: Place | None = None


def _load_transformers(model_path: ModelPath, given: dict[str, Any]) -> Judge:
    from localjudge.engines.transformers import TransformersJudge

    assert model_path is not None  # `check_judge`: its `needs`
    return TransformersJudge.load(model_path, **given)


def _load_vllm(model_path: ModelPath, given: dict[str, Any]) -> Judge:
    from localjudge.engines.vllm import VLLMJudge

    assert model_path is not None  # `check_judge`: its `needs`
    return VLLMJudge.load(model_path, **given)


def _load_server(model_path: ModelPath, given: dict[str, Any]) -> Judge:
    """`model_path`: the served model's local folder whose tokenizer renders the prompts (the
    `tokenizer` option's meaning); None and no `tokenizer`: the server applies its own template."""
    given = dict(given)
    tokenizer = given.pop("tokenizer", None)
    return ServerJudge(given.pop("base_url"), tokenizer=tokenizer if model_path is None else model_path, **given)


ENGINE_OF: dict[str, Engine] = {
    "transformers": Engine("model", _load_transformers, place_transformers),
    "vllm": Engine("model", _load_vllm, place_vllm),
    "server": Engine("base_url", _load_server),
}
PLACED = tuple(name for name, engine in ENGINE_OF.items() if engine.place is not None)  # the engines taking threads


def check_engine(engine: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options that are set (not None), after checking the engine knows each of them."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    given = {key: value for key, value in options.items() if value is not None}
    for key in given:
        if key not in OPTIONS[engine]:
            raise EngineOptionError(key, engine)
    return given


def check_threads(threads: Any) -> None:
    """A thread count is None (the engine's default) or a whole number of at least 1."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise OptionValueError("threads", threads, "a whole number of at least 1")


def check_judge(model_path: ModelPath, engine: str, options: Mapping[str, Any],
                threads: int | None = None) -> dict[str, Any]:
    """The options that are set (not None), after every check that reads no file, in this order:
    the engine and each option's owner (`EngineOptionError`), what the engine cannot load without
    (`MissingOptionError`), `threads` (`OptionValueError`; an engine with nothing to place takes
    none: `EngineOptionError`), a server's model path and tokenizer agreeing (`ValueError`)."""
    given = check_engine(engine, options)
    declared = ENGINE_OF[engine]
    if not (model_path is not None if declared.needs == "model" else given.get(declared.needs)):
        raise MissingOptionError(declared.needs, engine)
    check_threads(threads)
    if threads is not None and declared.place is None:
        raise EngineOptionError("threads", engine, PLACED)
    tokenizer = given.get("tokenizer")
    if model_path is not None and tokenizer is not None and Path(model_path) != Path(tokenizer):
        raise ValueError(f"the model path {str(model_path)!r} and tokenizer {str(tokenizer)!r} differ: give one")
    return given


def engine_needs(engine: str) -> str | None:
    """What `engine` cannot load without (`Engine.needs`); None for an engine that is not one."""
    return ENGINE_OF[engine].needs if engine in ENGINE_OF else None


def load_judge(model_path: ModelPath, *, engine: str = "transformers", **options: Any) -> Judge:
    """Load a judge from a local model on `engine` (`TransformersJudge.load` or
    `VLLMJudge.load`, with `options` as their keywords; None means the engine's default).

    On the ``server`` engine (`ServerJudge`, which needs `base_url`) `model_path` is the served
    model's local folder whose tokenizer renders the prompts, the same as its `tokenizer` option;
    None for none (the server then applies its own chat template). This process is left as it
    is (threads, GPUs, environment): placing it is `JudgeSpec.load`'s."""
    return ENGINE_OF[engine].load(model_path, check_judge(model_path, engine, options))
