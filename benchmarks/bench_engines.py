"""The two engines side by side: the same model, rows, scorers and threads through the
transformers engine and the vLLM engine, one process each, then a comparison.

1. ``run`` scores built-in benchmark rows (each benchmark with its scorer, the whole pipeline)
   on one engine: one untimed warm-up pass over the first batch, then the timed pass. It
   writes each row's score, probability score and steps, and every judge call (prompt token
   ids, schema, budget, text): the file ``bench_llama.py replay --calls`` takes, so llama.cpp
   replays exactly these prompts.
2. ``compare`` prints one table: load seconds, rows/s, generated tokens, answers parsing,
   and each engine's agreement with the first file's (same score, same first-step text: the
   first step's prompts are the same on both engines; later prompts follow earlier answers).

Usage (run each alone, same threads):
    .venv/bin/python benchmarks/bench_engines.py run --engine transformers --model models/qwen2.5-coder-0.5b-instruct \\
        --limit 8 --out /tmp/tf.json
    .venv-vllm/bin/python benchmarks/bench_engines.py run --engine vllm --model models/qwen2.5-coder-0.5b-instruct \\
        --limit 8 --out /tmp/vllm.json
    .venv-llama/bin/python benchmarks/peers/bench_llama.py replay --gguf models/qwen2.5-coder-0.5b-instruct.gguf \\
        --calls /tmp/tf.json
    python benchmarks/bench_engines.py compare /tmp/tf.json /tmp/vllm.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

BENCHMARKS = "halueval_qa,begin,davidson"  # one per scorer: hallucination, faithfulness, toxicity


def run(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from measure import RecordingJudge, Stopwatch, replayable_calls

    os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    from localjudge.bench.data import load_benchmark, rows_to_runs, select_benchmarks
    from localjudge.engines import load_judge, set_threads
    from localjudge.evaluation import score_runs
    from localjudge.scorers import SCORERS

    set_threads(args.threads, args.engine)
    options: dict[str, Any] = {"max_rows": args.max_rows, "dtype": args.dtype}
    if args.engine == "vllm":
        options["enforce_eager"] = args.enforce_eager or None
    with Stopwatch() as loading:
        judge = load_judge(args.model, engine=args.engine, **options)
    seconds, rows, results, calls = 0.0, 0, [], []
    for bench in select_benchmarks(args.benchmarks.split(",")):
        dataset, labels = load_benchmark(bench, args.limit)
        runs = rows_to_runs(dataset, bench.columns)
        score_runs(runs[:2], [SCORERS[bench.scorer](judge)], batch_size=args.batch_size)  # warm-up
        recorder = RecordingJudge(judge)
        with Stopwatch() as watch:
            scored, _ = score_runs(runs, [SCORERS[bench.scorer](recorder)], batch_size=args.batch_size)
        for result in scored[bench.scorer]:
            first = result.preprocess_step_result if result.preprocess_step_result is not None \
                else result.analyze_step_result
            results.append({"benchmark": bench.name, "run_id": result.run_id, "score": result.score,
                            "prob_score": result.prob_score, "error": result.error,
                            "first_step": json.dumps(first, sort_keys=True)})
        calls += replayable_calls(judge, recorder.calls)
        seconds, rows = seconds + watch.seconds, rows + len(runs)
        print(f"{args.engine} {bench.name}: {len(runs)} rows in {watch.seconds:.1f} s", file=sys.stderr)
    Path(args.out).write_text(json.dumps({
        "engine": args.engine, "identity": judge.identity, "model": args.model, "load_seconds": loading.seconds,
        "seconds": seconds, "rows": rows, "batch_size": args.batch_size, "threads": args.threads,
        "results": results, "calls": calls}))
    print(f"wrote {args.out}: {rows} rows in {seconds:.1f} s ({rows / seconds:.3f} rows/s)", file=sys.stderr)


def compare(args: argparse.Namespace) -> None:
    runs = [json.loads(Path(p).read_text()) for p in args.files]
    base = {(r["benchmark"], r["run_id"]): r for r in runs[0]["results"]}
    print(f"## Engines side by side: {Path(runs[0]['model']).name}, {runs[0]['rows']} rows, batch "
          f"{runs[0]['batch_size']}, {runs[0]['threads']} threads\n")
    print("| engine | identity | load s | seconds | rows/s | vs first | generated tokens | answers parsing "
          "| scored | same score as first | same first-step answer as first |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for data in runs:
        mine = {(r["benchmark"], r["run_id"]): r for r in data["results"]}
        both = [k for k in mine if k in base]
        same = sum(mine[k]["score"] == base[k]["score"] for k in both)
        first = sum(mine[k]["first_step"] == base[k]["first_step"] for k in both)
        generations = [r for c in data["calls"] for r in c["rows"]]
        parsing = sum(_parses(r["ours"]) for r in generations)
        tokens = sum(r["ours_tokens"] for r in generations)
        scored = sum(r["score"] is not None for r in data["results"])
        rate = data["rows"] / data["seconds"]
        print(f"| {data['engine']} | `{data['identity']}` | {data['load_seconds']:.0f} | {data['seconds']:.1f} | "
              f"{rate:.3f} | {rate / (runs[0]['rows'] / runs[0]['seconds']):.2f}x | {tokens} | "
              f"{parsing}/{len(generations)} | {scored}/{len(data['results'])} | {same}/{len(both)} | "
              f"{first}/{len(both)} |")


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("--engine", choices=("transformers", "vllm"), required=True)
    one.add_argument("--model", required=True)
    one.add_argument("--benchmarks", default=BENCHMARKS)
    one.add_argument("--limit", type=int, default=8, help="rows per benchmark")
    one.add_argument("--batch-size", type=int, default=8)
    one.add_argument("--max-rows", type=int, default=None)
    one.add_argument("--threads", type=int, default=2)
    one.add_argument("--dtype", default="auto")
    one.add_argument("--enforce-eager", action="store_true", help="vllm: no torch.compile")
    one.add_argument("--out", required=True)
    one.set_defaults(func=run)
    both = sub.add_parser("compare")
    both.add_argument("files", nargs="+", help="the first file is the reference")
    both.set_defaults(func=compare)
    args = parser.parse_args()
    started = time.perf_counter()
    args.func(args)
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
