"""Tool call accuracy on the scripted fake judge: Mastra's share of appropriate tool calls, its
no-call rule (0 if a tool is missing, else 1), the refusals, the grammar's fixed verdict count
and tool names, the probability twin, and direct mode."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from localjudge import InvalidRunError
from localjudge.judge import Generation
from localjudge.scorers.judged.tool_call_accuracy import tool_call_accuracy_scorer, verdicts_schema
from tests.fakes import FakeJudgeFactory

TOOLS: list[Any] = ["get_weather", {"id": "get_forecast", "description": "Five-day forecast."},
         {"type": "function", "function": {"name": "send_email", "description": "Sends an email."}}]


def answer(labels: list[str], missing: list[str] | None = None) -> dict[str, Any]:
    return {"evaluations": [{"verdict": label, "reason": f"r{i}"} for i, label in enumerate(labels)],
            "missing_tools": missing or []}


def run(calls: int, **more: Any) -> dict[str, Any]:
    names = ["get_weather", "get_forecast", "send_email"]
    return {"input": "What is the weather in Paris?", "output": "It is sunny in Paris.",
            "tool_calls": [{"tool_name": names[i % 3], "args": {"city": "Paris"}} for i in range(calls)], **more}


# Mastra: appropriate / total; no evaluations: 0 if missingTools is non-empty, else 1.
@pytest.mark.parametrize(("labels", "missing", "scale", "expected"), [
    (["yes", "yes"], [], 1.0, 1.0),
    (["yes", "no"], [], 1.0, 0.5),
    (["no", "no", "yes"], [], 1.0, 0.33),
    (["yes", "no", "no"], [], 10.0, 3.33),
    (["no"], [], 1.0, 0.0),
    (["yes"], ["send_email"], 1.0, 1.0),  # with calls, a missing tool does not lower the score
    ([], [], 1.0, 1.0),  # no calls, none missing
    ([], ["get_weather"], 1.0, 0.0),  # no calls, a tool missed
    ([], [], 5.0, 5.0),
    ([], ["get_weather", "send_email"], 5.0, 0.0),
])
def test_the_score_is_the_share_of_appropriate_calls(labels: list[str], missing: list[str], scale: float,
                                                     expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ToolCallVerdicts=answer(labels, missing))
    result = tool_call_accuracy_scorer(judge, scale=scale, available_tools=TOOLS).run(run(len(labels)))
    assert result.score == expected, result
    found = result.analyze_step_result
    assert [e["verdict"] for e in found["evaluations"]] == labels and found["missing_tools"] == missing
    assert [e["tool_called"] for e in found["evaluations"]] == result.preprocess_step_result["actual_tools"]
    assert result.preprocess_step_result["has_tool_calls"] == bool(labels)


def test_free_missing_tool_names_without_a_tool_list(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ToolCallVerdicts=answer([], ["web_search", "web_search"]))
    result = tool_call_accuracy_scorer(judge).run(run(0))
    assert result.score == 0.0 and result.analyze_step_result["missing_tools"] == ["web_search"], "repeats count once"
    text = str(judge.calls[0].prompts[0][-1]["content"])
    assert "The agent called no tool." in text and "<<<TOOLS" not in text


def test_the_grammar_fixes_one_verdict_per_call_and_the_missing_tool_names(fake_judge: FakeJudgeFactory) -> None:
    fields = verdicts_schema(3, ("get_forecast", "send_email")).model_json_schema()["properties"]
    assert (fields["evaluations"]["minItems"], fields["evaluations"]["maxItems"]) == (3, 3)
    assert fields["missing_tools"]["items"]["enum"] == ["get_forecast", "send_email"]
    assert fields["missing_tools"]["maxItems"] == 2
    scorer = tool_call_accuracy_scorer(fake_judge(ToolCallVerdicts=answer(["yes"])), available_tools=TOOLS)
    assert scorer.run(run(2)).error_kind == "invalid_output", "one verdict for two calls"
    for missing in (["web_search"], ["get_weather"]):  # not an available tool; a tool that was called
        result = tool_call_accuracy_scorer(fake_judge(ToolCallVerdicts=answer(["yes"], missing)),
                                           available_tools=TOOLS).run(run(1))
        assert result.score is None and result.error_kind == "invalid_output", missing


def test_without_an_input_the_run_is_refused_before_any_call(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    bare = {"output": "Sunny.", "tool_calls": ["get_weather"]}
    with pytest.raises(InvalidRunError, match="tool_call_accuracy needs an input"):
        tool_call_accuracy_scorer(judge).run(bare)
    (result,) = tool_call_accuracy_scorer(judge).run_batch([bare], on_invalid="record")
    assert result.score is None and result.error_kind == "invalid_run" and not judge.calls


def test_an_empty_output_without_tool_calls_is_unscored_before_any_call(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = tool_call_accuracy_scorer(judge).run({"input": "Weather?", "output": ""})
    assert result.score is None and result.error_kind == "unscorable" and "needs an output" in (result.error or "")
    assert not judge.calls
    tools_only = tool_call_accuracy_scorer(fake_judge(ToolCallVerdicts=answer(["yes"]))).run(
        {"input": "Weather?", "output": "", "tool_calls": ["get_weather"]})
    assert tools_only.score == 1.0, "tool calls without text are an output"


def test_over_20_tool_calls_are_asked_in_parts_of_one_call_and_joined_in_order(fake_judge: FakeJudgeFactory) -> None:
    """25 calls: parts of 20 and 5 in one call, numbered on; the share over all 25, each verdict on
    its own call (issue 46 item 3: no cap)."""
    def judged(prompt: Any) -> dict[str, Any]:
        numbers = [int(n) for n in re.findall(r"^(\d+)\. \w+ ", str(prompt[-1]["content"]), re.M)]
        return answer(["no" if n % 5 == 0 else "yes" for n in numbers], ["send_email"])

    judge = fake_judge(ToolCallVerdicts=judged)
    result = tool_call_accuracy_scorer(judge).run(run(25))
    (call,) = [c for c in judge.calls if c.schema_names[0] == "ToolCallVerdicts"]
    assert len(call.prompts) == 2 and '21. send_email {"city":"Paris"}' in str(call.prompts[1][-1]["content"])
    found = result.analyze_step_result
    assert [e["verdict"] for e in found["evaluations"]] == ["no" if n % 5 == 0 else "yes" for n in range(1, 26)]
    assert found["missing_tools"] == ["send_email"] and result.score == 0.8


def test_the_judge_sees_the_request_the_tools_and_the_numbered_calls(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ToolCallVerdicts=answer(["yes", "no"], ["send_email"]))
    result = tool_call_accuracy_scorer(judge, available_tools=TOOLS).run(run(2))
    text = str(judge.calls[0].prompts[0][-1]["content"])
    assert "What is the weather in Paris?" in text and "It is sunny in Paris." in text
    assert "get_weather\nget_forecast: Five-day forecast.\nsend_email: Sends an email." in text
    assert '1. get_weather {"city":"Paris"}\n2. get_forecast {"city":"Paris"}' in text
    assert "Give exactly 2 verdicts" in text
    assert "send_email" in (result.generate_reason_prompt or "") and "- no: get_forecast (r1)" in (
        result.generate_reason_prompt or "")


def test_tool_calls_are_read_from_mastra_output_messages(fake_judge: FakeJudgeFactory) -> None:
    invocation = {"toolCallId": "c1", "toolName": "get_weather", "args": {"city": "Oslo"}, "result": {"temp": 3},
                  "state": "result"}
    output = [{"role": "assistant", "content": {"format": 2, "parts": [
        {"type": "tool-invocation", "toolInvocation": invocation}, {"type": "text", "text": "3 degrees in Oslo."}]}}]
    judge = fake_judge(ToolCallVerdicts=answer(["yes"]))
    result = tool_call_accuracy_scorer(judge).run({"input": "Weather in Oslo?", "output": output})
    assert result.score == 1.0 and result.analyze_step_result["evaluations"][0]["args"] == '{"city":"Oslo"}'
    assert '1. get_weather {"city":"Oslo"}' in str(judge.calls[0].prompts[0][-1]["content"])


def test_an_mcp_toolset_of_100_tools_is_scored(fake_judge: FakeJudgeFactory) -> None:
    """Issue 60: no cap on the available tools (an MCP toolset passes 30 easily). Every tool is
    shown, and the missing tool named may be the 100th; the schemas of lists within 30 tools are
    as before (their prompt hashes unchanged)."""
    tools = [{"name": f"tool_{i:03d}", "description": f"Does thing {i}."} for i in range(100)]
    judge = fake_judge(ToolCallVerdicts=answer(["yes", "no"], ["tool_099"]), Reason={"reason": "r"})
    given = {"input": "Do thing 1, then thing 99.", "output": "Done.",
             "tool_calls": [{"tool_name": "tool_001", "args": {}}, {"tool_name": "tool_002", "args": {}}]}
    result = tool_call_accuracy_scorer(judge, available_tools=tools).run(given)
    assert result.score == 0.5 and result.analyze_step_result["missing_tools"] == ["tool_099"]
    assert all(f"tool_{i:03d}: Does thing {i}." in (result.analyze_prompt or "") for i in range(100))
    missing = verdicts_schema(2, tuple(t["name"] for t in tools[2:])).model_json_schema()["properties"]
    assert missing["missing_tools"]["maxItems"] == 30 and "tool_099" in json.dumps(missing)
    assert verdicts_schema(2, ("a", "b", "c")).model_json_schema()["properties"]["missing_tools"]["maxItems"] == 3


@pytest.mark.parametrize(("tools", "error"), [
    ("get_weather", TypeError), ({"name": "x"}, TypeError), ([""], ValueError),
    ([{"description": "no name"}], ValueError), (["a", "a"], ValueError),
    ([{"name": "a", "description": 3}], ValueError),
])
def test_bad_tool_lists_are_refused_when_the_scorer_is_built(tools: Any, error: type[Exception],
                                                             fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(error):
        tool_call_accuracy_scorer(fake_judge(), available_tools=tools)


def test_prob_score_is_the_mean_yes_probability(fake_judge: FakeJudgeFactory) -> None:
    out = Generation(text=json.dumps(answer(["yes", "no"])), finished=True, new_tokens=9,
                     label_probs=({"yes": 0.9, "no": 0.1}, {"yes": 0.3, "no": 0.7}))
    result = tool_call_accuracy_scorer(fake_judge(ToolCallVerdicts=out), scale=2.0).run(run(2))
    assert result.prob_score == round((0.9 + 0.3) / 2 * 2, 4)
    no_calls = Generation(text=json.dumps(answer([])), finished=True, new_tokens=5, label_probs=({"x": 1.0},))
    assert tool_call_accuracy_scorer(fake_judge(ToolCallVerdicts=no_calls)).run(run(0)).prob_score is None


@pytest.mark.parametrize(("verdict", "scale", "expected"), [("yes", 1.0, 1.0), ("no", 1.0, 0.0), ("yes", 4.0, 4.0)])
def test_direct_mode_is_one_yes_or_no(verdict: str, scale: float, expected: float,
                                      fake_judge: FakeJudgeFactory) -> None:
    out = Generation(text=json.dumps({"verdict": verdict, "reason": "why"}), finished=True, new_tokens=4,
                     label_probs=({"yes": 0.75, "no": 0.25},))
    judge = fake_judge(DirectVerdict=out)
    result = tool_call_accuracy_scorer(judge, scale=scale, mode="direct", available_tools=TOOLS).run(run(1))
    assert (result.score, result.reason, result.prob_score) == (expected, "why", 0.75 * scale)
    text = str(judge.calls[0].prompts[0][-1]["content"])
    assert '1. get_weather {"city":"Paris"}' in text and "Did the agent choose its tools well?" in text
    with pytest.raises(InvalidRunError):
        tool_call_accuracy_scorer(judge, mode="direct").run({"output": "x"})
