"""Check `equals` (Mastra's `checks.equals`, id ``check-equals``, no model): 1 when the output is
exactly the expected text, else 0; case-insensitive unless ``ignore_case=False``. Nothing else
is normalised: surrounding whitespace counts, as in Mastra."""

from __future__ import annotations

from localjudge.judge import Judge
from localjudge.samples import ASSISTANT_RUN_ON
from localjudge.scorers.coded.checks.text import text_check, text_option
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_equals_scorer(judge: Judge | None = None, *, expected: str, ignore_case: bool = True,
                        scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.equals(expected, {ignoreCase})`` (no model: `judge` is not used)."""
    text_option("expected", expected, ignore_case)
    return text_check("check_equals", code_build(scale, compat), expected=expected, ignore_case=ignore_case,
                      said=("equals", "does not equal"), joined=ASSISTANT_RUN_ON,
                      test=lambda output, target: output == target, positive="equals the text")


__all__ = ["check_equals_scorer"]
