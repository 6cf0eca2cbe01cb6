"""Where the model tier's shared run spends its time: every built-in scorer that asks a judge, in
each of its modes, on the shared run's rows (tests/model/conftest.py), one `evaluate` per
scorer-mode as the run makes them, on the default model in float32.

Per scorer-mode: seconds, judge calls, tokens generated, and the forward passes split by
`measure.ForwardTimer` into prefill (prompt tokens), draft windows and one-token decode steps,
with the milliseconds per decode step. A judge call costs about its longest row's steps: a step
costs nearly the same at batch 1 and batch 6 on a CPU (the weights' reads, not the rows), so
this shows which scorer-modes would gain from fewer steps and which from fewer prompt tokens.
Run it alone, with nothing else busy:

    .venv/bin/python benchmarks/bench_shared_run.py --threads 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from measure import DEFAULT_MODEL, ForwardTimer, markdown_table, set_offline_env, set_torch_threads, write_json  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="local model folder (default: the default model)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1, as CI's workers)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures here")
    args = parser.parse_args()
    set_offline_env()
    set_torch_threads(args.threads)

    from localjudge import Columns, evaluate
    from localjudge.engines.transformers import TransformersJudge
    from localjudge.scorers import build_scorer
    from tests.model.conftest import BATCH_SIZE, ROWS
    from tests.scorer_options import JUDGED_MODES, OPTIONS

    judge = TransformersJudge.load(Path(args.model), dtype="float32")
    table: list[dict[str, Any]] = []
    began = time.perf_counter()
    for name, mode in JUDGED_MODES:
        scorer = build_scorer(name, judge, mode=mode, options=OPTIONS.get(name))
        before = (judge.decode_stats.calls, judge.decode_stats.tokens)
        with ForwardTimer(judge.model) as timer:
            start = time.perf_counter()
            evaluate(ROWS, [scorer], batch_size=BATCH_SIZE, columns=Columns(run_id="run_id"))
            seconds = time.perf_counter() - start
        steps = timer.decode
        table.append({
            "scorer-mode": f"{name}/{mode}", "seconds": round(seconds, 1),
            "judge calls": judge.decode_stats.calls - before[0], "tokens": judge.decode_stats.tokens - before[1],
            "prefill s": round(timer.prefill.seconds, 1), "prompt tokens": timer.prefill.items,
            "window s": round(timer.window.seconds, 1), "decode steps": steps.calls,
            "decode s": round(steps.seconds, 1),
            "ms/step": round(1000 * steps.seconds / steps.calls) if steps.calls else None,
        })
    total = time.perf_counter() - began
    table.sort(key=lambda row: -row["seconds"])
    print(markdown_table(table))
    all_steps = sum(row["decode steps"] for row in table)
    step_seconds = sum(row["decode s"] for row in table)
    print(f"\n{len(ROWS)} rows, {len(table)} scorer-modes, {args.threads} thread(s): {total:.1f} s in all; "
          f"prefill {sum(row['prefill s'] for row in table):.1f} s, draft windows "
          f"{sum(row['window s'] for row in table):.1f} s, {all_steps} decode steps {step_seconds:.1f} s "
          f"({1000 * step_seconds / max(all_steps, 1):.0f} ms a step)")
    if args.json:
        write_json(args.json, {"threads": args.threads, "rows": len(ROWS), "seconds": total, "table": table})


if __name__ == "__main__":
    main()
