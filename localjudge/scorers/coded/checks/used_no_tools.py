"""Check `usedNoTools` (Mastra's `checks.usedNoTools`, id ``check-used-no-tools``, no model): 1 when
the agent made no tool call, else 0."""

from __future__ import annotations

from localjudge.judge import Judge
from localjudge.scorers.coded.checks.tools import called, tool_check
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_used_no_tools_scorer(judge: Judge | None = None, *, scale: float = 1.0,
                               compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.usedNoTools()`` (no model: `judge` is not used)."""
    return tool_check("check_used_no_tools", code_build(scale, compat), positive="used no tools",
                      said=("used no tools", "used tools"),
                      measure=lambda run: {"count": len(called(run)), "passed": not called(run)})


__all__ = ["check_used_no_tools_scorer"]
