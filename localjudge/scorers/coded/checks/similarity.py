"""Check `similarity` (Mastra's `checks.similarity`, id ``check-similarity``, no model): the
output's similarity to an expected text (npm `string-similarity`'s Dice coefficient of character
bigrams, whitespace removed, as the content similarity scorer), case-insensitive unless
``ignore_case=False``. With a `threshold`, 1 when the similarity reaches it, else 0; without
one, the similarity itself (Mastra's code; its doc comment's "default 0.7" is not applied)."""

from __future__ import annotations

import math
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import ASSISTANT_SPACED, Sample
from localjudge.scorers.coded.checks.text import output_and_target, text_option
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build, code_scorer
from localjudge.scorers.coded.js_strings import dice_bigrams
from localjudge.scoring import Results


def check_similarity_scorer(judge: Judge | None = None, *, expected: str, threshold: float | None = None,
                            ignore_case: bool = True, scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.similarity(expected, {threshold, ignoreCase})`` (no model: `judge` is not used)."""
    text_option("expected", expected, ignore_case)
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not math.isfinite(threshold)):
        raise TypeError(f"threshold must be a number, got {threshold!r}")

    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        output, target = output_and_target(run, expected, ignore_case)
        return {"output": output, "target": target, "score": dice_bigrams(output, target), "threshold": threshold}

    def score(run: Sample, results: Results) -> float:
        found = results["preprocess_step_result"]["score"]
        return found if threshold is None else (1.0 if found >= threshold else 0.0)

    def reason(run: Sample, results: Results) -> str:
        found = results["preprocess_step_result"]["score"]
        against = "" if threshold is None else f" ({'reaches' if found >= threshold else 'below'} {threshold:g})"
        return f"Similarity to {expected!r}: {found:.4g}{against}."

    return code_scorer("check_similarity", code_build(scale, compat), id="check-similarity", preprocess=preprocess,
                       score=score, reason=reason,
                       positive="similar to the text", description=f"Similarity to {expected!r}",
                       settings={"expected": expected, "threshold": threshold, "ignore_case": ignore_case},
                       mastra_reading={"output": ASSISTANT_SPACED})


__all__ = ["check_similarity_scorer"]
