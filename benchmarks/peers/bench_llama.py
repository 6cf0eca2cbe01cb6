"""localjudge against llama.cpp (llama-cpp-python) on the same GGUF weights and prompts.

Two steps, two environments (llama-cpp-python is never a dependency of localjudge):

1. ``record`` (localjudge's venv): score built-in benchmark rows with localjudge (own decode
   loop, batched as the engine batches; one untimed warm-up pass first) and write every judge
   call: each row's prompt token ids, its JSON schema, the token budget, our text; and our
   seconds for the whole timed pass.
2. ``replay`` (.venv-llama, built by benchmarks/peers/setup_llama_peer.sh): llama.cpp generates every
   recorded prompt from the GGUF file, greedy (top_k 1, temperature 0), constrained by its own
   JSON-schema grammar (`LlamaGrammar.from_json_schema`), one prompt at a time (the binding has
   no batch API; it reuses the KV cache of the prefix the prompt shares with the previous one).
   It prints both sides: seconds, rows/s, outputs that parse as JSON, outputs equal to ours.

The GGUF must be the file localjudge's model was converted from (Q4_K_M for the Qwen ladder
models): llama.cpp computes on the quantized blocks, localjudge on the dequantized weights, so
texts can differ; both are greedy.

Usage:
    .venv/bin/python benchmarks/peers/bench_llama.py record --model models/qwen2.5-coder-0.5b-instruct \\
        --benchmarks davidson,halueval_qa --limit 8 --out /tmp/calls.json
    .venv-llama/bin/python benchmarks/peers/bench_llama.py replay --gguf FILE.gguf --calls /tmp/calls.json

Run each alone, with the same thread count (--threads, default 2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def record(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/: measure.py
    from measure import RecordingJudge, Stopwatch, replayable_calls, set_offline_env, set_torch_threads

    set_offline_env()
    from localjudge.bench.data import load_benchmark, rows_to_runs, select_benchmarks
    from localjudge.engines.transformers.judge import TransformersJudge
    from localjudge.evaluation.dataset_runs import score_runs
    from localjudge.scorers import SCORERS

    set_torch_threads(args.threads)
    judge = TransformersJudge.load(args.model)
    seconds, rows = 0.0, 0
    calls: list[dict[str, Any]] = []
    for bench in select_benchmarks(args.benchmarks.split(",") if args.benchmarks else None):
        dataset, _ = load_benchmark(bench, args.limit)
        runs = rows_to_runs(dataset, bench.columns)
        score_runs(runs[:2], [SCORERS[bench.scorer](judge)], batch_size=args.batch_size)  # warm-up
        recorder = RecordingJudge(judge)
        with Stopwatch() as watch:
            score_runs(runs, [SCORERS[bench.scorer](recorder)], batch_size=args.batch_size)
        calls += replayable_calls(judge, recorder.calls)
        seconds, rows = seconds + watch.seconds, rows + len(runs)
        print(f"{bench.name}: {len(runs)} rows in {watch.seconds:.1f} s", file=sys.stderr)
    Path(args.out).write_text(json.dumps({"model": args.model, "seconds": seconds, "rows": rows,
                                          "batch_size": args.batch_size, "threads": args.threads,
                                          "calls": calls}))
    print(f"recorded {sum(len(c['rows']) for c in calls)} generations in {len(calls)} calls to {args.out}")


def replay(args: argparse.Namespace) -> None:
    from llama_cpp import Llama, LlamaGrammar

    data = json.loads(Path(args.calls).read_text())
    longest = max(len(r["prompt_ids"]) + c["max_new_tokens"] for c in data["calls"] for r in c["rows"])
    llm = Llama(model_path=args.gguf, n_ctx=max(2048, longest + 16), n_threads=args.threads,
                n_threads_batch=args.threads, verbose=False)
    grammars: dict[str, Any] = {}
    first = data["calls"][0]["rows"][0]
    llm.create_completion(prompt=first["prompt_ids"], max_tokens=1, temperature=0.0, top_k=1)  # warm-up
    done = parsed = equal = tokens = 0
    start = time.perf_counter()
    for call in data["calls"]:
        for row in call["rows"]:
            key = json.dumps(row["schema"], sort_keys=True)
            if key not in grammars:
                grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
            out = llm.create_completion(prompt=row["prompt_ids"], max_tokens=call["max_new_tokens"],
                                        temperature=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0,
                                        grammar=grammars[key])
            text = out["choices"][0]["text"]
            tokens += out["usage"]["completion_tokens"]
            done += 1
            try:
                json.loads(text)
                parsed += 1
            except json.JSONDecodeError:
                pass
            equal += text == row["ours"]
    seconds = time.perf_counter() - start
    ours_tokens = sum(r["ours_tokens"] for c in data["calls"] for r in c["rows"])
    print(f"## localjudge vs llama.cpp on {Path(args.gguf).name}, {data['rows']} benchmark rows, "
          f"{done} generations, {args.threads} threads\n")
    print("| system | seconds | rows/s | generations/s | generated tokens | outputs parsing as JSON |")
    print("|---|---|---|---|---|---|")
    print(f"| localjudge (own loop, batch {data['batch_size']}, whole pipeline) | {data['seconds']:.1f} | "
          f"{data['rows'] / data['seconds']:.3f} | {done / data['seconds']:.2f} | {ours_tokens} | 100% (schema) |")
    print(f"| llama.cpp (one prompt at a time, its JSON grammar; generation only) | {seconds:.1f} | "
          f"{data['rows'] / seconds:.3f} | {done / seconds:.2f} | {tokens} | {100 * parsed / max(done, 1):.0f}% |")
    print(f"\nllama.cpp takes {seconds / data['seconds']:.2f}x localjudge's time; {equal} of {done} outputs are "
          f"the same text as localjudge's (quantized vs dequantized arithmetic).")
    print("llama.cpp's time is generation only: the pipeline's rendering, parsing and scoring are "
          "localjudge's, and counted on its side.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--model", required=True)
    rec.add_argument("--benchmarks", default=None)
    rec.add_argument("--limit", type=int, default=8)
    rec.add_argument("--batch-size", type=int, default=8)
    rec.add_argument("--threads", type=int, default=2)
    rec.add_argument("--out", required=True)
    rep = sub.add_parser("replay")
    rep.add_argument("--gguf", required=True)
    rep.add_argument("--calls", required=True)
    rep.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    record(args) if args.command == "record" else replay(args)


if __name__ == "__main__":
    main()
