"""Split the shipped HaluEval rows by the claim scorers' route, for a check that route and label
are not confused.

An output of at most `WORDS_PER_CLAIM` words is one claim made by rule; a longer one goes
through the claims step. On HaluEval, correct answers are mostly terse and hallucinated ones
mostly whole sentences, so a pipeline AUC over mixed rows can come from the route alone. This
writes two balanced files, each on one route only: every terse hallucinated row with as many
terse correct ones (the first, in file order), and every longer correct row with as many longer
hallucinated ones. Bench each with `--data`:

    python scripts/halueval_strata.py --out-dir strata
    localjudge bench --model M --data strata/halueval_terse.jsonl --scorer hallucination \\
        --label-col label --positive 1 --name halueval_terse [--mode direct]

Prints how many rows of each label each file holds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from localjudge.bench.data import BENCHMARKS
from localjudge.scorers.claims import WORDS_PER_CLAIM

FIELDS = ("id", "input", "output", "context", "label")


def balanced(rows: list[dict[str, Any]], scarce: list[dict[str, Any]], plenty: list[dict[str, Any]]) -> list[Any]:
    """All of `scarce`, the first as many of `plenty`, back in file order."""
    chosen = {id(r) for r in scarce + plenty[: len(scarce)]}
    return [{k: r[k] for k in FIELDS} for r in rows if id(r) in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", default="strata")
    args = parser.parse_args()
    path = BENCHMARKS["halueval_qa"].path
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def pick(terse: bool, label: int) -> list[dict[str, Any]]:
        return [r for r in rows if (len(r["output"].split()) <= WORDS_PER_CLAIM) == terse and r["label"] == label]

    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, part in (("terse", balanced(rows, pick(True, 1), pick(True, 0))),
                       ("long", balanced(rows, pick(False, 0), pick(False, 1)))):
        target = out / f"halueval_{name}.jsonl"
        target.write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
        print(f"{target}: {sum(r['label'] for r in part)} hallucinated, {sum(1 - r['label'] for r in part)} correct")


if __name__ == "__main__":
    main()
