"""Batch-size invariance on a GPU in bf16: how many results change between batch 1 and batch N.

Builds a 7B-class architecture with random bf16 weights on CUDA (`scripts/random_model.py`, as
`gpu_speed.py` does), wraps it in `TransformersJudge(model, tokenizer, identity=...)`, scores
the same rows one at a time and in batches, and prints the share of rows whose result (score,
steps, reason) differs. On CPU in float32 the answer is none (tested); on a GPU in bf16 padding
changes matmul shapes and accumulation order, so some rows may differ: this measures how many.

Usage: python scripts/gpu_invariance.py --config scripts/gpu/<family> --tokenizer models/fixtures/<family>
           [--rows 32] [--batch-size 8] [--scorer toxicity] [--max-new-tokens 64]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from measure import EXAMPLE_DATA, CappedJudge, load_rows, set_offline_env
from random_model import DEFAULT_CONFIG, build_model

from localjudge.scorers import SCORERS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--data", default=str(EXAMPLE_DATA))
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--scorer", default="toxicity", choices=tuple(SCORERS))
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    set_offline_env()  # before torch is imported

    from transformers import AutoTokenizer

    from localjudge.transformers_judge import TransformersJudge

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer, local_files_only=True)
    model = build_model(Path(args.config), tokenizer, seed=0)
    judge = CappedJudge(TransformersJudge(model, tokenizer, identity="invariance"), args.max_new_tokens)
    scorer = SCORERS[args.scorer](judge)
    rows = load_rows(Path(args.data), args.rows)
    alone = [scorer.run(row).to_dict() for row in rows]
    batched = []
    for start in range(0, len(rows), args.batch_size):
        batched += [r.to_dict() for r in scorer.run_batch(rows[start : start + args.batch_size])]
    changed = sum(a != b for a, b in zip(alone, batched, strict=True))
    scores = sum(a["score"] != b["score"] for a, b in zip(alone, batched, strict=True))
    print(json.dumps({"config": args.config, "rows": len(rows), "batch_size": args.batch_size,
                      "results_changed": changed, "scores_changed": scores,
                      "share_changed": round(changed / len(rows), 3)}))


if __name__ == "__main__":
    main()
