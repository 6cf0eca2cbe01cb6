"""Mastra's quick checks (`@mastra/evals` `checks`), one file each: model-free scorers of 1 or 0
(`similarity` without a threshold: the similarity itself).

Registered as ``check_<name>`` (``--scorer check_includes --scorer-option
check_includes.expected=sunny``), each with Mastra's id (``check-includes``). In Python, the
functions here read as Mastra's: ``checks.includes("sunny")``, ``checks.called_tool("search",
times=2)``, ``checks.matches(r"\\d+°[FC]", flags="i")``.

Output checks read the answer judged (the last assistant message with text, as every scorer;
under ``compat="mastra"`` every assistant message joined, as Mastra's checks read them);
tool checks read every tool call the run made (its `tool_calls`, or its output's messages).
Each takes ``compat="mastra"`` for Mastra's numbers (the raw fraction: `similarity`'s unrounded).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from localjudge.scorers.coded.checks.called_tool import check_called_tool_scorer
from localjudge.scorers.coded.checks.did_not_call import check_did_not_call_scorer
from localjudge.scorers.coded.checks.equals import check_equals_scorer
from localjudge.scorers.coded.checks.excludes import check_excludes_scorer
from localjudge.scorers.coded.checks.includes import check_includes_scorer
from localjudge.scorers.coded.checks.js_regex import DEFAULT_TIMEOUT_S, JsRegex
from localjudge.scorers.coded.checks.matches import check_matches_scorer
from localjudge.scorers.coded.checks.max_tool_calls import check_max_tool_calls_scorer
from localjudge.scorers.coded.checks.no_tool_errors import check_no_tool_errors_scorer
from localjudge.scorers.coded.checks.similarity import check_similarity_scorer
from localjudge.scorers.coded.checks.tool_order import check_tool_order_scorer
from localjudge.scorers.coded.checks.used_no_tools import check_used_no_tools_scorer
from localjudge.scorers.coded.code_scorer import CodeScorer

# registry name -> factory (judge, *, options..., scale)
CHECKS: dict[str, Callable[..., CodeScorer]] = {
    "check_includes": check_includes_scorer,
    "check_excludes": check_excludes_scorer,
    "check_equals": check_equals_scorer,
    "check_matches": check_matches_scorer,
    "check_similarity": check_similarity_scorer,
    "check_called_tool": check_called_tool_scorer,
    "check_did_not_call": check_did_not_call_scorer,
    "check_tool_order": check_tool_order_scorer,
    "check_max_tool_calls": check_max_tool_calls_scorer,
    "check_used_no_tools": check_used_no_tools_scorer,
    "check_no_tool_errors": check_no_tool_errors_scorer,
}


def includes(expected: str, *, ignore_case: bool = True, compat: str = "localjudge") -> CodeScorer:
    """``checks.includes(expected, {ignoreCase})``."""
    return check_includes_scorer(expected=expected, ignore_case=ignore_case, compat=compat)


def excludes(unwanted: str, *, ignore_case: bool = True, compat: str = "localjudge") -> CodeScorer:
    """``checks.excludes(unwanted, {ignoreCase})``."""
    return check_excludes_scorer(unwanted=unwanted, ignore_case=ignore_case, compat=compat)


def equals(expected: str, *, ignore_case: bool = True, compat: str = "localjudge") -> CodeScorer:
    """``checks.equals(expected, {ignoreCase})``."""
    return check_equals_scorer(expected=expected, ignore_case=ignore_case, compat=compat)


def matches(pattern: str | re.Pattern[str], flags: str = "", *, exact: bool = False,
            timeout_s: float = DEFAULT_TIMEOUT_S, compat: str = "localjudge") -> CodeScorer:
    """``checks.matches(new RegExp(pattern, flags), {exact})``; `timeout_s`: the most seconds one
    output's test may take before its row is left unscored (localjudge's)."""
    return check_matches_scorer(pattern=pattern, flags=flags, exact=exact, timeout_s=timeout_s, compat=compat)


def similarity(expected: str, *, threshold: float | None = None, ignore_case: bool = True,
               compat: str = "localjudge") -> CodeScorer:
    """``checks.similarity(expected, {threshold, ignoreCase})``."""
    return check_similarity_scorer(expected=expected, threshold=threshold, ignore_case=ignore_case, compat=compat)


def called_tool(tool_name: str, *, times: int = 1, compat: str = "localjudge") -> CodeScorer:
    """``checks.calledTool(toolName, {times})``."""
    return check_called_tool_scorer(tool_name=tool_name, times=times, compat=compat)


def did_not_call(tool_name: str, *, compat: str = "localjudge") -> CodeScorer:
    """``checks.didNotCall(toolName)``."""
    return check_did_not_call_scorer(tool_name=tool_name, compat=compat)


def tool_order(expected_order: Sequence[str], *, compat: str = "localjudge") -> CodeScorer:
    """``checks.toolOrder(expectedOrder)``."""
    return check_tool_order_scorer(expected_order=expected_order, compat=compat)


def max_tool_calls(max_calls: int, *, compat: str = "localjudge") -> CodeScorer:
    """``checks.maxToolCalls(max)``."""
    return check_max_tool_calls_scorer(max_calls=max_calls, compat=compat)


def used_no_tools(*, compat: str = "localjudge") -> CodeScorer:
    """``checks.usedNoTools()``."""
    return check_used_no_tools_scorer(compat=compat)


def no_tool_errors(*, compat: str = "localjudge") -> CodeScorer:
    """``checks.noToolErrors()``."""
    return check_no_tool_errors_scorer(compat=compat)


__all__ = ["CHECKS", "JsRegex", "called_tool", "did_not_call", "equals", "excludes", "includes", "matches",
           "max_tool_calls", "no_tool_errors", "similarity", "tool_order", "used_no_tools"]
