"""Content similarity (Mastra's `createContentSimilarityScorer`, no model): how alike the input
and output texts are, character by character.

Inputs: `input` and `output`. The score is npm `string-similarity`'s `compareTwoStrings`, as
Mastra's: the Dice coefficient of the two texts' character bigrams, counted with repeats, with
all whitespace removed (so `ignore_whitespace` cannot change it; it is kept for Mastra's
options). `ignore_case` (default True) lower-cases both first. Identical texts (two empty ones
too) score 1; a text under 2 characters against another text, 0. Higher is more alike. The
port (`localjudge.scorers.coded.js_strings.dice_bigrams`) counts UTF-16 units as JavaScript does, so
the score is Mastra's exactly, before localjudge's rounding to two decimals.
"""

from __future__ import annotations

from typing import Any

from localjudge.judge import Judge
from localjudge.samples import BOTH_JOINED, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build, code_scorer, measured
from localjudge.scorers.coded.js_strings import dice_bigrams, squash_spaces
from localjudge.scoring import Results


def content_similarity_scorer(judge: Judge | None = None, *, ignore_case: bool = True, ignore_whitespace: bool = True,
                              scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's content similarity scorer (no model: `judge` is not used).

    Args:
        ignore_case: Lower-case both texts first.
        ignore_whitespace: Collapse runs of whitespace to one space and trim both texts first.
    """
    for name, value in (("ignore_case", ignore_case), ("ignore_whitespace", ignore_whitespace)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be true or false, got {value!r}")

    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        given, made = run.input, run.output
        if ignore_case:
            given, made = given.lower(), made.lower()
        if ignore_whitespace:
            given, made = squash_spaces(given), squash_spaces(made)
        return {"processed_input": given, "processed_output": made, "similarity": dice_bigrams(given, made)}

    def reason(run: Sample, results: Results) -> str:
        return (f"Dice similarity of the input's and output's character pairs: "
                f"{results['preprocess_step_result']['similarity']:.4g}.")

    return code_scorer("content_similarity", code_build(scale, compat), preprocess=preprocess,
                       score=measured("similarity"), reason=reason, reads=("input", "output"),
                       mastra_reading=BOTH_JOINED, positive="similar to the input",
                       settings={"ignore_case": ignore_case, "ignore_whitespace": ignore_whitespace},
                       description="Character-bigram (Dice) similarity of the input and output texts")


__all__ = ["content_similarity_scorer"]
