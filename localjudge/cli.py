"""The `localjudge` command: flags map one to one onto library calls.

The only module that prints, configures logging and draws progress bars.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localjudge.evaluate import Columns, Evaluation, ScorerSummary, evaluate, rows_to_runs, to_dataset
from localjudge.scorer import check_scale
from localjudge.scorers import SCORERS, get_scorer_factory

log = logging.getLogger("localjudge")


class CliError(Exception):
    """A user error: reported as one line, exit code 2."""


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument("--model", required=True, metavar="PATH",
                       help="local model directory (safetensors) or .gguf file; never downloaded")
    group.add_argument("--device-map", default=None,
                       help='"cpu", "cuda", "auto" (shard over GPUs via accelerate); default: GPU if any')
    group.add_argument("--dtype", default="auto", help='"auto" (float32 on CPU, the checkpoint\'s dtype on GPU), "bfloat16", ...')
    group.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    group.add_argument("--max-context", type=int, default=None, metavar="TOKENS",
                       help="longest prompt + answer to run (default: the model's declared length; "
                            "needed when it declares none); longer rows are unscored")
    group.add_argument("--allow-pickle", action="store_true", help="accept pickle (.bin) weights: can run code")
    group.add_argument("--trust-remote-code", action="store_true", help="run code shipped with the model")


def add_column_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("columns")
    group.add_argument("--input-col", default="input", help="column with the input (default: input; '' for none)")
    group.add_argument("--output-col", default="output", help="column with the output judged (default: output)")
    group.add_argument("--context-col", default="context",
                       help="column with the context: a string or a list of strings (default: context)")
    group.add_argument("--id-col", default=None, help="column with a run id (default: the row number)")


def parse_scorers(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        get_scorer_factory(name)
    if not names:
        raise ValueError("give at least one scorer")
    return names


def check_numbers(args: argparse.Namespace) -> None:
    """Numeric flags are checked before the model loads."""
    check_scale(args.scale)
    if args.batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {args.batch_size}")
    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be at least 1, got {args.limit}")
    if getattr(args, "max_context", None) is not None and args.max_context < 1:
        raise ValueError(f"--max-context must be at least 1, got {args.max_context}")


def build_judge(args: argparse.Namespace, device_map: Any = None) -> Any:
    from localjudge.transformers_judge import TransformersJudge

    return TransformersJudge(
        args.model,
        device_map=device_map or args.device_map,
        dtype=args.dtype,
        trust_remote_code=args.trust_remote_code,
        allow_pickle=args.allow_pickle,
        threads=args.threads,
        max_context=args.max_context,
    )


def build_scorers(names: Sequence[str], judge: Any, scale: float) -> list[Any]:
    return [get_scorer_factory(name)(judge, scale=scale) for name in names]


class Bars:
    """One tqdm bar per scorer on stderr: rows done, rows/s and ETA."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.bars = total, enabled, {}  # type: ignore[var-annotated]

    def __call__(self, scorer: str, rows: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if scorer not in self.bars:
            self.bars[scorer] = tqdm(total=self.total, desc=scorer, unit="row", file=sys.stderr, dynamic_ncols=True)
        self.bars[scorer].update(rows)
        if self.bars[scorer].n >= self.total:  # stop its clock: the next scorer starts now
            self.bars[scorer].close()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def summary_rows(summary: dict[str, ScorerSummary]) -> list[dict[str, Any]]:
    rows = []
    for s in summary.values():
        fresh = s.scored + s.unscored - s.resumed
        rows.append({
            "scorer": s.scorer, "mean_score": s.mean_score, "mean_prob_score": s.mean_prob_score,
            "scored": s.scored, "unscored": s.unscored, "resumed": s.resumed, "seconds": s.seconds,
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


def run_score(args: argparse.Namespace) -> int:
    from localjudge.store import ResultStore
    from localjudge.tables import read_table, write_table

    names = parse_scorers(args.scorer)
    check_numbers(args)
    dataset = read_table(args.data)
    if args.limit is not None:
        dataset = dataset.select(range(min(args.limit, len(dataset))))
    columns = Columns(args.input_col or None, args.output_col, args.context_col or None, args.id_col)
    rows_to_runs(to_dataset(dataset).select(range(1)), columns)  # bad data fails before the model loads
    rank, world = distributed_rank()
    if world > 1 and not args.out:
        raise CliError("a data-parallel run needs --out (the ranks merge their results into it)")
    store = None
    if args.out and not args.no_resume:
        store = ResultStore(Path(f"{args.out}.progress"), writer=f"rank-{rank}")
    elif world > 1:  # --no-resume: the ranks still hand their rows to rank 0, through a scratch folder
        store = ResultStore(scratch_dir(args.out), writer=f"rank-{rank}", fresh=True)
    judge = build_judge(args, device_map=distributed_device() if world > 1 else None)
    scorers = build_scorers(names, judge, args.scale)
    bars = Bars(len(dataset) if world == 1 else -(-len(dataset) // world), not args.quiet)
    try:
        result = evaluate(dataset, scorers, batch_size=args.batch_size, columns=columns, store=store,
                          shard=(rank, world) if world > 1 else None, progress=bars)
    finally:
        bars.close()
    if world > 1:
        wait_for_everyone()
        if rank != 0:
            return 0
        if args.no_resume:  # this run's ranks' logs only: drop any a crashed run with more ranks left
            ranks = {f"rank-{r}" for r in range(world)}
            for log_file in scratch_dir(args.out).glob("*.jsonl"):
                if log_file.stem not in ranks:
                    log_file.unlink()
            store = ResultStore(scratch_dir(args.out), writer="rank-0")
        result = evaluate(dataset, scorers, batch_size=args.batch_size, columns=columns, store=store)
        if args.no_resume:
            shutil.rmtree(scratch_dir(args.out), ignore_errors=True)
    if args.out:
        write_table(result.dataset, args.out)
        print(f"wrote {len(result.dataset)} rows to {args.out}", file=sys.stderr)
    else:
        print_rows(result, names)
    print(markdown_table(summary_rows(result.summary)))
    return 0


def scratch_dir(out: str) -> Path:
    """Where the ranks of a ``--no-resume`` data-parallel run exchange results (removed after)."""
    return Path(f"{out}.ranks")


def print_rows(result: Evaluation, names: Sequence[str]) -> None:
    for row in result.dataset:
        for name in names:
            score, error = row[f"{name}_score"], row[f"{name}_error"]
            shown = f"{score:g}" if score is not None else f"unscored ({error})"
            reason = row[f"{name}_reason"] or ""
            print(f"[{row.get('run_id', '')}] {name}: {shown}  {reason}".rstrip())


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="localjudge",
        description="Offline LLM-as-judge scoring on a locally stored model.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    score.add_argument("--data", required=True, metavar="FILE",
                       help="JSONL, JSON, CSV, parquet, or a saved HF dataset folder")
    score.add_argument("--out", default=None, metavar="FILE", help="write results (.jsonl or .parquet)")
    score.add_argument("--batch-size", type=int, default=8, help="rows per judge call (default: 8)")
    score.add_argument("--scale", type=float, default=1.0, help="scores lie in [0, scale] (default: 1)")
    score.add_argument("--limit", type=int, default=None, help="score only the first N rows")
    score.add_argument("--no-resume", action="store_true", help="do not read or write OUT.progress/ (a data-parallel run exchanges its ranks' rows "
                            "through OUT.ranks/, removed at the end)")
    add_column_flags(score)
    score.set_defaults(func=run_score)

    from localjudge.bench_cli import add_bench_parser
    from localjudge.sweep import add_sweep_parser

    add_sweep_parser(sub)
    add_bench_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.WARNING,
        format="localjudge: %(levelname)s: %(message)s",
    )
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()  # ours show rows/s and ETA per scorer; datasets' own add noise
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("localjudge: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except (CliError, ValueError, FileNotFoundError, OSError) as error:
        if args.debug:
            raise
        print(f"localjudge: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
