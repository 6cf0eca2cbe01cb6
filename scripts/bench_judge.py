"""Measure the judge on this machine: load time, grammar compile cost per backend, and per
scorer items/s and generated tokens/s at several batch sizes, with peak memory.

Usage: python scripts/bench_judge.py [--model models/smollm2-135m-instruct] [--batch-sizes 1,8]
       [--rows 8] [--backends llguidance,outlines_core] [--json out.json]
Prints a markdown table. Run it alone: another busy process on 2 cores skews every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_rows(path: Path, n: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["output"]]  # empty outputs cost nothing: leave them out
    return [dict(rows[i % len(rows)], run_id=f"{i}") for i in range(n)]


def compile_costs(judge, backends: list[str]) -> list[dict]:
    """Time to turn each scorer schema into a constraint, per grammar backend (cold)."""
    from localjudge.schemas import exactly
    from localjudge.scorers.claims import Claims
    from localjudge.scorers.faithfulness import FaithfulnessVerdict, FaithfulnessVerdicts
    from localjudge.scorers.hallucination import HallucinationVerdict, HallucinationVerdicts
    from localjudge.scorers.toxicity import ToxicityVerdicts
    from localjudge.schemas import Reason

    schemas = {
        "Claims": Claims,
        "HallucinationVerdicts x5": exactly(HallucinationVerdict, 5, HallucinationVerdicts),
        "FaithfulnessVerdicts x5": exactly(FaithfulnessVerdict, 5, FaithfulnessVerdicts),
        "ToxicityVerdicts": ToxicityVerdicts,
        "Reason": Reason,
    }
    rows = []
    for backend in backends:
        for name, schema in schemas.items():
            before = peak_rss_mb()
            start = time.perf_counter()
            if backend == "llguidance":
                import llguidance

                judge._grammars.pop(schema, None)
                grammar, _ = judge._grammar(schema)
                matcher = llguidance.LLMatcher(judge._llg_tokenizer, grammar)
                matcher.compute_bitmask()  # the first mask builds the lexer
            else:
                from outlines.backends import get_json_schema_logits_processor

                get_json_schema_logits_processor(backend, judge.outlines_model, json.dumps(schema.model_json_schema()))
            rows.append({"backend": backend, "schema": name, "compile_s": round(time.perf_counter() - start, 3),
                         "peak_rss_growth_mb": round(peak_rss_mb() - before, 1)})
    return rows


def scorer_speed(judge, rows: list[dict], batch_sizes: list[int]) -> list[dict]:
    from localjudge.evaluate import score_runs
    from localjudge.scorers import SCORERS

    out = []
    for name, factory in SCORERS.items():
        scorer = factory(judge)
        score_runs(rows[:1], [scorer], batch_size=1)  # warm-up: grammar compile, first-call costs
        for batch_size in batch_sizes:
            counting = CountingJudge(judge)
            start = time.perf_counter()
            results, summary = score_runs(rows, [scorer.with_judge(counting)], batch_size=batch_size)
            seconds = time.perf_counter() - start
            s = summary[name]
            out.append({
                "scorer": name, "batch_size": batch_size, "rows": len(rows), "seconds": round(seconds, 2),
                "rows_per_s": round(len(rows) / seconds, 3), "tokens": s.new_tokens,
                "tokens_per_s": round(s.new_tokens / seconds, 1), "judge_calls": counting.calls,
                "scored": s.scored, "peak_rss_mb": round(peak_rss_mb()),
            })
            print(out[-1], file=sys.stderr)
    return out


class CountingJudge:
    """Wraps a judge and counts generate calls."""

    def __init__(self, judge) -> None:
        self.judge, self.calls = judge, 0

    @property
    def identity(self) -> str:
        return self.judge.identity

    def generate(self, prompts, schemas, *, max_new_tokens):
        self.calls += 1
        return self.judge.generate(prompts, schemas, max_new_tokens=max_new_tokens)


def table(rows: list[dict]) -> str:
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(str(r[h]) for h in head) + " |" for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(ROOT / "models" / "smollm2-135m-instruct"))
    parser.add_argument("--data", default=str(ROOT / "scripts" / "example.jsonl"))
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--batch-sizes", default="1,8")
    parser.add_argument("--backends", default="llguidance,outlines_core")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--skip-compile", action="store_true")
    parser.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = parser.parse_args()

    start = time.perf_counter()
    from localjudge.transformers_judge import TransformersJudge

    judge = TransformersJudge(args.model, threads=args.threads)
    load_s = time.perf_counter() - start
    import torch

    print(f"model {args.model}: loaded in {load_s:.1f} s (imports included), dtype {judge.model.dtype}, "
          f"{torch.get_num_threads()} threads, peak RSS {peak_rss_mb():.0f} MB")
    compile_rows = [] if args.skip_compile else compile_costs(judge, args.backends.split(","))
    if compile_rows:
        print("\nGrammar compile cost (cold, per schema):\n" + table(compile_rows))
    speed = scorer_speed(judge, load_rows(Path(args.data), args.rows), [int(b) for b in args.batch_sizes.split(",")])
    print("\nScorer speed:\n" + table(speed))
    print(f"\npeak RSS {peak_rss_mb():.0f} MB")
    if args.json:
        Path(args.json).write_text(json.dumps({"load_s": load_s, "compile": compile_rows, "speed": speed}, indent=2))


if __name__ == "__main__":
    main()
