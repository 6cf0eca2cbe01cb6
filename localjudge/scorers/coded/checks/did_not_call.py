"""Check `didNotCall` (Mastra's `checks.didNotCall`, id ``check-did-not-call``, no model): 1 when
the agent never called the tool, else 0."""

from __future__ import annotations

from localjudge.judge import Judge
from localjudge.scorers.coded.checks.tools import called, tool_check, tool_name_option
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_did_not_call_scorer(judge: Judge | None = None, *, tool_name: str, scale: float = 1.0,
                              compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.didNotCall(toolName)`` (no model: `judge` is not used)."""
    tool_name_option("tool_name", tool_name)
    return tool_check(
        "check_did_not_call", code_build(scale, compat), positive="left the tool alone", settings={"tool": tool_name},
        said=(f"did not call {tool_name}", f"called {tool_name}"),
        measure=lambda run: {"tool_name": tool_name, "count": called(run).count(tool_name),
                             "passed": tool_name not in called(run)})


__all__ = ["check_did_not_call_scorer"]
