"""Check `excludes` (Mastra's `checks.excludes`, id ``check-excludes``, no model): 1 when the
output does not contain the text, else 0; case-insensitive unless ``ignore_case=False``."""

from __future__ import annotations

from localjudge.judge import Judge
from localjudge.scorers.coded.checks.text import text_check, text_option
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_excludes_scorer(judge: Judge | None = None, *, unwanted: str, ignore_case: bool = True,
                          scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.excludes(unwanted, {ignoreCase})`` (no model: `judge` is not used)."""
    text_option("unwanted", unwanted, ignore_case)
    return text_check("check_excludes", code_build(scale, compat), expected=unwanted, ignore_case=ignore_case,
                      said=("leaves out", "includes"),
                      test=lambda output, target: target not in output, positive="leaves the text out")


__all__ = ["check_excludes_scorer"]
