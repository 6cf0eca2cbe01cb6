"""Check `toolOrder` (Mastra's `checks.toolOrder`, id ``check-tool-order``, no model): 1 when the
expected tools were called in that order, other calls allowed between (the expected order is a
subsequence of the calls), else 0. An empty order always passes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.coded.checks.tools import called, tool_check
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def check_tool_order_scorer(judge: Judge | None = None, *, expected_order: Sequence[str],
                            scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.toolOrder(expectedOrder)`` (no model: `judge` is not used)."""
    order = list(expected_order) if not isinstance(expected_order, str) else None
    if order is None or not all(isinstance(t, str) for t in order):
        raise TypeError(f"expected_order must be a list of tool names, got {expected_order!r}")

    def measure(run: Sample) -> dict[str, Any]:
        reached = 0
        for tool in called(run):
            if reached < len(order) and tool == order[reached]:
                reached += 1
        return {"actual_tools": called(run), "expected_order": order, "passed": reached == len(order)}

    shown = " → ".join(order)
    return tool_check("check_tool_order", code_build(scale, compat), positive="called the tools in order",
                      settings={"order": order}, measure=measure,
                      said=(f"called {shown} in that order", f"did not call {shown} in that order"))


__all__ = ["check_tool_order_scorer"]
