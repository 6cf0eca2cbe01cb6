"""`localjudge score --ray` with one actor against plain scoring, on the same rows, model and threads.

1. Ray's start-up: `ray.init` of a local cluster (usage stats off, no dashboard), timed.
2. The Ray path (`evaluate_on_ray`, one actor holding `--threads` CPUs, so its torch uses that
   many threads): time to the first batch back (the actor's start, its model load, the first
   judge batch), rows/s over the whole run, and rows/s after the first batch (the steady state:
   per-batch cost, with Ray's start, the actor's start and the model load left out).
3. The plain path in this process (the model loaded with torch at `--threads` threads, then
   `evaluate`), its model load included, as the actor's is; the same three figures.

Rows/s after the first batch counts (row, scorer) pairs finished after the first batch came
back, divided by the scorers and by the seconds from then to the end. On the Ray path a batch
comes back scored by every scorer; on the plain path each scorer scores every row in turn, so
there the first batch is the first scorer's. Give `--rows` several batches' worth, or the
figure rests on few batches (none: it is left empty).

The rows are the quick start's (examples/example.jsonl), repeated with new run ids up to
`--rows`; the scorers are the three defaults. No resume log (each path judges every row). The
two paths' rows are checked equal. One table; ``--json`` writes the figures too. Run it alone
(nothing else busy), after scripts/setup_ray.sh:

    .venv/bin/python benchmarks/bench_ray.py --rows 8 --batch-size 4
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from measure import DEFAULT_MODEL, EXAMPLE_DATA, Stopwatch, markdown_table, set_offline_env, write_json  # noqa: E402

SCORERS = ("hallucination", "faithfulness", "toxicity")


def rows_of(count: int) -> list[dict[str, Any]]:
    """The example rows, repeated with new run ids up to `count`."""
    base = [json.loads(line) for line in EXAMPLE_DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{**base[i % len(base)], "run_id": f"{base[i % len(base)]['run_id']}-{i}"} for i in range(count)]


class FirstBatch:
    """A progress callback noting when the first rows came back (seconds after `start`) and how
    many (row, scorer) pairs that first batch finished.

    Args:
        scorers_per_batch: The scorers one batch's report stands for: 1 on the plain path (each
            report is one scorer's batch), every scorer on the Ray path (a batch comes back
            scored by each, reported once per scorer: the first report's rows count once each).
    """

    def __init__(self, scorers_per_batch: int = 1) -> None:
        self.start = time.perf_counter()
        self.first: float | None = None
        self.first_pairs = 0
        self.scorers_per_batch = scorers_per_batch

    def __call__(self, scorer: str, rows: int) -> None:
        if rows and self.first is None:
            self.first = time.perf_counter() - self.start
            self.first_pairs = rows * self.scorers_per_batch


def figures(path: str, rows: int, clock: FirstBatch, total: float) -> dict[str, Any]:
    """One table row; rows/s after the first batch is the (row, scorer) pairs left after it, per
    scorer, over the seconds left after it (None when nothing was left)."""
    first = clock.first if clock.first is not None else total
    after_pairs, after_seconds = rows * len(SCORERS) - clock.first_pairs, total - first
    steady = round(after_pairs / len(SCORERS) / after_seconds, 3) if after_pairs > 0 and after_seconds > 0 else None
    return {"path": path, "seconds": round(total, 1), "to first rows s": round(first, 1),
            "rows/s": round(rows / total, 3), "rows/s after the first batch": steady}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="local model folder (default: the default model)")
    parser.add_argument("--rows", type=int, default=8, help="rows scored by each path (default: 8)")
    parser.add_argument("--batch-size", type=int, default=4, help="rows per judge call (default: 4)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each path (default: 1)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures here")
    args = parser.parse_args()
    set_offline_env({"RAY_USAGE_STATS_ENABLED": "0"})
    import ray

    from localjudge.cluster import JudgeSpec, ScorerSpec, evaluate_on_ray
    from localjudge.evaluation import evaluate
    from localjudge.scorers import build_scorer

    data = rows_of(args.rows)
    table = []
    with Stopwatch() as init:
        ray.init(num_cpus=max(2, args.threads), include_dashboard=False, logging_level=logging.WARNING)
    table.append({"path": "ray.init (a local cluster)", "seconds": round(init.seconds, 1), "to first rows s": None,
                  "rows/s": None, "rows/s after the first batch": None})
    try:
        clock = FirstBatch(scorers_per_batch=len(SCORERS))
        with Stopwatch() as run:
            on_ray = evaluate_on_ray(data, [ScorerSpec(name) for name in SCORERS], JudgeSpec(args.model, options={
                "dtype": "float32"}), judges=1, cpus_per_judge=args.threads, batch_size=args.batch_size,
                progress=clock)
        table.append(figures("--ray, 1 actor (its start and model load included)", args.rows, clock, run.seconds))
    finally:
        ray.shutdown()

    import torch

    from localjudge.engines import load_judge

    torch.set_num_threads(args.threads)
    clock = FirstBatch()
    with Stopwatch() as run:
        judge = load_judge(args.model, dtype="float32")
        plain = evaluate(data, [build_scorer(name, judge) for name in SCORERS], batch_size=args.batch_size,
                         progress=clock)
    table.append(figures("plain (the model load included)", args.rows, clock, run.seconds))
    same = on_ray.dataset.to_list() == plain.dataset.to_list()
    print(markdown_table(table))
    print(f"\n{args.rows} rows x {len(SCORERS)} scorers, batch {args.batch_size}, {args.threads} thread(s), "
          f"{os.cpu_count()} CPUs here; the two paths' rows {'are equal' if same else 'DIFFER'}. Ray's start-up "
          "cost: ray.init plus the difference of the two runs' seconds. 'to first rows': until the first judge "
          "batch came back (plain: the first scorer's; --ray: every scorer's). 'rows/s after the first batch': "
          "the steady state, the start-up and model load left out (rows x scorers finished after it, per scorer, "
          "over the seconds after it).")
    if args.json:
        write_json(args.json, {"rows": args.rows, "batch_size": args.batch_size, "threads": args.threads,
                               "same_rows": same, "table": table})


if __name__ == "__main__":
    main()
