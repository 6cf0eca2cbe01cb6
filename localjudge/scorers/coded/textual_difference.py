"""Textual difference (Mastra's `createTextualDifferenceScorer`, no model): how much of the input
text the output keeps, character by character, with word-level change counts.

Inputs: `input` and `output`. The score is Mastra's ratio: 2 x (longest common subsequence of
characters) / (total length of both), 1 for identical texts (two empty ones too), 0 when just
one is empty. Higher means more alike. It is not Python's `difflib.SequenceMatcher.ratio()`,
which Mastra's comment cites: SequenceMatcher matches blocks greedily, and differs from the
longest common subsequence on most real texts. The subsequence comes from `rapidfuzz`
(`LCSseq`), on UTF-16 code units as JavaScript counts them, so the ratio is Mastra's exactly.

The preprocess step also keeps Mastra's other measures: `changes` (words changed, by Mastra's
greedy word matching: the longer text's word count less the words matched), `length_diff`
(|length difference| / longer length) and `confidence` (1 - length_diff).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import BOTH_JOINED, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build, code_scorer, measured
from localjudge.scorers.coded.js_strings import Units, js_split_spaces, squash_spaces, utf16
from localjudge.scoring import Results


def ratio(given: str, made: str) -> float:
    """Mastra's `calculateRatio`: 2 x LCS / total length (UTF-16 units)."""
    if given == made:
        return 1.0
    a, b = utf16(given), utf16(made)
    if not a or not b:
        return 0.0
    return (2.0 * common_subsequence(a, b)) / (len(a) + len(b))


def common_subsequence(a: Units, b: Units) -> int:
    """The length of the longest common subsequence of `a` and `b`, exactly.

    Mastra fills an (n+1) x (m+1) table (it cannot run on two 100 KB texts). `rapidfuzz` computes
    it bit-parallel, n x m / 64 steps; given a bound k on the indel distance d (= n + m - 2 LCS)
    it only follows a band of width k around the diagonal and returns d when d <= k. Doubling k
    from the length difference finds d in about d x n / 64 steps: near-linear when the output is
    an edit of the input (the usual case); texts that share little take the full computation
    (no exact LCS algorithm is much better than n x m in the worst case)."""
    from rapidfuzz.distance import Indel, LCSseq

    total = len(a) + len(b)
    bound = max(256, 2 * abs(len(a) - len(b)))
    while 4 * bound < total:
        distance = Indel.distance(a, b, score_cutoff=bound)
        if distance <= bound:
            return (total - distance) // 2
        bound *= 4
    return int(LCSseq.similarity(a, b))


def changes(given: str, made: str) -> int:
    """Mastra's `countChanges`: how many words differ (whitespace alone counts as one change)."""
    a, b = squash_spaces(given), squash_spaces(made)
    if a == b:
        if given == made:
            return 0
        first, second = [w for w in js_split_spaces(given) if w], [w for w in js_split_spaces(made) if w]
        return abs(len(first) - len(second)) or 1
    first, second = [w for w in js_split_spaces(a) if w], [w for w in js_split_spaces(b) if w]
    if not first or not second:
        return len(first) or len(second)
    # Mastra's greedy matching (each word takes the first unused equal word, pair by pair: quadratic)
    # matches min(count in first, count in second) of each word: counted, not searched
    matched = sum((Counter(first) & Counter(second)).values())
    return max(len(first), len(second)) - matched


def _preprocess(run: Sample, results: Results) -> dict[str, Any]:
    given, made = run.input, run.output
    sizes = len(utf16(given)), len(utf16(made))
    longest = max(sizes)
    length_diff = abs(sizes[0] - sizes[1]) / longest if longest > 0 else 0
    return {"ratio": ratio(given, made), "confidence": 1 - length_diff, "changes": changes(given, made),
            "length_diff": length_diff}


def _reason(run: Sample, results: Results) -> str:
    step = results["preprocess_step_result"]
    return (f"Similarity ratio {step['ratio']:.4g} (longest common subsequence of characters); "
            f"{step['changes']} word change(s); length difference {step['length_diff']:.2%}.")


def textual_difference_scorer(judge: Judge | None = None, *, scale: float = 1.0,
                              compat: str = "localjudge") -> CodeScorer:
    """Mastra's textual difference scorer (no model: `judge` is not used)."""
    return code_scorer("textual_difference", code_build(scale, compat), preprocess=_preprocess,
                       score=measured("ratio"), reason=_reason, reads=("input", "output"),
                       mastra_reading=BOTH_JOINED, positive="close to the input",
                       description="Character similarity ratio (longest common subsequence) of the input and output")


__all__ = ["changes", "common_subsequence", "ratio", "textual_difference_scorer"]
