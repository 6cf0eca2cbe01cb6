"""A multi-scorer run in the old order (one scorer after another) against one schedule (issue 47:
per batch of rows, each round of steps of every scorer in one judge call): rows/s, judge calls,
and how many rows' results differ between the two.

In one process, per dtype: the judge loaded once; a 3-scorer run (hallucination, faithfulness,
toxicity) and a larger run (every judge scorer the rows can feed) scored by ``evaluate`` with
``schedule="by-scorer"`` and then ``schedule="together"``, the engine's prefix cache emptied
before each run. A row differs when any of its result columns differs between the two orders (in
float32 none should; in bf16 a row's answer can depend on its batch).

    .venv/bin/python benchmarks/bench_schedule.py                          # transformers, float32 and bf16
    .venv-vllm/bin/python benchmarks/bench_schedule.py --engine vllm --dtypes bfloat16
    .venv/bin/python benchmarks/bench_schedule.py --rows 4 --large-rows 2 --threads 2

Run it alone: another busy process on the same cores skews every figure. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from measure import DEFAULT_MODEL, EXAMPLE_DATA, load_rows, markdown_table, set_offline_env, set_torch_threads  # noqa: E402

THREE = ("hallucination", "faithfulness", "toxicity")


class Counting:
    """A judge that counts its calls and prompts, answering with the judge it wraps."""

    def __init__(self, judge: Any) -> None:
        self.judge, self.calls, self.prompts = judge, 0, 0

    @property
    def identity(self) -> str:
        return str(self.judge.identity)

    def generate(self, prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        self.calls += 1
        self.prompts += len(prompts)
        return self.judge.generate(prompts, schemas, max_new_tokens=max_new_tokens)


def judge_scorers(judge: Any, rows: list[dict[str, Any]]) -> list[Any]:
    """Every registered scorer that asks a judge, needs no option and can read every row (context,
    ground truth...)."""
    from localjudge.scorers import SCORERS, build_scorer, needs_judge

    chosen = []
    for name in SCORERS:
        try:
            if not needs_judge(name):
                continue
            scorer = build_scorer(name, judge)
            for row in rows:
                scorer.sample(row)
        except Exception:  # noqa: BLE001 - an option it needs, or a row it cannot read: left out
            continue
        chosen.append(scorer)
    return chosen


def differing_rows(a: Any, b: Any) -> int:
    """Rows where any result column differs between two datasets (same rows, same columns)."""
    names = [c for c in a.column_names if c not in ("run_id", "input", "output", "context", "ground_truth")]
    return sum(any(a[i][c] != b[i][c] for c in names) for i in range(len(a)))


def run(judge: Any, counting: Counting, scorers: list[Any], rows: list[dict[str, Any]], schedule: str,
        batch_size: int) -> tuple[dict[str, Any], Any]:
    from localjudge import evaluate

    entries = getattr(getattr(judge, "prefixes", None), "entries", None)
    if entries is not None:
        entries.clear()  # each run starts with the prefix cache a new process would find
    counting.calls = counting.prompts = 0
    start = time.perf_counter()
    result = evaluate(rows, scorers, batch_size=batch_size, schedule=schedule)  # type: ignore[arg-type]
    seconds = time.perf_counter() - start
    return {"schedule": schedule, "seconds": round(seconds, 1), "rows/s": round(len(rows) / seconds, 3),
            "judge calls": counting.calls, "prompts": counting.prompts}, result.dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="local model folder (default: the default model)")
    parser.add_argument("--engine", default="transformers", choices=("transformers", "vllm"))
    parser.add_argument("--dtypes", default="float32,bfloat16", help="comma-separated (default: float32,bfloat16)")
    parser.add_argument("--data", default=str(EXAMPLE_DATA), help="JSONL rows (default: examples/example.jsonl)")
    parser.add_argument("--rows", type=int, default=8, help="rows of the 3-scorer run (default: 8)")
    parser.add_argument("--large-rows", type=int, default=4, help="rows of the larger run (default: 4)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures here")
    args = parser.parse_args()
    set_offline_env()
    set_torch_threads(args.threads)

    from localjudge.engines import load_judge
    from localjudge.evaluation import write_table

    table = []
    for dtype in args.dtypes.split(","):
        judge = load_judge(args.model, engine=args.engine, dtype=dtype)
        counting = Counting(judge)
        runs = [("3 scorers", load_rows(Path(args.data), args.rows), None),
                ("large", load_rows(Path(args.data), args.large_rows), "all")]
        for name, rows, which in runs:
            scorers = judge_scorers(counting, rows) if which else [s for s in judge_scorers(counting, rows)
                                                                     if s.name in THREE]
            figures, datasets = {}, {}
            for schedule in ("by-scorer", "together"):
                figures[schedule], datasets[schedule] = run(judge, counting, scorers, rows, schedule, args.batch_size)
            with tempfile.TemporaryDirectory() as tmp:
                files = []
                for schedule, dataset in datasets.items():
                    write_table(dataset, Path(tmp) / f"{schedule}.jsonl")
                    files.append((Path(tmp) / f"{schedule}.jsonl").read_bytes())
            differ = differing_rows(datasets["by-scorer"], datasets["together"])
            label, before = f"{name} ({len(scorers)}) x {len(rows)} rows", figures["by-scorer"]["seconds"]
            for schedule in ("by-scorer", "together"):
                table.append({"engine": args.engine, "dtype": dtype, "run": label, **figures[schedule],
                              "speed-up": round(before / max(figures[schedule]["seconds"], 1e-9), 2),
                              "rows differing": differ, "files identical": files[0] == files[1]})
            print(markdown_table(table[-2:]), flush=True)
        del judge, counting
    print()
    print(markdown_table(table))
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
