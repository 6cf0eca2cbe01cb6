"""Measure the judge on this machine: load time, grammar compile cost per backend, and per
scorer items/s and generated tokens/s at several batch sizes, with peak memory.

Usage: python benchmarks/bench_judge.py [--model models/smollm2-135m-instruct] [--batch-sizes 1,8]
       [--rows 8] [--backends llguidance,outlines_core] [--threads N] [--json out.json]
Prints a markdown table. Run it alone: another busy process on 2 cores skews every figure.

The compile cost is the judge's own recipe, rebuilt here from public pieces: llguidance's
grammar for the schema (compact JSON, as `TransformersJudge` asks for it), a matcher on the
model's vocabulary index and its first mask; or Outlines' JSON-schema processor for another
backend. The vocabulary index and Outlines' model wrapper are built once, before the timing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from measure import (
    DEFAULT_MODEL,
    EXAMPLE_DATA,
    RecordingJudge,
    Stopwatch,
    load_rows,
    markdown_table,
    peak_rss_mb,
    set_offline_env,
    set_torch_threads,
    write_json,
)

# The judge's grammar options (see `TransformersJudge`): no free whitespace, oneOf read as anyOf.
GUIDANCE = {"whitespace_flexible": False, "coerce_one_of": True}


def compile_costs(judge: Any, backends: list[str]) -> list[dict[str, Any]]:
    """Time to turn each scorer schema into a constraint, per grammar backend (cold)."""
    from localjudge.scorers.judged.claims import Claims
    from localjudge.scorers.judged.faithfulness import FaithfulnessVerdict, FaithfulnessVerdicts
    from localjudge.scorers.judged.hallucination import HallucinationVerdict, HallucinationVerdicts
    from localjudge.scorers.judged.toxicity import ToxicityVerdicts
    from localjudge.scoring import Reason, exactly

    schemas = {
        "Claims": Claims,
        "HallucinationVerdicts x5": exactly(HallucinationVerdict, 5, HallucinationVerdicts),
        "FaithfulnessVerdicts x5": exactly(FaithfulnessVerdict, 5, FaithfulnessVerdicts),
        "ToxicityVerdicts": ToxicityVerdicts,
        "Reason": Reason,
    }
    rows = []
    for backend in backends:
        target = backend_target(judge, backend)
        for name, schema in schemas.items():
            before = peak_rss_mb()
            with Stopwatch() as watch:
                if backend == "llguidance":
                    import llguidance

                    spec = {**schema.model_json_schema(), "x-guidance": GUIDANCE}
                    grammar = llguidance.LLMatcher.grammar_from_json_schema(json.dumps(spec))
                    matcher = llguidance.LLMatcher(target, grammar)
                    matcher.compute_bitmask()  # the first mask builds the lexer
                else:
                    from outlines.backends import get_json_schema_logits_processor

                    get_json_schema_logits_processor(backend, target, json.dumps(schema.model_json_schema()))
            rows.append({"backend": backend, "schema": name, "compile_s": round(watch.seconds, 3),
                         "peak_rss_growth_mb": round(peak_rss_mb() - before, 1)})
    return rows


def backend_target(judge: Any, backend: str) -> Any:
    """What a backend compiles against: llguidance's index of the vocabulary (the model's rows
    or the tokenizer's, whichever is larger, as the judge builds it), else Outlines' model."""
    if backend == "llguidance":
        import llguidance.hf

        n_vocab = max(judge.model.config.get_text_config(decoder=True).vocab_size, len(judge.tokenizer))
        return llguidance.hf.from_tokenizer(judge.tokenizer, n_vocab=n_vocab)
    import outlines

    return outlines.from_transformers(judge.model, judge.tokenizer)


def scorer_speed(judge: Any, rows: list[dict[str, Any]], batch_sizes: list[int]) -> list[dict[str, Any]]:
    from localjudge.evaluation import score_runs
    from localjudge.scorers import SCORERS

    out = []
    for name, factory in SCORERS.items():
        scorer = factory(judge)
        score_runs(rows[:1], [scorer], batch_size=1)  # warm-up: grammar compile, first-call costs
        for batch_size in batch_sizes:
            recorder = RecordingJudge(judge)
            with Stopwatch() as watch:
                _, summary = score_runs(rows, [scorer.with_judge(recorder)], batch_size=batch_size)
            seconds = watch.seconds
            s = summary[name]
            out.append({
                "scorer": name, "batch_size": batch_size, "rows": len(rows), "seconds": round(seconds, 2),
                "rows_per_s": round(len(rows) / seconds, 3), "tokens": s.new_tokens,
                "tokens_per_s": round(s.new_tokens / seconds, 1), "judge_calls": len(recorder.calls),
                "scored": s.scored, "peak_rss_mb": round(peak_rss_mb()),
            })
            print(out[-1], file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--data", default=str(EXAMPLE_DATA))
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--batch-sizes", default="1,8")
    parser.add_argument("--backends", default="llguidance,outlines_core")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--skip-compile", action="store_true")
    parser.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = parser.parse_args()
    set_offline_env()  # before torch is imported

    with Stopwatch() as loading:
        from localjudge.engines.transformers import TransformersJudge

        set_torch_threads(args.threads)
        judge = TransformersJudge.load(args.model)
    load_s = loading.seconds
    import torch

    print(f"model {args.model}: loaded in {load_s:.1f} s (imports included), dtype {judge.model.dtype}, "
          f"{torch.get_num_threads()} threads, peak RSS {peak_rss_mb():.0f} MB")
    compile_rows = [] if args.skip_compile else compile_costs(judge, args.backends.split(","))
    if compile_rows:
        print("\nGrammar compile cost (cold, per schema):\n" + markdown_table(compile_rows))
    speed = scorer_speed(judge, load_rows(Path(args.data), args.rows), [int(b) for b in args.batch_sizes.split(",")])
    print("\nScorer speed:\n" + markdown_table(speed))
    print(f"\npeak RSS {peak_rss_mb():.0f} MB")
    if args.json:
        write_json(args.json, {"load_s": load_s, "compile": compile_rows, "speed": speed})


if __name__ == "__main__":
    main()
