"""Batch-size invariance on a GPU in bf16: how many scores and verdicts change between batch 1
and batch N.

Builds a 7B-class architecture with random bf16 weights on CUDA (`random_model.py`, as
`gpu_speed.py` does), wraps it in `TransformersJudge(model, tokenizer, identity=...)`, scores
the same rows one at a time and in batches, and prints how many rows changed their score, their
step answers (claims, verdicts), or their reason, and the largest change of a probability score.
On CPU in float32 nothing changes (tested). On a GPU in bf16, padding changes matmul shapes and
accumulation order: probability scores move on almost every row (by rounding), so they are
reported as a largest difference, not counted; a changed score or verdict is what matters.

Usage: python benchmarks/gpu/gpu_invariance.py --config benchmarks/gpu/configs/<family>
           --tokenizer models/fixtures/<family> [--rows 32] [--batch-size 8] [--scorer toxicity]
           [--max-new-tokens 64]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/: measure.py
from measure import EXAMPLE_DATA, CappedJudge, load_rows, set_offline_env  # noqa: E402
from random_model import DEFAULT_CONFIG, build_model  # noqa: E402


def changes(alone: list[dict[str, Any]], batched: list[dict[str, Any]]) -> dict[str, Any]:
    """How the batched results differ from the one-by-one ones."""
    pairs = list(zip(alone, batched, strict=True))
    probs = [abs(a["prob_score"] - b["prob_score"]) for a, b in pairs
             if a.get("prob_score") is not None and b.get("prob_score") is not None]
    return {
        "rows": len(pairs),
        "scores_changed": sum(a["score"] != b["score"] for a, b in pairs),
        "steps_changed": sum((a["preprocess_step_result"], a["analyze_step_result"])
                             != (b["preprocess_step_result"], b["analyze_step_result"]) for a, b in pairs),
        "reasons_changed": sum(a["reason"] != b["reason"] for a, b in pairs),
        "max_prob_score_change": round(max(probs, default=0.0), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--data", default=str(EXAMPLE_DATA))
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--scorer", default="toxicity")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    set_offline_env()  # before torch is imported

    from transformers import AutoTokenizer

    from localjudge.engines.transformers.judge import TransformersJudge
    from localjudge.scorers import SCORERS

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer, local_files_only=True)
    model = build_model(Path(args.config), tokenizer, seed=0)
    judge = CappedJudge(TransformersJudge(model, tokenizer, identity="invariance"), args.max_new_tokens)
    scorer = SCORERS[args.scorer](judge)
    rows = load_rows(Path(args.data), args.rows)
    alone = [scorer.run(row).to_dict() for row in rows]
    batched = []
    for start in range(0, len(rows), args.batch_size):
        batched += [r.to_dict() for r in scorer.run_batch(rows[start : start + args.batch_size])]
    print(json.dumps({"config": args.config, "batch_size": args.batch_size, **changes(alone, batched)}))


if __name__ == "__main__":
    main()
