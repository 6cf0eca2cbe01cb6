"""localjudge's own decode loop against `model.generate`, side by side in one process.

On one loaded model, for each built-in benchmark (its rows, its scorer), both decoders score
the same rows: `--decoder generate` (transformers' generate with the row-wise grammar
processor) and `--decoder loop` (the default: finished rows leave, forced tokens drafted). Each
decoder's judge first makes one untimed pass over the benchmark's first 2 rows (grammars
compiled, shared-prefix caches built), then the timed pass; decoders alternate per benchmark.
With `--refill N`, a third judge runs the loop with continuous batching: the engine hands it N
rows a call (`--batch-size N`) and it keeps `--batch-size` rows in flight (`max_rows`), each
finished row's place taken by a waiting one; the other two run at `--batch-size`.

Figures per benchmark and decoder: seconds, rows/s, generated tokens/s, forward passes, rows
carried by those passes (row-steps), drafted and accepted forced tokens; then the loop's
speed-up (rows/s ratio) and whether every judge output was the same text. With `--profile`,
where the loop's time goes in the timed pass: prefill forwards, one-token decode forwards,
draft-window forwards, grammar work (masks, verification, feeding, drafts), the rest of the
judge, and the engine outside the judge.

Usage:
    .venv/bin/python benchmarks/bench_decode.py [--model DIR] [--benchmarks begin,halueval_qa,...]
        [--limit 8] [--batch-size 8] [--refill 32] [--threads N] [--profile] [--json OUT.json]

Run it alone: on 2 cores another busy process skews every figure. State results as ratios
measured in one run: absolute times differ up to 2x between machines of one kind.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from measure import (
    DEFAULT_MODEL,
    ForwardTimer,
    RecordingJudge,
    Stopwatch,
    markdown_table,
    set_offline_env,
    set_torch_threads,
    timed_processor,
    write_json,
)


def one_pass(judge: Any, bench: Any, runs: list[dict[str, Any]], batch_size: int, profile: bool,
             label: str) -> dict[str, Any]:
    """Score `runs` with the benchmark's scorer on `judge` (timed); its figures."""
    from localjudge.engines.transformers.decode import DecodeStats
    from localjudge.evaluation import score_runs
    from localjudge.scorers import SCORERS

    recorder = RecordingJudge(judge)
    scorer = SCORERS[bench.scorer](recorder)
    before = DecodeStats()
    before.add(judge.decode_stats)
    forwards = ForwardTimer(judge.model)
    with forwards, timed_processor(judge.model.device) as grammar, Stopwatch() as watch:
        _, summary = score_runs(runs, [scorer], batch_size=batch_size)
    stats = {k: v - getattr(before, k) for k, v in vars(judge.decode_stats).items()}
    s = summary[bench.scorer]
    passes = forwards.prefill.calls + forwards.decode.calls + forwards.window.calls
    lockstep = sum(c.longest * len(c.prompts) for c in recorder.calls)  # every row to its call's end
    figures: dict[str, Any] = {
        "benchmark": bench.name, "decoder": label, "rows": len(runs), "scored": s.scored,
        "seconds": round(watch.seconds, 2), "rows/s": round(len(runs) / watch.seconds, 4),
        "gen tokens": s.new_tokens, "gen tokens/s": round(s.new_tokens / watch.seconds, 1),
        "forward passes": passes,
        "row-steps": stats["row_steps"] if judge.decoder == "loop" else lockstep,
        "drafted": stats["drafted"], "accepted": stats["accepted"],
        "_texts": [(g.text, g.finished) for c in recorder.calls for g in c.generations],
    }
    if profile:
        judge_s = sum(c.seconds for c in recorder.calls)
        grammar_s = grammar["setup"].seconds + grammar["steps"].seconds
        model_s = forwards.prefill.seconds + forwards.decode.seconds + forwards.window.seconds
        figures["_profile"] = {
            "benchmark": bench.name, "decoder": label, "total s": round(watch.seconds, 2),
            "prefill s": round(forwards.prefill.seconds, 2), "prefill passes": forwards.prefill.calls,
            "decode s": round(forwards.decode.seconds, 2), "decode passes": forwards.decode.calls,
            "ms/decode pass": round(1000 * forwards.decode.seconds / max(forwards.decode.calls, 1), 1),
            "window s": round(forwards.window.seconds, 2), "window passes": forwards.window.calls,
            "grammar s": round(grammar_s, 2),
            "rest of judge s": round(judge_s - model_s - grammar_s, 2),
            "engine s": round(watch.seconds - judge_s, 2),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--benchmarks", default=None, help="comma-separated built-in benchmarks (default: all)")
    parser.add_argument("--limit", type=int, default=8, help="rows per benchmark (its first N; default 8)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--refill", type=int, default=None, metavar="N",
                        help="also the loop with N rows a call, --batch-size of them in flight")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device-map", default=None)
    parser.add_argument("--profile", action="store_true", help="also show where the time goes")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    set_offline_env()

    from localjudge.bench.data import load_benchmark, rows_to_runs, select_benchmarks
    from localjudge.engines.transformers import TransformersJudge

    set_torch_threads(args.threads)
    benches = select_benchmarks(args.benchmarks.split(",") if args.benchmarks else None)
    with Stopwatch() as loading:
        loop = TransformersJudge.load(args.model, device_map=args.device_map)
    fallback = TransformersJudge(loop.model, loop.tokenizer, identity=Path(args.model).name, decoder="generate")
    judges: list[tuple[str, Any, int]] = [("generate", fallback, args.batch_size), ("loop", loop, args.batch_size)]
    if args.refill:
        refill = TransformersJudge(loop.model, loop.tokenizer, identity=Path(args.model).name,
                                   max_rows=args.batch_size)
        judges.append(("loop+refill", refill, args.refill))
    print(f"loaded {args.model} in {loading.seconds:.1f} s; batch {args.batch_size}; limit {args.limit}"
          + (f"; refill: {args.refill} rows a call" if args.refill else ""), file=sys.stderr)
    if loop.decoder != "loop":
        raise SystemExit(f"{args.model}: not plain attention, the judge decodes with generate only")

    table, profiles, same = [], [], []
    for i, bench in enumerate(benches):
        dataset, _ = load_benchmark(bench, args.limit)
        runs = rows_to_runs(dataset, bench.columns)
        order = judges if i % 2 == 0 else judges[::-1]
        done: dict[str, dict[str, Any]] = {}
        for label, judge, batch_size in order:
            one_pass(judge, bench, runs[:2], batch_size, profile=False, label=label)  # warm-up: grammars, caches
            done[label] = one_pass(judge, bench, runs, batch_size, args.profile, label)
            print({k: v for k, v in done[label].items() if not k.startswith("_")}, file=sys.stderr)
        a = done["generate"]
        for label, _, _ in judges[1:]:
            b = done[label]
            # Texts in call order: the same calls and rows when the batch is the same; with
            # refill the calls are bigger, so compare the multisets of texts.
            equal = sum(x == y for x, y in zip(a["_texts"], b["_texts"], strict=False)) if label == "loop" else \
                sum((Counter(a["_texts"]) & Counter(b["_texts"])).values())
            same.append({"benchmark": bench.name, "decoder": label, "judge outputs": len(a["_texts"]),
                         "identical texts": equal if len(a["_texts"]) == len(b["_texts"])
                         else f"{equal} (counts differ)",
                         "rows/s vs generate": f"{b['rows/s'] / a['rows/s']:.2f}x",
                         "forward passes saved": f"{1 - b['forward passes'] / a['forward passes']:.0%}",
                         "row-steps saved": f"{1 - b['row-steps'] / a['row-steps']:.0%}"})
        for label, _, _ in judges:
            table.append({k: v for k, v in done[label].items() if not k.startswith("_")})
            if args.profile:
                profiles.append(done[label]["_profile"])
    total = {label: sum(r["seconds"] for r in table if r["decoder"] == label) for label, _, _ in judges}
    rows = sum(r["rows"] for r in table if r["decoder"] == "loop")
    print(f"## Decoders on {Path(args.model).name}, batch {args.batch_size}, {args.limit} rows a benchmark"
          + (f"; loop+refill: {args.refill} rows a call, {args.batch_size} in flight" if args.refill else "") + "\n")
    print(markdown_table(table))
    print("\n" + markdown_table(same))
    for label, _, _ in judges[1:]:
        print(f"\nAll benchmarks: {rows} rows; generate {total['generate']:.1f} s, {label} {total[label]:.1f} s: "
              f"{label} takes {total[label] / total['generate']:.2f}x the time "
              f"({total['generate'] / total[label]:.2f}x the rows/s).")
    if profiles:
        print("\n## Where the time goes\n\n" + markdown_table(profiles))
        print("\nprefill: forwards over prompts (with refill, also the passes of joining rows); decode: "
              "one position a row; window: the loop's draft windows (2-17 positions); grammar: RowGrammars "
              "(masks, verification, feeding, drafts, setup); rest of judge: tokenizing, cache copies, "
              "stacking and compaction, detokenizing, the decode loop's own bookkeeping; engine: rendering, "
              "parsing, scoring outside the judge.")
    if args.json:
        write_json(args.json, {"table": table, "same": same, "profile": profiles, "model": args.model,
                               "limit": args.limit, "batch_size": args.batch_size, "refill": args.refill})


if __name__ == "__main__":
    main()
