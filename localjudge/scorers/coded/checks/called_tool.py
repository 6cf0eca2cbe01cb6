"""Check `calledTool` (Mastra's `checks.calledTool`, id ``check-called-tool``, no model): 1 when
the agent called the tool at least `times` times (default once), else 0."""

from __future__ import annotations

from localjudge.judge import Judge
from localjudge.scorers.coded.checks.tools import called, count_option, tool_check, tool_name_option
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_called_tool_scorer(judge: Judge | None = None, *, tool_name: str, times: int = 1,
                             scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.calledTool(toolName, {times})`` (no model: `judge` is not used)."""
    tool_name_option("tool_name", tool_name)
    count_option("times", times)
    at_least = f" at least {times} times" if times > 1 else ""
    return tool_check(
        "check_called_tool", code_build(scale, compat), positive="called the tool",
        settings={"tool": tool_name, "times": times},
        said=(f"called {tool_name}{at_least}", f"did not call {tool_name}{at_least}"),
        measure=lambda run: {"tool_name": tool_name, "expected_times": times,
                             "actual_count": called(run).count(tool_name),
                             "passed": called(run).count(tool_name) >= times})


__all__ = ["check_called_tool_scorer"]
