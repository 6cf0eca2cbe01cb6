"""Check `includes` (Mastra's `checks.includes`, id ``check-includes``, no model): 1 when the
output contains the expected text, else 0; case-insensitive unless ``ignore_case=False``."""

from __future__ import annotations

from localjudge.judge import Judge
from localjudge.scorers.coded.checks.text import text_check, text_option
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_includes_scorer(judge: Judge | None = None, *, expected: str, ignore_case: bool = True,
                          scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.includes(expected, {ignoreCase})`` (no model: `judge` is not used)."""
    text_option("expected", expected, ignore_case)
    return text_check("check_includes", code_build(scale, compat), expected=expected, ignore_case=ignore_case,
                      said=("includes", "does not include"),
                      test=lambda output, target: target in output, positive="includes the text")


__all__ = ["check_includes_scorer"]
