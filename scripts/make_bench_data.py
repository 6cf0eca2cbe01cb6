"""Build the benchmark subsets shipped in `localjudge/bench/bench_data/` from the labeled source data.

Usage:
    python scripts/make_bench_data.py --source DATA [--out localjudge/bench/bench_data]

DATA holds the upstream files (each benchmark's README.md says which, and where from).

Every benchmark is a fixed-seed (seed 0), label-stratified subset: 100 positive and 100
negative rows, drawn without replacement from the eligible source rows kept in source order.
Rows are written interleaved (one positive and one negative per pair, the pair's order drawn
from the same generator), so the first 2k rows of a file hold exactly k of each label and
`--limit` keeps the balance. Each row: id, input, output, context (string, list of strings, or
null), ground_truth (in the benchmarks of ground-truth scorers), label (1 = the scorer's
positive class), source_label, group. The upstream LICENSE (and NOTICE) is copied next to
each file; the README.md beside it is written by hand.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEED = 0
PER_CLASS = 100
ROOT = Path(__file__).resolve().parent.parent
Row = dict[str, Any]


def read_csv(path: Path, delimiter: str = ",") -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter=delimiter))


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def interleave(positives: list[Row], negatives: list[Row], rng: random.Random) -> list[Row]:
    """Shuffle each class, then alternate them; each pair's order is a coin flip."""
    rng.shuffle(positives)
    rng.shuffle(negatives)
    rows: list[Row] = []
    for pos, neg in zip(positives, negatives, strict=False):  # the longer class's surplus is left out
        rows += [pos, neg] if rng.random() < 0.5 else [neg, pos]
    return rows


def begin(source: Path, rng: random.Random) -> list[Row]:
    """BEGIN dev (WoW): faithful (1) = "Fully attributable"; 0 = any other label."""
    rows = [
        {"id": f"begin-dev-{i}", "input": r["message"], "output": r["response"], "context": r["knowledge"],
         "label": int(r["begin_label"] == "Fully attributable"), "source_label": r["begin_label"],
         "group": r["model_name"]}
        for i, r in enumerate(read_csv(source / "begin" / "begin_dev_wow.tsv", delimiter="\t"))
    ]
    return stratified(rows, rng)


def halueval_qa(source: Path, rng: random.Random) -> list[Row]:
    """HaluEval QA (one-turn file): half the sampled questions keep the right answer (0),
    half the hallucinated answer (1); each question appears once."""
    items = read_json_lines(source / "halueval" / "qa_one-turn_data.json")
    chosen = rng.sample(range(len(items)), 2 * PER_CLASS)
    positives, negatives = [], []
    for rank, i in enumerate(chosen):
        item, hallucinated = items[i], rank < PER_CLASS
        key = "hallucinated_answer" if hallucinated else "right_answer"
        row = {"id": f"halueval-qa-{i}", "input": item["question"].strip(), "output": item[key].strip(),
               "context": item["knowledge"], "label": int(hallucinated), "source_label": key, "group": None}
        (positives if hallucinated else negatives).append(row)
    return interleave(positives, negatives, rng)


NO_COMMENT = "i have no comment"


def truthfulqa_eligible(source: Path) -> list[tuple[int, dict[str, str], list[str]]]:
    """TruthfulQA's questions with a correct answer other than the Best Answer and "I have no
    comment": (row, the row, those answers), in source order."""
    eligible = []
    for i, r in enumerate(read_csv(source / "truthfulqa" / "TruthfulQA.csv")):
        best = r["Best Answer"].strip()
        others = [a.strip() for a in r["Correct Answers"].split(";")]
        others = [a for a in others if a and a != best and a.lower() != NO_COMMENT]
        if others:
            eligible.append((i, r, others))
    return eligible


def truthfulqa(source: Path, rng: random.Random) -> list[Row]:
    """TruthfulQA: Best Answer (0) vs Best Incorrect Answer (1), one of the two per question.

    Context (both labels alike): the question's "Correct Answers" minus the Best Answer and
    minus "I have no comment". Questions left with no reference answer are not eligible.
    """
    eligible = truthfulqa_eligible(source)
    chosen = rng.sample(range(len(eligible)), 2 * PER_CLASS)
    positives, negatives = [], []
    for rank, j in enumerate(chosen):
        i, r, refs = eligible[j]
        wrong = rank < PER_CLASS
        key = "Best Incorrect Answer" if wrong else "Best Answer"
        row = {"id": f"truthfulqa-{i}", "input": r["Question"].strip(), "output": r[key].strip(),
               "context": refs, "label": int(wrong), "source_label": key, "group": r["Category"]}
        (positives if wrong else negatives).append(row)
    return interleave(positives, negatives, rng)


