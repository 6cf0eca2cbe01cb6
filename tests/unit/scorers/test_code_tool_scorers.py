"""Mastra's code scorers of tool calls, with no model: code tool call accuracy, code trajectory
accuracy and the unified code trajectory scorer, and the trajectory measures they share
(`localjudge.scorers.coded.trajectory_compare`, ported from Mastra's `scorers/utils.ts`)."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge.samples import ToolCall
from localjudge.scorers import build_scorer
from localjudge.scorers.coded.code_tool_call_accuracy import accuracy, in_order
from localjudge.scorers.coded.trajectory_compare import (
    blacklist,
    compare,
    efficiency,
    js_round2,
    steps_of,
    tool_failures,
)


def calls(*names: str, failed: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [{"tool_name": n, "args": {"q": i}, "result": None if n in failed else "ok",
             "state": "output-error" if n in failed else "result"} for i, n in enumerate(names)]


def run(*names: str, expected: Any = None, **more: Any) -> dict[str, Any]:
    made = {"input": "Do the task.", "output": "Done.", "tool_calls": calls(*names, **more)}
    if expected is not None:
        made["expected_trajectory"] = expected
    return made


def steps(*names: str) -> list[dict[str, Any]]:
    return [{"stepType": "tool_call", "name": n} for n in names]


# --- code tool call accuracy -------------------------------------------------------------------------

@pytest.mark.parametrize(("tools", "tool", "order", "strict", "expected"), [
    ([], "a", None, False, 0.0), (["a", "b"], "a", None, False, 1.0), (["a", "b"], "a", None, True, 0.0),
    (["a"], "a", None, True, 1.0), (["b"], "a", None, False, 0.0),
    (["a", "x", "b"], None, ["a", "b"], False, 1.0), (["b", "a"], None, ["a", "b"], False, 0.0),
    (["a", "x", "b"], None, ["a", "b"], True, 0.0), (["a", "b"], "z", ["a", "b"], True, 1.0),  # the order wins
    (["a", "b", "a"], None, ["b", "a"], False, 0.0),  # each tool's first call, as Mastra's indexOf
])
def test_accuracy(tools: list[str], tool: str | None, order: list[str] | None, strict: bool,
                  expected: float) -> None:
    assert accuracy(tools, tool, order, strict) == expected


def test_code_tool_call_accuracy() -> None:
    scorer = build_scorer("code_tool_call_accuracy", None, options={"expected_tool_order": ["lookup", "refund"]})
    assert scorer.run(run("lookup", "refund")).score == 1.0 and scorer.run(run("refund")).score == 0.0
    assert in_order(["a", "b"], ["a", "b"], strict=True)
    refused = scorer.run_batch([{"input": "", "output": "x"}, {"input": "Do it.", "output": ""}], on_invalid="record")
    assert [r.error_kind for r in refused] == ["invalid_run", "invalid_run"]  # Mastra throws on both
    with pytest.raises(ValueError, match="needs expected_tool or expected_tool_order"):
        build_scorer("code_tool_call_accuracy", None)


# --- trajectory measures ------------------------------------------------------------------------------

@pytest.mark.parametrize(("taken", "wanted", "ordering", "repeats", "expected"), [
    (["a", "b"], ["a", "b"], "relaxed", True, 1.0), (["a", "x", "b"], ["a", "b"], "relaxed", True, 1.0),
    (["b", "a"], ["a", "b"], "relaxed", True, 0.5),
    # strict: a at 0 matches, then x/b and b/- do not; one extra step costs half its share: 1/2 - 1/2 x 0.5
    (["a", "x", "b"], ["a", "b"], "strict", True, 0.25), (["a", "b", "c"], ["a", "b"], "strict", True, 0.75),
    (["b", "a"], ["a", "b"], "unordered", True, 1.0),
    (["a", "a", "b"], ["a", "b"], "relaxed", False, 0.9), ([], [], "relaxed", True, 1), (["a"], [], "relaxed", True, 0),
    (["a"], ["a", "b", "c"], "relaxed", True, 0.33),
])
def test_compare(taken: list[str], wanted: list[str], ordering: str, repeats: bool, expected: float) -> None:
    assert compare(steps(*taken), steps(*wanted), ordering, repeats)["score"] == expected


def test_compare_checks_pinned_fields() -> None:
    actual = [{"stepType": "tool_call", "name": "search", "toolArgs": {"q": 1.0}}]
    assert compare(actual, [{"stepType": "tool_call", "name": "search", "toolArgs": {"q": 1}}])["score"] == 1
    assert compare(actual, [{"stepType": "tool_call", "name": "search", "toolArgs": {"q": 2}}])["score"] == 0
    assert compare(actual, [{"name": "search", "toolArgs": {"q": 2}}])["score"] == 1  # no stepType: name only


def test_efficiency_blacklist_failures() -> None:
    found = efficiency({"steps": steps("a", "b", "c", "d")}, max_steps=2, no_redundant_calls=False)
    assert found["score"] == 0.0 and found["overStepBudget"]  # 1 - (4 - 2) / 2
    same = [{"stepType": "tool_call", "name": "a", "toolArgs": {"q": 1}}] * 2
    assert efficiency({"steps": same})["score"] == 0.8
    assert efficiency({"steps": same})["redundantCalls"] == [{"name": "a", "index": 1}]
    with pytest.raises(ValueError, match="Cannot evaluate token budget"):
        efficiency({"steps": same}, max_total_tokens=100)
    with pytest.raises(ValueError, match="Cannot evaluate duration budget"):
        efficiency({"steps": same}, max_total_duration_ms=100)
    assert blacklist(steps("a", "b", "c"), ["z"], [["b", "c"]]) == {"score": 0, "violatedTools": [],
                                                                   "violatedSequences": [["b", "c"]]}
    failing = [{"stepType": "tool_call", "name": "a", "success": False}] * 4 + [{"stepType": "tool_call", "name": "b"}]
    found = tool_failures(failing, max_retries_per_tool=1)
    assert found["score"] == 0.6 and found["patterns"][0]["alternativeTool"] == "b"  # 3 retries, 2 over: 0.4 off
    assert js_round2(0.285) == 0.29 and js_round2(1.005) == 1.01  # Mastra's EPSILON rounding


def test_steps_of_reads_a_runs_calls_as_extract_trajectory() -> None:
    made = steps_of([ToolCall("a", '{"q":1}', "ok"), ToolCall("b", '"text"', None, "output-error")])
    assert made == [{"stepType": "tool_call", "name": "a", "toolArgs": {"q": 1}, "toolResult": {"value": "ok"},
                     "success": True},
                    {"stepType": "tool_call", "name": "b", "toolArgs": {"value": "text"}, "success": False}]
    flagged = steps_of([ToolCall("a", "{}", '{"ok":false}', "result", is_error=True)])  # Mastra: isError !== true
    assert flagged == [{"stepType": "tool_call", "name": "a", "toolArgs": {}, "toolResult": {"ok": False},
                        "success": False}]


# --- code trajectory accuracy ------------------------------------------------------------------------

def test_code_trajectory_accuracy() -> None:
    scorer = build_scorer("code_trajectory_accuracy", None)
    assert scorer.run(run("a", "x", "b", expected=["a", "b"])).score == 1.0
    assert scorer.run(run("a", "x", "b", expected={"steps": ["a", "b"], "ordering": "strict"})).score == 0.25
    assert scorer.run(run("b", "a", expected={"steps": steps("a", "b")})).score == 0.5
    assert scorer.run_batch([run("a")], on_invalid="record")[0].error_kind == "invalid_run"  # no expectation
    fixed = build_scorer("code_trajectory_accuracy", None,
                         options={"expected_trajectory": ["a", "b"], "ordering": "unordered"})
    assert fixed.run(run("b", "a", expected=["z"])).score == 1.0  # the option wins over the run's steps
    with pytest.raises(ValueError, match="ordering must be one of"):
        build_scorer("code_trajectory_accuracy", None, options={"ordering": "loose"})


def test_an_expectation_change_is_scored_again() -> None:
    """The run's expectation is keyed (a changed one is not resumed): it is among the fields read."""
    scorer = build_scorer("code_trajectory_accuracy", None)
    assert "expectation" in scorer.shown_fields and "tool_calls" in scorer.shown_fields
    assert scorer.sample(run("a", expected={"steps": ["a"], "maxSteps": 2})).expectation == {"steps": ["a"],
                                                                                                "maxSteps": 2}


