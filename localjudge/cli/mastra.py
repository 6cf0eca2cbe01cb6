"""`localjudge score --mastra-store URL`: score the runs a Mastra app stored, and write the scores
back into its storage as Mastra score rows (see `localjudge.mastra_store`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localjudge.cli import model_flags, shared
from localjudge.cli.outputs import check_output_file, hold_run
from localjudge.cli.shared import Bars, CliError, build_scorers
from localjudge.cli.summary import higher_is_better, markdown_table, summary_notes, summary_rows
from localjudge.evaluation import WRITE_SUFFIXES, ResultStore, score_runs, to_dataset, with_results, write_table
from localjudge.mastra_store import (
    EXPERIMENT_RESULTS,
    EXPERIMENTS,
    SCORES,
    SPANS,
    UNREADABLE,
    Judged,
    Selection,
    Store,
    StoreError,
    check_store,
    joined_series,
    judged_results,
    open_store,
    read_agent_runs,
    read_experiment_runs,
    scorer_id,
    write_scores,
)
from localjudge.result import ScoreResult
from localjudge.samples import to_sample


def add_mastra_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Mastra storage (instead of --data; see docs/mastra-storage.md)")
    group.add_argument("--mastra-store", default=None, metavar="URL",
                       help="score the agent runs in a Mastra app's storage (file:PATH for LibSQL, or "
                            "postgresql://...) and write the scores back to its mastra_scorers table")
    group.add_argument("--mastra-agent", default=None, metavar="IDS", help="only these agents (comma-separated ids)")
    group.add_argument("--mastra-since", default=None, metavar="TIME", help="only runs started at or after TIME (ISO)")
    group.add_argument("--mastra-until", default=None, metavar="TIME", help="only runs started before TIME (ISO)")
    group.add_argument("--mastra-trace", default=None, metavar="IDS", help="only these traces (comma-separated ids)")
    group.add_argument("--mastra-sample", type=float, default=None, metavar="RATE",
                       help="score this share of the runs (0-1), the same runs every time (a hash of the trace id)")
    group.add_argument("--mastra-unscored", action="store_true",
                       help="only runs not yet scored by every scorer asked for (any judge)")
    group.add_argument("--mastra-scorer-id", action="append", default=[], metavar="NAME=ID",
                       help="write scorer NAME's rows under Mastra scorer id ID, joining that scorer's series in "
                            "Studio (repeatable; default: localjudge:NAME)")
    group.add_argument("--mastra-experiment", default=None, metavar="ID",
                       help="score an experiment's results instead, with their dataset items' ground truth "
                            "(--limit applies; the agent-run selectors above do not)")


def _ids(text: str | None) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip()) if text else ()


def run_mastra_score(args: argparse.Namespace) -> int:
    if args.mastra_experiment:
        _refuse_agent_selectors(args)
    names, options, judged_by_model, _ = shared.score_scorers(args)  # before the model loads
    try:
        series = joined_series(args.mastra_scorer_id, names)
    except ValueError as error:
        raise CliError(str(error)) from None
    if args.out:
        check_output_file(args.out, WRITE_SUFFIXES, "--out")
    selection = Selection(entity_ids=_ids(args.mastra_agent), since=args.mastra_since, until=args.mastra_until,
                          trace_ids=_ids(args.mastra_trace), sample_rate=args.mastra_sample,
                          unscored_by=tuple(series.get(n) or scorer_id(n) for n in names) if args.mastra_unscored
                          else (),
                          limit=args.limit)
    try:
        store = open_store(args.mastra_store)
    except StoreError as error:
        raise CliError(str(error)) from None
    try:
        tables = (EXPERIMENTS, EXPERIMENT_RESULTS, SPANS, SCORES) if args.mastra_experiment else (SPANS, SCORES)
        columns = check_store(store, tables)  # before the model loads: the schema, the score table's key, a write
        runs = read_experiment_runs(store, args.mastra_experiment)[:args.limit] if args.mastra_experiment \
            else read_agent_runs(store, selection)
        if not runs:
            print("no runs selected in the Mastra store: nothing to score", file=sys.stderr)
            return 0
        unreadable = sum(UNREADABLE in run for run in runs)
        print(f"read {len(runs)} runs from the Mastra store" + (
            f"; {unreadable} of them cannot be read (each warned above): recorded invalid_run, not scored"
            if unreadable else ""), file=sys.stderr)
        lock = hold_run(Path(f"{args.out}.progress"), f"--out {args.out}") if args.out and not args.no_resume \
            else None
        try:
            return _score(args, names, options, runs, store, columns[SCORES], judged_by_model, series)
        finally:
            if lock is not None:
                lock.release()
    except StoreError as error:
        raise CliError(str(error)) from None
    finally:
        store.close()


def _refuse_agent_selectors(args: argparse.Namespace) -> None:
    """--mastra-experiment reads every result of one experiment: the agent-run selectors do not apply to it."""
    flags = {"--mastra-agent": args.mastra_agent, "--mastra-since": args.mastra_since,
             "--mastra-until": args.mastra_until, "--mastra-trace": args.mastra_trace,
             "--mastra-sample": args.mastra_sample, "--mastra-unscored": args.mastra_unscored or None}
    given = [flag for flag, value in flags.items() if value is not None]
    if given:
        raise CliError(f"--mastra-experiment scores every result of the experiment and takes no agent-run "
                       f"selector: drop {', '.join(given)} (--limit still applies)")


def _score(args: argparse.Namespace, names: list[str], options: shared.ScorerOptions, runs: list[dict[str, Any]],
           store: Store, score_columns: dict[str, str], judged_by_model: bool, series: dict[str, str]) -> int:
    resume = ResultStore(Path(f"{args.out}.progress")) if args.out and not args.no_resume else None
    judge = model_flags.build_judge(args) if judged_by_model else None
    scorers = build_scorers(names, judge, args.scale, args.mode, options, compat=args.compat)
    bars = Bars(len(runs), not args.quiet)
    start = time.perf_counter()
    try:
        results, summary = score_runs(runs, scorers, batch_size=args.batch_size, store=resume, progress=bars)
    finally:
        bars.close()
    for name, found in results.items():  # the reader's reason, naming the table, row and column
        results[name] = [ScoreResult.unscored(run.get("run_id"), name, "invalid_run", f"invalid run: {run[UNREADABLE]}")
                         if UNREADABLE in run else result for run, result in zip(runs, found, strict=True)]
    judged = judged_results(runs, results, scorers, series)
    written = write_scores(store, judged, score_columns)
    unscored = [j for j in judged if not j.result.scored]
    print(f"wrote {written} new score rows to mastra_scorers ({sum(j.result.scored for j in judged) - written} "
          f"already there); {len(unscored)} unscored, not written", file=sys.stderr)
    for item in unscored:
        print(f"  unscored [{item.run.get('run_id')}] {item.scorer_name}: {item.result.error_kind}: "
              f"{item.result.error}", file=sys.stderr)
    hint = no_context_hint(unscored)
    if hint:
        print(hint, file=sys.stderr)
    if args.out:
        write_table(with_results(to_dataset([_row(run) for run in runs]), results), args.out)
        print(f"wrote {len(runs)} rows to {args.out}", file=sys.stderr)
    directions = {name: higher_is_better(name, args.scale, args.mode, options.get(name), args.compat)
                  for name in names}
    print(markdown_table(summary_rows(summary, directions)))
    for note in summary_notes(judge_model(args), judged_by_model):
        print(note, file=sys.stderr)
    print(f"scored and written back in {time.perf_counter() - start:.1f} s (the model's load not counted)",
          file=sys.stderr)
    return 0


def judge_model(args: argparse.Namespace) -> str | None:
    """The model the run judged with, as the summary's notes name it: --model's folder, or on the
    server engine the served model's tokenizer folder or name (so the default model served by a
    server gets the same word as in process)."""
    return args.model or getattr(args, "tokenizer", None) or getattr(args, "served_model", None)


def no_context_hint(unscored: Sequence[Judged]) -> str | None:
    """The command line's way to judge the runs a scorer left unscored for want of context: the
    scorer's own message names the Python API (context= / get_context=), which a stored run's
    reader cannot act on from here."""
    names = sorted({j.scorer_name for j in unscored if "needs context" in (j.result.error or "")})
    if not names:
        return None
    return (f"  no context: a stored run's context is its tools' results, and these runs have none; to judge them, "
            f"give {' and '.join(names)} the passages yourself: --scorer-option {names[0]}.context=@passages.json "
            "(a JSON list of strings, for every run in place of its tools' results), or a scorer of your own built "
            "with get_context= (--scorer-module FILE; docs/mastra-storage.md)")


def _row(run: dict[str, Any]) -> dict[str, Any]:
    """A run as one row of localjudge's own result file: its ids and texts."""
    origin = run.get("mastra") or {}
    try:
        sample = to_sample(run)
        texts: dict[str, str | None] = {"input": sample.input, "output": sample.output}
    except Exception:  # noqa: BLE001 - an unreadable run still gets its row (its results say why)
        texts = {"input": None, "output": None}
    return {"run_id": run.get("run_id"), **texts, "mastra_trace_id": origin.get("traceId"),
            "mastra_span_id": origin.get("spanId"), "mastra_entity_id": origin.get("entityId"),
            "mastra_thread_id": origin.get("threadId"), "mastra_dataset_item_id": origin.get("datasetItemId")}
