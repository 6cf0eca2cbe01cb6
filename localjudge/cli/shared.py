"""What the `localjudge` commands share: flags, the judge and scorers they build, tables (the
progress bars are `progress`'s). The `cli` package is the only part of localjudge that prints,
configures logging and draws progress bars."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from localjudge.cli.progress import Bars  # noqa: F401 - every command's bars (`progress`), named here too
from localjudge.engines import (
    ENGINES,
    FLAGS,
    EngineOptionError,
    JudgeSpec,
    MissingOptionError,
    OptionValueError,
    check_threads,
)
from localjudge.engines.server import KINDS
from localjudge.evaluation import Columns, ScorerSummary
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


class CliError(Exception):
    """A user error: reported as one line, exit code 2."""


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument("--model", default=None, metavar="PATH",
                       help="local model directory (safetensors) or .gguf file; never downloaded (required, except "
                            "with --engine server, where it is the served model's tokenizer folder, as --tokenizer, "
                            "and when every scorer is model-free: code scorers and checks load no model)")
    group.add_argument("--engine", choices=ENGINES, default="transformers",
                       help="transformers: localjudge's own decode loop, any model transformers loads (the default); "
                            "vllm: vLLM's scheduler, for GPUs (needs the vllm extra; see docs); server: an "
                            "inference server you already run (--base-url)")
    group.add_argument("--dtype", default=None,
                       help='"auto" (the default; transformers: float32 on CPU, the checkpoint\'s dtype on GPU; '
                            'vllm: the checkpoint\'s), "bfloat16", ...')
    group.add_argument("--threads", type=int, default=None, help="CPU threads (torch's; the vLLM CPU engine's cores)")
    group.add_argument("--max-context", type=int, default=None, metavar="TOKENS",
                       help="longest prompt + answer to run (default: the model's declared length; "
                            "needed when it declares none); longer rows are unscored")
    group.add_argument("--max-rows", type=int, default=None, metavar="N",
                       help="most rows decoded at once (default: the whole batch; vllm: its max_num_seqs); with "
                            "--batch-size above it, finished rows' places are taken by waiting ones")
    group.add_argument("--allow-pickle", action="store_true", help="accept pickle (.bin) weights: can run code")
    group.add_argument("--trust-remote-code", action="store_true", help="run code shipped with the model")
    own = parser.add_argument_group("transformers engine")
    own.add_argument("--device-map", default=None,
                     help='"cpu", "cuda", "auto" (shard over GPUs via accelerate); default: GPU if any')
    own.add_argument("--decoder", choices=("loop", "generate"), default=None,
                     help="loop: localjudge's own greedy loop (finished rows leave the batch, forced tokens "
                          "checked in one pass; the default); generate: transformers' generate, the fallback "
                          "(same tokens)")
    vllm = parser.add_argument_group("vllm engine")
    vllm.add_argument("--tensor-parallel-size", type=int, default=None, metavar="N",
                      help="GPUs one model is split over (tensor parallel)")
    vllm.add_argument("--pipeline-parallel-size", type=int, default=None, metavar="N",
                      help="stages the layers are split into, over GPUs or nodes")
    vllm.add_argument("--gpu-memory-utilization", type=float, default=None, metavar="F",
                      help="fraction of GPU memory vLLM may take (vLLM's default 0.9)")
    vllm.add_argument("--distributed-executor-backend", choices=("mp", "ray"), default=None,
                      help="mp: one node; ray: several nodes (start the Ray cluster first)")
    vllm.add_argument("--enforce-eager", action="store_true", default=None,
                      help="no torch.compile or CUDA graphs: starts faster, runs slower")
    server = parser.add_argument_group("server engine (see docs/servers.md)")
    server.add_argument("--base-url", action="append", default=None, metavar="URL",
                        help="the server's OpenAI-compatible URL, e.g. http://127.0.0.1:8000/v1 (required with "
                             "--engine server); several servers of the same model (repeat the flag or separate "
                             "URLs with commas): rows are spread over them")
    server.add_argument("--served-model", default=None, metavar="NAME",
                        help="the model name to request (default: the only model the server lists)")
    server.add_argument("--api-key-env", default=None, metavar="VAR",
                        help="environment variable holding the server's API key (sent as a Bearer header; never "
                             "logged or written to results)")
    server.add_argument("--concurrency", type=int, default=None, metavar="N",
                        help="requests in flight at once per server; the server batches them (default: 8)")
    server.add_argument("--request-timeout", type=float, default=None, metavar="S",
                        help="seconds one request may take before it is retried, then unscored (default: 600)")
    server.add_argument("--tokenizer", default=None, metavar="PATH",
                        help="the served model's local tokenizer folder: localjudge renders the prompt itself and "
                             "sends token ids (vllm, sglang, llama-cpp); without it the server applies its own "
                             "chat template")
    server.add_argument("--server-kind", choices=KINDS, default=None,
                        help="the server's request dialect (default: detected from the server)")


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


# What an engine cannot load without, in the flags' words (`MissingOptionError.option` -> the flag, what it is).
NEEDS_FLAG = {"model": "--model, a local model directory or .gguf file",
              "base_url": "--base-url, the server's URL (e.g. http://127.0.0.1:8000/v1)"}


def in_flags(error: ValueError) -> str:
    """A judge spec's error (`JudgeSpec.checked`) in the words of the flags that caused it."""
    if isinstance(error, EngineOptionError):
        if error.option == "threads":
            return f"--threads is a flag of the local engines, not of --engine {error.engine}"
        owners = error.owners
        return (f"--{error.option.replace('_', '-')} is a flag of the {' and '.join(owners)} "
                f"engine{'s' if len(owners) > 1 else ''}, not of --engine {error.engine}")
    if isinstance(error, MissingOptionError):
        return f"--engine {error.engine} needs {NEEDS_FLAG.get(error.option, '--' + error.option.replace('_', '-'))}"
    if isinstance(error, OptionValueError):
        return f"--{error.option.replace('_', '-')} must be {error.rule}, got {error.value!r}"
    return str(error)


