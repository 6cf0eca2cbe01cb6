"""Seconds each model-free scorer takes on one run of long texts, to show they grow near-linearly.

For every code scorer of texts (completeness, content_similarity, keyword_coverage,
textual_difference, tone) and every output-text check (check_includes, check_excludes,
check_equals, check_matches, check_similarity), one run at 10 KB, 100 KB and 1 MB of each shape:

- **realistic**: the bench data's texts (questions, answers, contexts) and localjudge's docs
  joined, as the input; the output is the same text with one word in 50 replaced (an answer
  that reuses its context).
- **no .!?**: the same texts with `.`, `!` and `?` removed (tone's worst case before).
- **one word**: the same texts with whitespace and punctuation removed: one long word.
- **unrelated** (textual_difference only): the output is the input's words shuffled, not an
  edit: the longest common subsequence then takes its full n x m / 64 steps.

The texts add up to about 800 KB: the 1 MB runs repeat their first fifth.

Prints a markdown table: seconds per size (best of 3 below 1 MB, one run at 1 MB) and the ratio
1 MB / 100 KB: about 10 is linear, 100 quadratic. The tool-call scorers and checks (their size is
a number of calls, not of characters) are not measured here.

Usage:
    flock /tmp/localjudge-cpu.lock .venv/bin/python benchmarks/bench_code_scorers.py [--sizes 10000,100000,1000000]
        [--scorers completeness,tone] [--shapes realistic,one-word]
Run it alone: on 2 cores another busy process skews every figure.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localjudge.result import ScoreResult
from localjudge.scorers import build_scorer
from localjudge.scorers.coded.completeness import _verb_base

DATA = Path(__file__).resolve().parents[1] / "localjudge" / "bench" / "bench_data"
SCORERS: dict[str, dict[str, Any]] = {
    "completeness": {}, "content_similarity": {}, "keyword_coverage": {}, "textual_difference": {}, "tone": {},
    "check_includes": {"expected": "the capital of nowhere"}, "check_excludes": {"unwanted": "the capital of nowhere"},
    "check_equals": {"expected": "x"}, "check_matches": {"pattern": "\\b(\\w+) \\1\\b", "flags": "i"},
    "check_similarity": {"expected": "a short expected answer about the capital"},
}
SHAPES = ("realistic", "no .!?", "one word", "unrelated")


def contexts() -> list[str]:
    """Every text of the bench data's rows (questions, answers, contexts), then localjudge's docs:
    about 1 MB of distinct English."""
    rows = [json.loads(line) for path in sorted(DATA.glob("*/*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]
    texts = [value.strip() for row in rows for value in row.values() if isinstance(value, str) and value.strip()]
    docs = sorted((DATA.parents[2] / "docs").rglob("*.md"))
    return texts + [" ".join(path.read_text(encoding="utf-8").split()) for path in docs]


def joined(texts: list[str], size: int, start: int) -> str:
    out: list[str] = []
    length, i = 0, start
    while length < size:
        out.append(texts[i % len(texts)])
        length += len(out[-1]) + 1
        i += 1
    return " ".join(out)[:size]


def edited(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    for i in rng.sample(range(len(words)), len(words) // 50):
        words[i] = rng.choice(words)
    return " ".join(words)


def run_pair(shape: str, size: int, texts: list[str]) -> tuple[str, str]:
    given = joined(texts, size, 0)
    rng = random.Random(size)
    if shape == "unrelated":
        made = given.split(" ")
        rng.shuffle(made)
        return given, " ".join(made)
    made = edited(given, rng)
    if shape == "no .!?":
        given, made = (re.sub("[.!?]", "", t) for t in (given, made))
    elif shape == "one word":
        given, made = (re.sub(r"[\W_]+", "", t) for t in (given, made))
    return given, made


def seconds(call: Callable[[], ScoreResult], repeats: int) -> tuple[float, ScoreResult]:
    """The best time of `repeats` calls, each with completeness's cache of verb forms emptied (a
    new text's words are looked up again), and the result."""
    best = float("inf")
    for _ in range(repeats):
        _verb_base.cache_clear()
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="text sizes in characters")
    parser.add_argument("--scorers", default=",".join(SCORERS))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    texts = contexts()
    build_scorer("completeness", None).run({"input": "load the verb tables", "output": "went"})  # once a process
    header = " | ".join(f"{s // 1000} KB" for s in sizes)
    print(f"| scorer | shape | {header} | {sizes[-1] // 1000} KB / {sizes[-2] // 1000} KB |")
    print("|---|---|" + "---:|" * (len(sizes) + 1))
    for name in args.scorers.split(","):
        scorer = build_scorer(name, None, options=SCORERS[name])
        for shape in args.shapes.split(","):
            if shape == "unrelated" and name != "textual_difference":
                continue
            found = []
            for size in sizes:
                given, made = run_pair(shape, size, texts)
                run = {"input": given, "output": made}
                took, result = seconds(functools.partial(scorer.run, run), 1 if size >= 1_000_000 else 3)
                if result.score is None:
                    raise SystemExit(f"{name} on {shape} {size}: unscored: {result.error}")
                found.append(took)
            cells = " | ".join(f"{s:.3f}" for s in found)
            print(f"| {name} | {shape} | {cells} | {found[-1] / max(found[-2], 1e-9):.1f} |", flush=True)


if __name__ == "__main__":
    main()
