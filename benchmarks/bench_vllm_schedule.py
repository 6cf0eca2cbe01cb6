"""The vLLM engine's fixed schedule against vLLM's own: rows/s, steps and whether runs repeat.

Each mode in a process of its own (vLLM reads its layout when the engine is built): the engine
loaded once, then the same rows scored `--runs` times (the prefix cache emptied before each, as a
new process would find it). Per run: seconds, rows/s, the number of sampling steps and the rows
in the first steps, counted by a logits processor inside vLLM's engine (`StepCounter`, loaded by
name, so it runs in vLLM's engine-core process in either layout); then whether every run's
schedule and every score, probability, reason and step equal the first run's.

    .venv-vllm/bin/python benchmarks/bench_vllm_schedule.py                # both modes, 3 runs each
    .venv-vllm/bin/python benchmarks/bench_vllm_schedule.py --model DIR --data FILE --runs 3

Run it alone: another busy process on 2 cores skews every figure. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCORERS = ("hallucination", "faithfulness", "toxicity")
COUNTER = "bench_vllm_schedule:StepCounter"  # this file, importable in vLLM's processes (PYTHONPATH)
STEPS_FILE = "LOCALJUDGE_BENCH_STEPS"  # the file naming the file each sampling step is appended to


def _step_counter() -> type:
    """A vLLM logits processor that appends each sampling step's row count to a file (named by the
    file that STEPS_FILE names, so that the driver can switch it between runs in either layout)."""
    from vllm.v1.sample.logits_processor import LogitsProcessor

    class Counter(LogitsProcessor):
        def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
            self.control = Path(os.environ[STEPS_FILE])

        def is_argmax_invariant(self) -> bool:
            return False  # else vLLM skips it for greedy rows

        def update_state(self, batch_update: Any) -> None:
            pass

        def apply(self, logits: Any) -> Any:
            with open(self.control.read_text(encoding="utf-8").strip(), "a", encoding="utf-8") as steps:
                steps.write(f"{logits.shape[0]}\n")
            return logits

    return Counter


def __getattr__(name: str) -> Any:  # `StepCounter` built on first use: vLLM is imported only in .venv-vllm
    if name == "StepCounter":
        return _step_counter()
    raise AttributeError(name)


def one_mode(model: str, data: str, runs: int, fixed: bool, work: Path) -> dict[str, Any]:
    """Load the engine in this process and score the rows `runs` times."""
    sys.path.insert(0, str(ROOT))
    os.environ.pop("TORCHDYNAMO_DISABLE", None)
    os.environ.setdefault("VLLM_USE_AOT_COMPILE", "0")  # vLLM 0.32's CPU build: its compile cache works then
    control = work / "steps-file"
    control.write_text(str(work / "load.steps"), encoding="utf-8")
    os.environ[STEPS_FILE] = str(control)
    import vllm

    from localjudge.engines.vllm import GUARD, VLLMJudge
    from localjudge.evaluation import evaluate, read_table
    from localjudge.scorers import build_scorer

    build = vllm.LLM

    def counted(**kwargs: Any) -> Any:  # the guard as VLLMJudge.load gives it, and the counter
        kwargs["logits_processors"] = [GUARD, COUNTER]
        return build(**kwargs)

    vllm.LLM = counted  # type: ignore[misc]
    started = time.perf_counter()
    judge = VLLMJudge.load(model, max_context=2048, fixed_schedule=fixed)
    load = time.perf_counter() - started
    rows = read_table(data)
    results, out = [], []
    for run in range(runs):
        judge.llm.reset_prefix_cache()
        steps_path = work / f"{'fixed' if fixed else 'own'}-{run}.steps"
        control.write_text(str(steps_path), encoding="utf-8")
        started = time.perf_counter()
        evaluation = evaluate(rows, [build_scorer(name, judge) for name in SCORERS], batch_size=8)
        seconds = time.perf_counter() - started
        data_set = evaluation.dataset
        fields = {k: data_set[k] for k in data_set.column_names
                  if k.endswith(("_score", "_prob_score", "_reason", "_error", "_steps"))}
        steps = [int(n) for n in steps_path.read_text(encoding="utf-8").split()]
        results.append(fields)
        out.append({"seconds": seconds, "rows_per_s": len(rows) / seconds, "steps": len(steps),
                    "first_steps": steps[:3], "schedule_as_first": steps == out[0]["schedule"] if out else True,
                    "schedule": steps})
    judge.close()
    for run, record in enumerate(out):
        record["results_as_first"] = results[run] == results[0]
        record.pop("schedule")
    return {"mode": "fixed_schedule" if fixed else "vLLM's own", "load_s": load, "rows": len(rows), "runs": out}


def yes(value: bool) -> str:
    return "yes" if value else "no"


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "smollm2-135m-instruct"))
    parser.add_argument("--data", default=str(ROOT / "examples" / "example.jsonl"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mode", choices=("fixed", "own"), help=argparse.SUPPRESS)  # one mode, in a child
    args = parser.parse_args()
    if args.mode:
        with tempfile.TemporaryDirectory() as work:
            print(json.dumps(one_mode(args.model, args.data, args.runs, args.mode == "fixed", Path(work))))
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), str(ROOT)]))
    reports = []
    for mode in ("own", "fixed"):
        done = subprocess.run([sys.executable, __file__, "--mode", mode, "--model", args.model, "--data", args.data,
                               "--runs", str(args.runs)], capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            sys.exit(f"the {mode} run failed:\n{done.stderr[-3000:]}")
        reports.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{cpu_name()}; {reports[0]['rows']} rows x {len(SCORERS)} scorers, "
          f"batch 8, {args.runs} runs per mode, prefix cache emptied before each\n")
    print("| mode | load s | run | s | rows/s | sampling steps | rows in the first 3 steps | same schedule as run 1 "
          "| same results as run 1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for report in reports:
        for run, record in enumerate(report["runs"], 1):
            print(f"| {report['mode']} | {report['load_s']:.0f} | {run} | {record['seconds']:.1f} | "
                  f"{record['rows_per_s']:.3f} | {record['steps']} | {record['first_steps']} | "
                  f"{yes(record['schedule_as_first'])} | {yes(record['results_as_first'])} |")
    own, fixed = (sum(r["rows_per_s"] for r in rep["runs"]) / len(rep["runs"]) for rep in reports)
    print(f"\nfixed_schedule / vLLM's own, mean rows/s: {fixed / own:.2f}x")


if __name__ == "__main__":
    main()
