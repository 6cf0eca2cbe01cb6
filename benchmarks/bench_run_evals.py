"""`run_evals` with several scorers (issue 58): judge calls, prompts and rows/s, with 3 scorers
(hallucination, faithfulness, toxicity) and with 12 (the first 12 judge scorers the rows can feed).

The target hands back each row's output; every scorer judges it. By default the judge is a stand-in
that answers every prompt with a minimal valid instance of its schema at once (no model: the figure
is the judge calls and what the schedule around them costs); ``--engine vllm|transformers`` loads
a real judge instead (the engine's batch then decides the seconds).

    .venv/bin/python benchmarks/bench_run_evals.py                                  # stand-in judge
    .venv-vllm/bin/python benchmarks/bench_run_evals.py --engine vllm --rows 8      # vLLM on CPU

Run it alone: another busy process on the same cores skews every figure. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from bench_schedule import THREE, Counting, judge_scorers  # noqa: E402
from measure import DEFAULT_MODEL, EXAMPLE_DATA, load_rows, markdown_table, set_offline_env, write_json  # noqa: E402


class SchemaJudge:
    """Answers every prompt with a minimal valid instance of its schema (first label, one item per list)."""

    identity = "schema-judge"

    def generate(self, prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        from localjudge.judge import Generation
        from localjudge.scoring.versioning import example_of

        answers = []
        for schema in schemas:
            tree = schema.model_json_schema()
            answers.append(Generation(json.dumps(example_of(tree, tree.get("$defs", {}))), new_tokens=8))
        return answers


def items_of(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any]:
    """run_evals items (each row's input made unique) and a target giving each its row's output."""
    items, outputs = [], {}
    for row in rows:
        item = {k: v for k, v in row.items() if k != "output"}
        item["input"] = f"{row['input']} (#{row['run_id']})"
        outputs[item["input"]] = row["output"]
        items.append(item)
    return items, lambda question: outputs[question]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default="stand-in", choices=("stand-in", "transformers", "vllm"))
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="local model folder (a real engine)")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--data", default=str(EXAMPLE_DATA), help="JSONL rows (default: examples/example.jsonl)")
    parser.add_argument("--rows", type=int, default=64, help="items per run (default: 64)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure, the best kept (default: 3)")
    parser.add_argument("--label", default="", help="a column naming the code measured (before/after)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures here")
    args = parser.parse_args()
    set_offline_env()

    from localjudge.evaluation import run_evals

    if args.engine == "stand-in":
        judge: Any = SchemaJudge()
    else:
        from localjudge.engines import load_judge

        judge = load_judge(args.model, engine=args.engine, dtype=args.dtype)
    counting = Counting(judge)
    rows = load_rows(Path(args.data), args.rows)
    every = judge_scorers(counting, rows)
    table = []
    for name, scorers in (("3 scorers", [s for s in every if s.name in THREE]), ("12 scorers", every[:12])):
        items, target = items_of(rows)
        best: dict[str, Any] | None = None
        for _ in range(args.repeats):
            counting.calls = counting.prompts = 0
            start = time.perf_counter()
            result = run_evals(items, scorers, target, batch_size=args.batch_size)
            seconds = time.perf_counter() - start
            figures = {"code": args.label, "engine": args.engine, "run": f"{name} ({len(scorers)}) x {len(rows)} items",
                       "judge calls": counting.calls, "prompts": counting.prompts, "seconds": round(seconds, 3),
                       "rows/s": round(len(rows) / seconds, 2),
                       "scored": sum(s.scored for s in result.scorer_summaries.values())}
            if best is None or figures["seconds"] < best["seconds"]:
                best = figures
        assert best is not None
        table.append(best)
        print(markdown_table(table[-1:]), flush=True)
    print()
    print(markdown_table(table))
    if args.json:
        write_json(args.json, table)


if __name__ == "__main__":
    main()
