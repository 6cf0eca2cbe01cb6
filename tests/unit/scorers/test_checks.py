"""Mastra's eleven quick checks (`@mastra/evals` `checks`), with no model: each passes and fails
where Mastra's does, by registry name (``check_includes``) and through the Mastra-style namespace
(``checks.includes("sunny")``)."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge.scorers import build_scorer, checks

OUTPUT = "It is Sunny and 72°F in Paris."
TOOLS = [{"tool_name": "search", "args": {"q": "weather"}, "result": {"temp": 72}},
         {"tool_name": "format", "args": {}, "result": {"error": "bad unit"}},
         {"tool_name": "search", "args": {"q": "again"}, "state": "call"}]


def checked(name: str, output: str = OUTPUT, tools: list[dict[str, Any]] | None = None,
            **options: Any) -> float | None:
    run = {"input": "What is the weather?", "output": output, "tool_calls": TOOLS if tools is None else tools}
    return build_scorer(name, None, options=options).run(run).score


@pytest.mark.parametrize(("name", "options", "expected"), [
    ("check_includes", {"expected": "sunny"}, 1.0),
    ("check_includes", {"expected": "sunny", "ignore_case": False}, 0.0),
    ("check_includes", {"expected": "rain"}, 0.0),
    ("check_excludes", {"unwanted": "SUNNY"}, 0.0), ("check_excludes", {"unwanted": "rain"}, 1.0),
    ("check_equals", {"expected": OUTPUT.upper()}, 1.0),
    ("check_equals", {"expected": OUTPUT.upper(), "ignore_case": False}, 0.0),
    ("check_equals", {"expected": OUTPUT + " "}, 0.0),  # nothing else is normalised
    ("check_matches", {"pattern": "\\d{1,3}°[FC]"}, 1.0), ("check_matches", {"pattern": "^\\d"}, 0.0),
    ("check_matches", {"pattern": "sunny", "flags": "i"}, 1.0), ("check_matches", {"pattern": "sunny"}, 0.0),
    ("check_matches", {"pattern": "It.*Paris\\.", "exact": True}, 1.0),
    ("check_matches", {"pattern": "It", "exact": True}, 0.0),
    ("check_similarity", {"expected": OUTPUT.lower()}, 1.0),
    ("check_similarity", {"expected": "It is sunny", "threshold": 0.9}, 0.0),
    ("check_similarity", {"expected": "It is sunny", "threshold": 0.5}, 1.0),
    ("check_similarity", {"expected": "It is sunny"}, 0.52),  # no threshold: the similarity, 2 x 8 / (24 + 9 - 2)
    ("check_called_tool", {"tool_name": "search"}, 1.0),
    ("check_called_tool", {"tool_name": "search", "times": 2}, 1.0),
    ("check_called_tool", {"tool_name": "search", "times": 3}, 0.0), ("check_called_tool", {"tool_name": "fetch"}, 0.0),
    ("check_did_not_call", {"tool_name": "format"}, 0.0), ("check_did_not_call", {"tool_name": "delete"}, 1.0),
    ("check_tool_order", {"expected_order": ["search", "format"]}, 1.0),
    ("check_tool_order", {"expected_order": ["format", "search"]}, 1.0),  # search is called again after format
    ("check_tool_order", {"expected_order": ["format", "format"]}, 0.0),
    ("check_tool_order", {"expected_order": []}, 1.0),
    ("check_max_tool_calls", {"max_calls": 3}, 1.0), ("check_max_tool_calls", {"max_calls": 2}, 0.0),
    ("check_used_no_tools", {}, 0.0), ("check_no_tool_errors", {}, 0.0),
])
def test_checks(name: str, options: dict[str, Any], expected: float) -> None:
    assert checked(name, **options) == expected


def test_tool_checks_without_tools() -> None:
    assert checked("check_used_no_tools", tools=[]) == 1.0 and checked("check_no_tool_errors", tools=[]) == 1.0
    assert checked("check_called_tool", tools=[], tool_name="search") == 0.0


@pytest.mark.parametrize(("result", "state", "failed"), [
    ({"temp": 72}, "result", False), ({"error": "x"}, "result", True), ({"error": {}}, "result", True),  # {} is truthy
    ({"error": ""}, "result", False), ({"error": 0}, "result", False), (None, "call", True),
    (None, "output-error", True), ('{"error": 1} as text', "result", False),
])
def test_no_tool_errors_reads_failures_as_mastra(result: Any, state: str, failed: bool) -> None:
    assert checked("check_no_tool_errors", tools=[{"tool_name": "t", "result": result, "state": state}]) == (
        0.0 if failed else 1.0)


def test_a_result_flagged_is_error_is_a_failure_as_mastra() -> None:
    """Mastra's `isErrorInvocation`: ``isError: true`` beside ``state: 'result'`` is a failure,
    in a stored message and in an explicit list alike."""
    flagged = {"toolCallId": "t", "toolName": "t", "args": {}, "state": "result", "result": {"ok": False},
               "isError": True}
    messages = [{"role": "assistant", "content": {"format": 2, "parts": [
        {"type": "tool-invocation", "toolInvocation": flagged}]}}]
    run = {"input": "What is the weather?", "output": messages}
    assert build_scorer("check_no_tool_errors", None).run(run).score == 0.0
    assert checked("check_no_tool_errors", tools=[{"tool_name": "t", "result": {"ok": False}, "is_error": True}]) == 0
    assert checked("check_no_tool_errors", tools=[{"tool_name": "t", "result": {"ok": 1}, "isError": "yes"}]) == 1


def test_the_mastra_style_namespace() -> None:
    run = {"output": OUTPUT, "tool_calls": TOOLS}
    assert checks.includes("sunny").run(run).score == 1.0
    assert checks.matches("\\d+°f", "i").run(run).score == 1.0
    assert checks.called_tool("search", times=2).run(run).score == 1.0
    assert checks.tool_order(["search", "format"]).run(run).score == 1.0
    assert checks.max_tool_calls(1).run(run).score == 0.0
    assert [checks.used_no_tools().id, checks.no_tool_errors().id] == ["check-used-no-tools", "check-no-tool-errors"]
    assert checks.similarity("x").id == "check-similarity" and checks.excludes("x").id == "check-excludes"
    assert checks.equals("x").id == "check-equals" and checks.did_not_call("x").id == "check-did-not-call"


@pytest.mark.parametrize(("name", "options", "message"), [
    ("check_includes", {"expected": 3}, "expected must be text"),
    ("check_called_tool", {"tool_name": "s", "times": -1}, "times must be a whole number"),
    ("check_tool_order", {"expected_order": "search"}, "expected_order must be a list of tool names"),
    ("check_matches", {"pattern": "\\p{Letter", "flags": "u"},
     "^check_matches: cannot take /\\\\p\\{Letter/u: \\\\p without its \\{name\\} is a syntax error with the u flag$"),
    ("check_matches", {"pattern": "a", "flags": "gg"}, "invalid regular expression flags"),
    ("check_similarity", {"expected": "x", "threshold": "high"}, "threshold must be a number"),
])
def test_bad_options_are_clear_errors(name: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_scorer(name, None, options=options)
