"""`localjudge score`: score a data file with one or more scorers, resumable, data-parallel
under `accelerate launch`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from localjudge.cli import model_flags, shared
from localjudge.cli.calibration import (
    add_calibration_flag,
    calibrator,
    check_calibration_flag,
    check_calibration_versions,
)
from localjudge.cli.cluster import add_ray_flags, check_ray_flags, score_on_ray
from localjudge.cli.mastra import add_mastra_flags, judge_model, run_mastra_score
from localjudge.cli.model_flags import add_model_flags
from localjudge.cli.outputs import check_output_file, hold_run
from localjudge.cli.progress import Bars
from localjudge.cli.shared import CliError, add_column_flags, add_scorer_option_flag, build_scorers, columns_of
from localjudge.cli.summary import higher_is_better, markdown_table, summary_notes, summary_rows
from localjudge.evaluation import (
    FOLDER_ROW,
    WRITE_SUFFIXES,
    Columns,
    Evaluation,
    OnResults,
    ResultStore,
    check_result_columns,
    decode_cell,
    evaluate,
    evaluate_ranked,
    read_table,
    rows_to_runs,
    start_ranks,
    to_dataset,
    write_table,
)
from localjudge.result import ScoreResult
from localjudge.scorers import SCORERS


def run_score(args: argparse.Namespace) -> int:
    check_calibration_flag(args)  # a bad --calibration file, before the model loads
    if (args.data is None) == (args.mastra_store is None):
        raise CliError("give --data FILE or --mastra-store URL (one of them)")
    if args.mastra_store is not None and args.ray is not None:
        raise CliError("--ray scores a --data file; --mastra-store runs are scored without it")
    if args.mastra_store is not None:
        return run_mastra_score(args)
    if args.mastra_experiment or args.mastra_agent or args.mastra_trace or args.mastra_since or args.mastra_until \
            or args.mastra_sample is not None or args.mastra_unscored or args.mastra_scorer_id:
        raise CliError("the --mastra-* selectors need --mastra-store URL")
    names, options, judged, unloaded = shared.score_scorers(args)  # before the model loads
    check_calibration_versions(args, unloaded)
    if args.out:
        check_output_file(args.out, WRITE_SUFFIXES, "--out")  # not found bad only after every row is scored
    dataset = read_table(args.data)
    if args.limit is not None:
        dataset = dataset.select(range(min(args.limit, len(dataset))))
    columns = columns_of(args)
    rows_to_runs(to_dataset(dataset).select(range(1)), columns)  # bad data fails before the model loads
    check_result_columns(dataset.column_names, names)
    rank, world = distributed_rank()
    check_ray_flags(args, world)
    if world > 1 and not args.out:
        raise CliError("a data-parallel run needs --out (the ranks merge their results into it)")
    logs = Path(f"{args.out}.progress") if args.out and not args.no_resume else scratch_dir(args.out) if world > 1 \
        else None  # what the run shares with others on this --out: one run at a time (its ranks together)
    lock = hold_run(logs, f"--out {args.out}", world) if logs else None
    try:
        if args.ray is not None:
            return report(args, score_on_ray(args, names, options, dataset, columns, judged), names, options,
                          judged)
        return _score(args, names, options, dataset, columns, rank, world, judged)
    finally:
        if lock is not None:
            lock.release()


def _score(args: argparse.Namespace, names: list[str], options: shared.ScorerOptions, dataset: Any,
           columns: Columns, rank: int, world: int, judged: bool = True) -> int:
    """`run_score` once its inputs are checked and its output is held: load the judge, score, write."""
    store = None
    if args.out and not args.no_resume:
        store = ResultStore(Path(f"{args.out}.progress"), writer=f"rank-{rank}")
    elif world > 1:  # --no-resume: the ranks still hand their rows to rank 0, through a scratch folder
        store = ResultStore(scratch_dir(args.out), writer=f"rank-{rank}", fresh=True)
    if world > 1:
        assert store is not None
        start_ranks(store.folder, rank, wait_for_everyone)  # every old mark gone before any new one
    judge = model_flags.build_judge(args, device=distributed_device() if world > 1 else None) if judged else None
    if judge is None:
        print("judge: none (every scorer is model-free)", file=sys.stderr)
    scorers = build_scorers(names, judge, args.scale, args.mode, options, compat=args.compat)
    calibrate = calibrator(args, scorers, dataset.column_names)  # --calibration's judge and version, before scoring
    bars = Bars(len(dataset) if world == 1 else -(-len(dataset) // world), not args.quiet)
    printed = not args.out  # each batch's rows printed as it is scored (--out: the file is written at the end)
    on_results = row_printer(dataset, bars.write, columns) if printed else None
    try:
        if world > 1:  # this rank's share; rank 0 then merges every rank's rows (the library's evaluate_ranked)
            assert store is not None
            result = evaluate_ranked(dataset, scorers, rank=rank, world=world, store=store, batch_size=args.batch_size,
                                     columns=columns, progress=bars, on_results=on_results, scratch=args.no_resume)
        else:
            result = evaluate(dataset, scorers, batch_size=args.batch_size, columns=columns, store=store,
                              progress=bars, on_results=on_results)
    finally:
        bars.close()
    if result is None:
        return 0  # a rank other than 0: its rows are written
    return report(args, calibrate(result), names, options, judged, printed=printed)


def report(args: argparse.Namespace, result: Evaluation, names: Sequence[str],
           options: shared.ScorerOptions | None = None, judged: bool = True, printed: bool = False) -> int:
    """The run's rows written to --out (or printed, unless they were as they were scored: `printed`),
    its summary table (with each scorer's direction) and, on stderr, the lines that explain it."""
    if args.out:
        write_table(result.dataset, args.out)
        print(f"wrote {len(result.dataset)} rows to {args.out}", file=sys.stderr)
    elif not printed:
        print_rows(result, names, columns_of(args))
    directions = {name: higher_is_better(name, args.scale, args.mode, (options or {}).get(name), args.compat)
                  for name in names}
    print(markdown_table(summary_rows(result.summary, directions)))
    for note in summary_notes(judge_model(args), judged):
        print(note, file=sys.stderr)
    hint = resume_hint(result, args.out if not args.no_resume else None)
    if hint:
        print(hint, file=sys.stderr)
    return 0


def resume_hint(result: Evaluation, out: str | None) -> str | None:
    """One line when rows were left unscored by a passing fault (`judge_failed`: a server gone, a
    request timed out, the device lost): rerunning on the same --out scores only those rows."""
    failed = sum(r.error_kind == "judge_failed" for results in result.results.values() for r in results)
    if not failed:
        return None
    if out:
        return (f"{failed} result(s) unscored by a judge failure (judge_failed: a server or device that failed): "
                f"rerun the same command with --out {out} to score only those; the rest are kept")
    return (f"{failed} result(s) unscored by a judge failure (judge_failed: a server or device that failed): "
            "run with --out FILE to keep what was scored, and rerun it to score only those")


def scratch_dir(out: str) -> Path:
    """Where the ranks of a ``--no-resume`` data-parallel run exchange results (removed after)."""
    return Path(f"{out}.ranks")


def print_rows(result: Evaluation, names: Sequence[str], columns: Columns) -> None:
    """Every row's line per scorer, in input order (the rows of a run that printed none as it went)."""
    ids = row_ids(result.dataset, columns)
    for index, row in enumerate(result.dataset):
        for name in names:
            print(row_line(ids[index], name, row[f"{name}_score"], row[f"{name}_error"],
                           row[f"{name}_error_kind"], row[f"{name}_reason"]))


def row_ids(dataset: Any, columns: Columns) -> list[Any]:
    """Each row's id as its line shows it: the --id-col column's, else a `run_id` column's, else a
    data folder's file and row (`FOLDER_ROW`), else its row number (from 0, the id its resume key holds)."""
    for column in (columns.run_id, "run_id", FOLDER_ROW):
        if column and column in dataset.column_names:
            return list(dataset[column])
    return list(range(len(dataset)))


def row_printer(dataset: Any, write: Callable[[str], None], columns: Columns) -> OnResults:
    """`evaluate`'s `on_results`: each result's line written as soon as its batch is scored (in
    input order within the batch; a run of several scorers prints one scorer's rows, then the next's)."""
    run_ids = row_ids(dataset, columns)

    def on_results(name: str, pairs: Sequence[tuple[int, ScoreResult]]) -> None:
        for index, r in pairs:
            write(row_line(run_ids[index], name, r.score, r.error, r.error_kind, r.reason))

    return on_results


def row_line(run_id: Any, name: str, score: float | None, error: str | None, error_kind: str | None,
             reason: str | None) -> str:
    """One row's result as printed: ``[run id] scorer: score  reason`` (or why it is unscored)."""
    unscored = "not scorable" if error_kind == "not_scorable" else "unscored"
    shown = f"{score:g}" if score is not None else f"{unscored} ({error})"
    return f"[{decode_cell(run_id)}] {name}: {shown}  {reason or ''}".rstrip()


def distributed_state() -> Any:
    """accelerate's process state (gloo on CPU-only machines, NCCL on GPUs)."""
    import torch
    from accelerate import PartialState

    return PartialState(cpu=not torch.cuda.is_available())


def distributed_rank() -> tuple[int, int]:
    """(rank, world size) when started by `accelerate launch` (or torchrun); else (0, 1)."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return 0, 1
    state = distributed_state()
    return state.process_index, state.num_processes


def distributed_device() -> str:
    return str(distributed_state().device)


def wait_for_everyone() -> None:
    distributed_state().wait_for_everyone()


def add_score_parser(sub: Any) -> None:
    """Add the `score` command to the `localjudge` subparsers."""
    score = sub.add_parser(
        "score",
        help="score a data file with one or more scorers",
        description="Score every row of a data file. With --out, results are appended to "
        "OUT.progress/ as they are produced: rerunning the same command after a crash or Ctrl-C "
        "skips finished rows and writes the same OUT. Under `accelerate launch`, each process "
        "scores its share of the rows and process 0 merges them into OUT.",
    )
    add_model_flags(score)
    score.add_argument("--scorer", required=True, help=f"comma-separated: {', '.join(SCORERS)}")
    score.add_argument("--data", default=None, metavar="FILE",
                       help="JSONL, JSON, CSV, parquet, a folder of such files, or a saved HF dataset folder "
                            "(or --mastra-store)")
    score.add_argument("--out", default=None, metavar="FILE", help="write results (.jsonl or .parquet)")
    score.add_argument("--batch-size", type=int, default=8, help="rows per judge call (default: 8)")
    score.add_argument("--scale", type=float, default=1.0, help="scores lie in [0, scale] (default: 1)")
    shared.add_mode_flag(score)
    shared.add_compat_flag(score)
    add_scorer_option_flag(score)
    shared.add_scorer_module_flag(score)
    score.add_argument("--limit", type=int, default=None, help="score only the first N rows")
    score.add_argument("--no-resume", action="store_true",
                       help="do not read or write OUT.progress/ (a data-parallel run exchanges its ranks' rows "
                            "through OUT.ranks/, removed at the end)")
    add_column_flags(score)
    add_ray_flags(score)
    add_mastra_flags(score)
    add_calibration_flag(score)
    score.set_defaults(func=run_score)