# --- code trajectory ----------------------------------------------------------------------------------

def trajectory(defaults: dict[str, Any] | None = None, **weights: float) -> Any:
    return build_scorer("code_trajectory", None, options={"defaults": defaults or {}, "weights": weights or None})


def test_code_trajectory_weights_the_dimensions() -> None:
    assert trajectory().run(run("a")).score == 1.0  # nothing configured
    assert trajectory({"steps": ["a", "b"]}).run(run("a")).score == 0.5  # accuracy alone
    # accuracy 0.5 (weight 0.4), efficiency 1 (0.3): 0.4/0.7 x 0.5 + 0.3/0.7 x 1
    assert trajectory({"steps": ["a", "b"], "maxSteps": 3}).run(run("a")).score == 0.71
    assert trajectory({"steps": ["a"], "blacklistedTools": ["rm"]}).run(run("a", "rm")).score == 0.0
    assert trajectory({"steps": ["a", "b"]}, accuracy=1, efficiency=0).run(run("a")).score == 0.5
    # the run's expectation overrides the defaults key by key
    assert trajectory({"steps": ["a", "b"]}).run(run("a", expected={"steps": ["a"]})).score == 1.0


def test_code_trajectory_tool_failures_and_nesting() -> None:
    failing = run("a", "a", "a", "a", "b", failed=("a",))
    assert trajectory({"maxRetriesPerTool": 1}).run(failing).score == 0.6  # tool failures alone: 2 retries over
    nested = {"steps": [{"name": "a", "children": {"steps": ["inner"]}}]}
    result = trajectory(nested).run(run("a"))  # a's children (none, from messages) miss "inner": nested 0
    assert result.preprocess_step_result["nested"][0]["score"] == 0 and result.score == 0.7  # 0.7 x 1 + 0.3 x 0
    assert "Nested scores: a: 0." in (result.reason or "")


def test_code_trajectory_budgets_it_cannot_check_are_unscored() -> None:
    result = trajectory({"maxTotalTokens": 100}).run_batch([run("a")], on_invalid="record")[0]
    assert result.score is None and "Cannot evaluate token budget" in (result.error or "")
