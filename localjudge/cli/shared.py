"""What the `localjudge` commands share besides the model flags (`model_flags`) and the summary
table (`summary`): the column flags, the scorer flags (names, options, modes, compat, modules)
and the scorers they build, the number checks made before any model loads. The `cli` package is
the only part of localjudge that prints, configures logging and draws progress bars (`progress`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from localjudge.cli.errors import CliError
from localjudge.cli.model_flags import in_flags, judge_spec
from localjudge.cli.progress import Bars  # every command's bars (`progress`), named here too
from localjudge.engines import OptionValueError, check_threads
from localjudge.evaluation import Columns
from localjudge.judge import FakeJudge, Judge
from localjudge.scorers import (
    SCORER_MODES,
    build_scorer,
    get_scorer_factory,
    load_scorer_modules,
    needs_judge,
    scorer_options,
)
from localjudge.scoring import COMPATS, Scorer, check_scale
from localjudge.user_files import UserFileError, load_json, read_user_file

__all__ = ["Bars", "CliError", "ScorerOptions", "add_column_flags", "add_compat_flag", "add_mode_flag",
           "add_scorer_module_flag", "add_scorer_option_flag", "build_scorers", "check_numbers", "check_scorers",
           "columns_of", "load_modules", "option_value", "parse_scorer_options", "parse_scorers", "score_scorers"]


def add_column_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("columns")
    group.add_argument("--input-col", default="input", help="column with the input (default: input; '' for none)")
    group.add_argument("--output-col", default="output", help="column with the output judged (default: output)")
    group.add_argument("--context-col", default="context",
                       help="column with the context: a string or a list of strings (default: context)")
    group.add_argument("--id-col", default=None,
                       help="column with a run id (default: the row number; a data folder's rows: their file's name "
                            "and row number)")


def parse_scorers(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        get_scorer_factory(name)
    if not names:
        raise ValueError("give at least one scorer")
    return names


def check_numbers(args: argparse.Namespace, *, engine: bool = True) -> None:
    """Numeric flags are checked before the model loads; the engine's flags too, unless `engine`
    is False (no scorer of the run needs a judge: no model is loaded)."""
    if not (getattr(args, "compat", "localjudge") == "mastra" and args.scale == 0):  # Mastra reads 0: its scorers
        check_scale(args.scale)
    if args.batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {args.batch_size}")
    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be at least 1, got {args.limit}")
    if getattr(args, "max_context", None) is not None and args.max_context < 1:
        raise ValueError(f"--max-context must be at least 1, got {args.max_context}")
    if getattr(args, "max_rows", None) is not None and args.max_rows < 1:
        raise ValueError(f"--max-rows must be at least 1, got {args.max_rows}")
    try:
        check_threads(getattr(args, "threads", None))
    except OptionValueError as error:
        raise CliError(in_flags(error)) from None
    if engine and hasattr(args, "engine"):
        judge_spec(args)


def columns_of(args: argparse.Namespace) -> Columns:
    """The column flags as `Columns` ('' for an optional column: none)."""
    return Columns(args.input_col or None, args.output_col, args.context_col or None, args.id_col)


ScorerOptions = dict[str, dict[str, Any]]  # scorer name -> its factory's options


def build_scorers(names: Sequence[str], judge: Judge | None, scale: float, mode: str = "pipeline",
                  options: Mapping[str, Mapping[str, Any]] | None = None, *,
                  compat: str = "localjudge") -> list[Scorer]:
    return [build_scorer(name, judge, scale=scale, mode=mode, options=(options or {}).get(name), compat=compat)
            for name in names]


def add_compat_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--compat", choices=COMPATS, default="localjudge",
                        help="mastra: the scores Mastra 1.10.2's code gives where localjudge deliberately differs "
                             "(docs/mastra-parity.md), kept apart from the default's in the resume log")


def add_scorer_option_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scorer-option", action="append", default=[], metavar="SCORER.KEY=VALUE",
                        help="an option of a chosen scorer, repeatable (rubric.criteria='[\"Names the shop\"]'): "
                             "VALUE is JSON when it parses as JSON, else text; @FILE reads the JSON from FILE")


def add_scorer_module_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scorer-module", action="append", default=[], metavar="MODULE_OR_FILE",
                        help="import your own scorers first, repeatable: a .py file or a module name importable here, "
                             "whose register_scorer calls name them for --scorer (runs that code: your choice)")


def load_modules(specs: Sequence[str], where: str = "") -> tuple[str, ...]:
    """Import the user's scorer modules (`load_scorer_modules`) before any scorer name is read.
    Returns them as a Ray actor imports them again (`ScorerSpec.modules`): a file by its absolute
    path, a module by its name. A module that fails to import or registers nothing: one line."""
    try:
        return load_scorer_modules(specs)
    except ValueError as error:
        raise CliError(f"{where}: {error}" if where else str(error)) from error


def option_value(text: str, where: str) -> Any:
    """A flag's VALUE: the JSON it holds (a list, a number, true), else the text as is;
    ``@FILE``: the JSON in FILE (a literal leading ``@`` is written as the JSON string ``'"@..."'``)."""
    def no_constants(word: str) -> Any:
        raise ValueError(word)  # NaN, Infinity: text, not numbers

    if text.startswith("@"):
        path = Path(text[1:])
        try:  # a regular file of at most SMALL_LIMIT bytes, JSON at most MAX_DEPTH deep (localjudge.user_files)
            return load_json(read_user_file(path, "the option file").decode("utf-8"), f"{str(path)!r}",
                             parse_constant=no_constants)
        except OSError as error:
            raise CliError(f"{where}: cannot read {str(path)!r}: {error.strerror or error}") from None
        except UserFileError as error:
            raise CliError(f"{where}: {error}") from None
        except ValueError as error:
            raise CliError(f"{where}: {str(path)!r} is not valid JSON: {error}") from None
    try:
        return json.loads(text, parse_constant=no_constants)
    except ValueError:
        return text


def parse_scorer_options(items: Sequence[str], chosen: Sequence[str],
                         flag: str = "--scorer-option") -> ScorerOptions:
    """``SCORER.KEY=VALUE`` flags as {scorer: {key: value}}; a scorer not among `chosen`, a key
    given twice or a malformed flag is a `CliError`."""
    options: ScorerOptions = {}
    for item in items:
        target, equals, text = item.partition("=")
        name, dot, key = target.strip().partition(".")
        if not equals or not dot or not name or not key.strip():
            raise CliError(f"{flag} {item!r}: write it as SCORER.KEY=VALUE (rubric.criteria='[\"...\"]')")
        key = key.strip()
        where = f"{flag} {name}.{key}"
        get_scorer_factory(name)  # an unknown scorer: the registry's error, naming the known ones
        if name not in chosen:
            raise CliError(f"{where}: {name} is not a scorer of this run ({', '.join(dict.fromkeys(chosen))})")
        if key in options.get(name, {}):
            raise CliError(f"{where}: given twice")
        options.setdefault(name, {})[key] = option_value(text, where)
    return options


def check_scorers(specs: Sequence[tuple[str, float, str]], options: Mapping[str, Mapping[str, Any]],
                  where: str = "--scorer-option", *, compat: str = "localjudge") -> list[Scorer]:
    """Build each (name, scale, mode) scorer with its options on a judge that is never called,
    so an unknown or missing option, a bad value or a mode a scorer lacks fails before any model
    loads; returns them, for the checks that need no judge (a calibration file's versions). An
    option that takes a Python function (`get_context`) cannot come from a flag or a config file."""
    built = []
    for name, scale, mode in specs:
        given = options.get(name, {})
        known = scorer_options(name)
        for key in given:
            if key in known and "Callable" in str(known[key].annotation):
                raise CliError(f"{where} {name}.{key}: takes a Python function; build the scorer in Python instead")
        built.append(build_scorer(name, FakeJudge({}), scale=scale, mode=mode, options=given, compat=compat))
    return built


def score_scorers(args: argparse.Namespace) -> tuple[list[str], ScorerOptions, bool, list[Scorer]]:
    """`score`'s --scorer list and its options, checked before any model loads (as `check_scorers`,
    then the number flags), whether any of them asks a judge (code scorers and checks alone need
    no model, so no --model), and the scorers as `check_scorers` built them on no judge."""
    load_modules(getattr(args, "scorer_module", None) or [])
    names = parse_scorers(args.scorer)
    options = parse_scorer_options(args.scorer_option, names)
    unloaded = check_scorers([(name, args.scale, args.mode) for name in names], options, compat=args.compat)
    judged = any(needs_judge(name, mode=args.mode, options=options.get(name)) for name in names)
    check_numbers(args, engine=judged)
    return names, options, judged, unloaded


def add_mode_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=SCORER_MODES, default="pipeline",
                        help="pipeline (claims or statements, a verdict each, a reason; the default), direct "
                             "(one yes/no question on the whole output, one step, far cheaper) or ensemble (both in "
                             "one schedule: the pipeline's score and reason, prob_score the mean of both modes' "
                             "probabilities; not under --compat mastra)")