def truthfulqa_similarity(source: Path, rng: random.Random) -> list[Row]:
    """TruthfulQA for answer similarity: the Best Answer is the ground truth; the output is
    another of the question's correct answers (1: it agrees with the reference) or the Best
    Incorrect Answer (0), one of the two per question. Correct answers equal to the Best
    Answer or "I have no comment" are not drawn; questions left with none are not eligible."""
    eligible = truthfulqa_eligible(source)
    chosen = rng.sample(range(len(eligible)), 2 * PER_CLASS)
    positives, negatives = [], []
    for rank, j in enumerate(chosen):
        i, r, others = eligible[j]
        agrees = rank < PER_CLASS
        output = rng.choice(others) if agrees else r["Best Incorrect Answer"].strip()
        row = {"id": f"truthfulqa-sim-{i}", "input": r["Question"].strip(), "output": output, "context": None,
               "ground_truth": r["Best Answer"].strip(), "label": int(agrees),
               "source_label": "Correct Answer" if agrees else "Best Incorrect Answer", "group": r["Category"]}
        (positives if agrees else negatives).append(row)
    return interleave(positives, negatives, rng)


def halueval_recall(source: Path, rng: random.Random) -> list[Row]:
    """HaluEval QA for context recall: the ground truth is the right answer (1: the knowledge
    holds it) or the hallucinated answer (0: it does not), one of the two per question; the
    context is the question's knowledge. The output is the ground truth again (context recall
    never shows the output; the output-length baseline then measures the ground truth's length,
    a known shortcut of this set)."""
    items = read_json_lines(source / "halueval" / "qa_one-turn_data.json")
    chosen = rng.sample(range(len(items)), 2 * PER_CLASS)
    positives, negatives = [], []
    for rank, i in enumerate(chosen):
        item, held = items[i], rank < PER_CLASS
        key = "right_answer" if held else "hallucinated_answer"
        truth = item[key].strip()
        row = {"id": f"halueval-recall-{i}", "input": item["question"].strip(), "output": truth,
               "context": item["knowledge"], "ground_truth": truth, "label": int(held), "source_label": key,
               "group": None}
        (positives if held else negatives).append(row)
    return interleave(positives, negatives, rng)


DAVIDSON_CLASSES = {"0": "hate", "1": "offensive", "2": "neither"}


def davidson(source: Path, rng: random.Random) -> list[Row]:
    """Davidson tweets: toxic (1) = hate or offensive, 0 = neither. The 100 toxic rows split
    between hate and offensive in proportion to the source (7 / 93)."""
    rows = [
        {"id": f"davidson-{r['']}", "input": "", "output": html.unescape(r["tweet"]), "context": None,
         "label": int(r["class"] in ("0", "1")), "source_label": DAVIDSON_CLASSES[r["class"]], "group": None}
        for r in read_csv(source / "davidson_hate_offensive" / "labeled_data.csv")
    ]
    hate = [r for r in rows if r["source_label"] == "hate"]
    offensive = [r for r in rows if r["source_label"] == "offensive"]
    n_hate = round(PER_CLASS * len(hate) / (len(hate) + len(offensive)))
    positives = rng.sample(hate, n_hate) + rng.sample(offensive, PER_CLASS - n_hate)
    negatives = rng.sample([r for r in rows if r["label"] == 0], PER_CLASS)
    return interleave(positives, negatives, rng)


def toxigen(source: Path, rng: random.Random) -> list[Row]:
    """ToxiGen demonstrations: implicit hate (1) vs neutral (0) sentences."""
    rows = [
        {"id": f"toxigen-{i}", "input": "", "output": r["text"], "context": None,
         "label": int(r["label"] == "hate"), "source_label": r["label"], "group": r["target_group"]}
        for i, r in enumerate(read_csv(source / "toxigen_demonstrations" / "toxigen_demonstrations.csv"))
    ]
    return stratified(rows, rng)


def stratified(rows: list[Row], rng: random.Random) -> list[Row]:
    """PER_CLASS rows of each label, drawn without replacement, interleaved."""
    positives = rng.sample([r for r in rows if r["label"] == 1], PER_CLASS)
    negatives = rng.sample([r for r in rows if r["label"] == 0], PER_CLASS)
    return interleave(positives, negatives, rng)


# benchmark name -> (builder, source folder holding LICENSE / NOTICE)
BUILDERS: dict[str, tuple[Callable[[Path, random.Random], list[Row]], str]] = {
    "begin": (begin, "begin"),
    "halueval_qa": (halueval_qa, "halueval"),
    "truthfulqa": (truthfulqa, "truthfulqa"),
    "davidson": (davidson, "davidson_hate_offensive"),
    "toxigen": (toxigen, "toxigen_demonstrations"),
    "truthfulqa_similarity": (truthfulqa_similarity, "truthfulqa"),
    "halueval_recall": (halueval_recall, "halueval"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True, help="folder of the labeled source data")
    parser.add_argument("--out", type=Path, default=ROOT / "localjudge" / "bench" / "bench_data", help="where to write")
    args = parser.parse_args()
    for name, (build, folder) in BUILDERS.items():
        rows = build(args.source, random.Random(SEED))  # one generator per benchmark: independent
        out = args.out / name
        out.mkdir(parents=True, exist_ok=True)
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        for legal in ("LICENSE", "NOTICE"):
            if (args.source / folder / legal).exists():
                shutil.copyfile(args.source / folder / legal, out / legal)
        labels = [r["label"] for r in rows]
        print(f"{name}: {len(rows)} rows, {sum(labels)} positive, {len(labels) - sum(labels)} negative")


if __name__ == "__main__":
    main()
