"""The engine options' flags, generated from the one table (`localjudge.engines.ENGINE_OPTIONS`)
for both command lines: `localjudge`'s (``--max-rows``, placed in the model flags' groups by
`model_flags`) and the pytest plugin's (``--localjudge-max-rows``). A new engine option is one
row there and a flag of both here; `given_options` reads the options back from either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from localjudge.engines import ENGINE_OPTIONS, FLAGS, EngineOption

# What a command line calls the things an option's help names (`EngineOption.help`): ``{engine}``,
# the engine flag; ``{batch}``, what sets how many rows one batch holds.
Words = Mapping[str, str]
CLI_WORDS: Words = {"engine": "--engine", "batch": "--batch-size"}
PLUGIN_WORDS: Words = {"engine": "--localjudge-engine", "batch": "a batch (one `scored` call)"}


@dataclass(frozen=True)
class Flag:
    """One engine option's flag: ``add_argument(name, **kwargs)`` (argparse) or
    ``addoption(name, **kwargs)`` (pytest).

    Attributes:
        option: The engine option it sets (a key of `ENGINE_OPTIONS`).
        group: Its group in the help: ``"model"`` for an option of several engines, else
            ``"<engine> engine"``.
        name: The flag (``--max-rows``; with a prefix, ``--localjudge-max-rows``).
        kwargs: action, type, metavar, choices, default, help.
    """

    option: str
    group: str
    name: str
    kwargs: dict[str, Any]


def flag_kwargs(name: str, option: EngineOption, words: Words) -> dict[str, Any]:
    """The keywords of option `name`'s flag, its help in `words`. A switch stores True; a value
    flag's metavar, where the table gives none, is the option's name in capitals (argparse's own
    for an unprefixed flag; not ``LOCALJUDGE_MAX_ROWS``) or, with choices, the choices."""
    text = option.help.format_map(words)
    if option.kind is bool:
        return {"action": "store_true", "default": option.default, "help": text}
    kwargs: dict[str, Any] = {"default": option.default, "help": text}
    if option.kind is not str:
        kwargs["type"] = option.kind
    if option.choices is not None:
        kwargs["choices"] = option.choices
    if option.metavar is not None or option.choices is None:
        kwargs["metavar"] = option.metavar or name.upper()
    if option.repeat:
        kwargs["action"] = "append"
    return kwargs


def engine_flags(words: Words, prefix: str = "") -> list[Flag]:
    """Every engine option that has a flag (`EngineOption.flag`), as ``--<prefix><option>``, in
    the table's order."""
    return [Flag(name, "model" if len(option.engines) > 1 else f"{option.engines[0]} engine",
                 f"--{prefix}{name.replace('_', '-')}", flag_kwargs(name, option, words))
            for name, option in ENGINE_OPTIONS.items() if option.flag]


def given_options(value_of: Callable[[str], Any]) -> dict[str, Any]:
    """The engine options a command line gives, by name: `value_of(option)` reads its flag back
    (``args.max_rows``, ``config.getoption("localjudge_max_rows")``). A flag not given (None, or a
    switch's False) is left out, so an engine is given no option it did not ask for."""
    return {name: value for name in FLAGS if (value := value_of(name)) is not None and value is not False}
