"""Check `maxToolCalls` (Mastra's `checks.maxToolCalls`, id ``check-max-tool-calls``, no model):
1 when the agent made at most `max_calls` tool calls (Mastra's `max`), else 0."""

from __future__ import annotations

from localjudge.judge import Judge
from localjudge.scorers.coded.checks.tools import called, count_option, tool_check
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_max_tool_calls_scorer(judge: Judge | None = None, *, max_calls: int, scale: float = 1.0,
                                compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.maxToolCalls(max)`` (no model: `judge` is not used)."""
    count_option("max_calls", max_calls)
    return tool_check(
        "check_max_tool_calls", code_build(scale, compat), positive="within the call budget",
        settings={"max": max_calls},
        said=(f"made at most {max_calls} tool calls", f"made more than {max_calls} tool calls"),
        measure=lambda run: {"count": len(called(run)), "max": max_calls, "passed": len(called(run)) <= max_calls})


__all__ = ["check_max_tool_calls_scorer"]
