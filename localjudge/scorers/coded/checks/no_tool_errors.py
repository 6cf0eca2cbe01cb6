"""Check `noToolErrors` (Mastra's `checks.noToolErrors`, id ``check-no-tool-errors``, no model):
1 when no tool call failed, else 0. A call failed when it never got its result (state ``call``),
threw (``output-error``), returned a result flagged ``isError: true``, or returned an object whose
``error`` field is set (truthy, as in JavaScript)."""

from __future__ import annotations

import json
import math
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import Sample, ToolCall
from localjudge.scorers.coded.checks.tools import tool_check
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build


def js_truthy(value: Any) -> bool:
    """JavaScript's truthiness: objects and arrays are true even when empty."""
    if isinstance(value, (dict, list)):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def failed(call: ToolCall) -> bool:
    """Mastra's `isErrorInvocation`, on localjudge's reading of a call."""
    if call.state in ("call", "output-error") or call.is_error:
        return True
    try:
        result = json.loads(call.result) if call.result is not None else None
    except ValueError:
        return False
    return isinstance(result, dict) and js_truthy(result.get("error"))


def _measure(run: Sample) -> dict[str, Any]:
    errors = [call.name for call in run.tool_calls if failed(call)]
    return {"error_count": len(errors), "failed_tools": errors, "total_calls": len(run.tool_calls),
            "passed": not errors}


def check_no_tool_errors_scorer(judge: Judge | None = None, *, scale: float = 1.0,
                                compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.noToolErrors()`` (no model: `judge` is not used)."""
    return tool_check("check_no_tool_errors", code_build(scale, compat), positive="no tool failed", measure=_measure,
                      said=("had no failed tool call", "had a failed tool call"))


__all__ = ["check_no_tool_errors_scorer", "failed", "js_truthy"]
