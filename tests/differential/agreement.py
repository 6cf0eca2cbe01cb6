"""Agreement on real texts: Mastra's text code scorers and localjudge's on the same few hundred
runs from the bundled benchmark subsets (localjudge/bench/bench_data).

Input/output scorers read 100 rows each of `begin` (dialogue turns), `halueval_qa` (questions
and long answers) and `truthfulqa` (questions and short answers); tone reads the outputs of 100
rows each of `davidson` and `toxigen` (tweets and statements, strongly worded) and `begin`, in
stability mode and against a reference tone. A run agrees when localjudge's score is Mastra's
rounded to two decimals. The ported scorers must agree on every run; completeness (compromise
has no Python equivalent) on the share `AGREEMENT` pins, which docs/scorers/code-scorers.md
reports.
"""

from __future__ import annotations

import json
from typing import Any

from tests.differential.cases_code import texts
from tests.differential.parity import ROOT

DATA = ROOT / "localjudge" / "bench" / "bench_data"
PER_SET = 100
PAIRS = ("begin", "halueval_qa", "truthfulqa")
OUTPUTS = ("davidson", "toxigen", "begin")
REFERENCE_TONE = "Thank you, this is really helpful and I am glad it worked out."

# scorer -> (localjudge's options, Mastra's factory arguments, the data sets it reads)
SCORERS: dict[str, tuple[str, dict[str, Any], list[Any], tuple[str, ...]]] = {
    "completeness": ("completeness", {}, [], PAIRS),
    "keyword_coverage": ("keyword_coverage", {}, [], PAIRS),
    "content_similarity": ("content_similarity", {}, [], PAIRS),
    "textual_difference": ("textual_difference", {}, [], PAIRS),
    "tone": ("tone", {}, [], OUTPUTS),
    "tone_reference": ("tone", {"reference_tone": REFERENCE_TONE}, [{"referenceTone": REFERENCE_TONE}], OUTPUTS),
}
FACTORIES = {"completeness": "createCompletenessScorer", "keyword_coverage": "createKeywordCoverageScorer",
             "content_similarity": "createContentSimilarityScorer",
             "textual_difference": "createTextualDifferenceScorer", "tone": "createToneScorer"}

# Runs on which localjudge's score is Mastra's, rounded, of the 300 each scorer reads. Completeness
# finds its elements by a rule imitating compromise: see docs/scorers/code-scorers.md.
AGREEMENT = {"completeness": 237, "keyword_coverage": 300, "content_similarity": 300, "textual_difference": 300,
             "tone": 300, "tone_reference": 300}


def rows(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:PER_SET]]


def runs(sets: tuple[str, ...]) -> list[dict[str, Any]]:
    """Agent runs of each row's input and output (tone: the output, and an empty user message)."""
    return [texts(row["input"] if sets == PAIRS else "", row["output"]) for name in sets for row in rows(name)]


def agreement_cases() -> list[dict[str, Any]]:
    """The harness cases, ids ``agree/<scorer>/<n>``."""
    cases = []
    for key, (scorer, _, positional, sets) in SCORERS.items():
        for n, run in enumerate(runs(sets)):
            cases.append({"id": f"agree/{key}/{n}", "factory": FACTORIES[scorer], "positional": positional,
                          "run": run})
    return cases