def judge_spec(args: argparse.Namespace) -> JudgeSpec:
    """The judge the model flags name (only the flags given), checked against the chosen engine
    before any model loads: a flag of another engine, a missing --model or --base-url is a user
    error (`CliError`) naming the flag."""
    options = {flag: getattr(args, flag, None) for flag in FLAGS}
    for flag in ("trust_remote_code", "allow_pickle"):
        options[flag] = options[flag] or None  # store_true: False means "not given"
    spec = JudgeSpec(args.model, args.engine, {key: value for key, value in options.items() if value is not None},
                     getattr(args, "threads", None))
    try:
        spec.checked()
    except (EngineOptionError, MissingOptionError, OptionValueError) as error:
        raise CliError(in_flags(error)) from None
    return spec


def build_judge(args: argparse.Namespace, device: str | None = None) -> Judge:
    """The judge of the model flags (loads the model and its engine). `device`: this process's
    accelerator in a data-parallel run (``cuda:N``, ``cpu``), where each rank runs its own engine."""
    judge = judge_spec(args).load(device, log_level="DEBUG" if getattr(args, "debug", False) else "WARNING")
    print(f"judge: {judge.identity}", file=sys.stderr)
    return judge


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


def higher_is_better(name: str, scale: float = 1.0, mode: str = "pipeline", options: Mapping[str, Any] | None = None,
                     compat: str = "localjudge") -> bool | None:
    """The direction of the scorer registered as `name` (built without a judge: no model), None
    when it has none or cannot be built so."""
    try:
        return build_scorer(name, None, scale=scale, mode=mode, options=options, compat=compat).higher_is_better
    except ValueError:
        return None


def better(higher: bool | None) -> str:
    """The summary's `better` cell: which way a good score points."""
    return "" if higher is None else "higher" if higher else "lower"


# Printed under a run's summary (stderr): what its columns mean, and what the default model is for.
SUMMARY_NOTE = ("better: which way a good score lies (toxicity, hallucination, bias: lower). mean_prob_score: the same "
                "score from the judge's label probabilities, graded where the verdicts are yes/no.")
DEFAULT_MODEL = "smollm2-135m-instruct"  # scripts/setup.sh's model: it proves the plumbing, it does not judge
WEAK_JUDGE_NOTE = ("the default model (SmolLM2-135M) proves the plumbing, not the verdicts: its scores are near chance "
                   "(a harmless row can get toxicity 1). For a judge whose scores mean something: docs/models.md")


def summary_notes(model: str | None, judged: bool) -> list[str]:
    """The lines under a summary: the columns explained, and a word on the default model when it judged."""
    notes = [SUMMARY_NOTE] if judged else [SUMMARY_NOTE.split(". mean_prob_score")[0] + "."]
    if judged and model and Path(model).name == DEFAULT_MODEL:
        notes.append(WEAK_JUDGE_NOTE)
    return notes


def summary_rows(summary: dict[str, ScorerSummary],
                 directions: Mapping[str, bool | None] | None = None) -> list[dict[str, Any]]:
    """One row per scorer. `directions`: each scorer's `higher_is_better` by name (one not given is
    read off the registry's scorer of that name, built with its defaults)."""
    rows = []
    for s in summary.values():
        fresh = s.scored + s.unscored + s.not_scorable - s.resumed
        higher = (directions or {}).get(s.scorer) if s.scorer in (directions or {}) else higher_is_better(s.scorer)
        rows.append({
            "scorer": s.scorer, "better": better(higher), "mean_score": s.mean_score,
            "mean_prob_score": s.mean_prob_score,
            "scored": s.scored, "unscored": s.unscored, "not_scorable": s.not_scorable, "resumed": s.resumed,
            "seconds": s.seconds,
            "rows_per_s": round(fresh / s.seconds, 3) if s.seconds and fresh else None,
            "tokens_per_s": round(s.new_tokens / s.seconds, 1) if s.seconds and fresh else None,
        })
    return rows


def markdown_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join("" if r[h] is None else str(r[h]) for h in head) + " |" for r in rows]
    return "\n".join(lines)


