"""The run fields beyond input, output and context: how `to_sample` reads each (run keys or
Mastra's camelCase, explicit or derived from chat messages). (`Scorer(requires=...)` refusing a
run without one: tests/unit/scoring/test_requires.py; result keys that hash a field only where
the scorer shows it: tests/unit/evaluation/test_result_keys.py.)
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from localjudge.samples.runs import InvalidRunError, Sample, to_sample
from localjudge.samples.tool_calls import ToolCall, extract_tool_calls, extract_tool_results

BASE = {"input": "Where is Paris?", "output": "In France."}


def sample(**fields: Any) -> Sample:
    return to_sample({**BASE, **fields})


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def mastra(role: str, text: str = "", invocations: list[dict[str, Any]] | None = None,
           legacy: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A Mastra stored message (format 2): text and tool-invocation parts, legacy toolInvocations."""
    parts = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "tool-invocation", "toolInvocation": i} for i in invocations or []]
    content: dict[str, Any] = {"format": 2, "parts": parts}
    if legacy:
        content["toolInvocations"] = legacy
    return {"id": "m", "role": role, "content": content}


def invocation(call_id: str, name: str, state: str, result: Any = None, args: Any = None) -> dict[str, Any]:
    found = {"toolCallId": call_id, "toolName": name, "args": args or {}, "state": state}
    return {**found, "result": result} if result is not None else found


# --- ground truth, baseline response -------------------------------------------------------------

@pytest.mark.parametrize(("fields", "expected"), [
    ({"ground_truth": "  Paris is in France. "}, "Paris is in France."),
    ({"groundTruth": "Paris"}, "Paris"),
    ({"ground_truth": "ours", "groundTruth": "Mastra's"}, "ours"),
    ({"ground_truth": None, "groundTruth": "Mastra's"}, "Mastra's"),  # None: no value, the next name
    ({"ground_truth": {"city": "Paris", "rank": 1}}, '{"city":"Paris","rank":1}'),  # JSON text, as Mastra's
    ({"ground_truth": ["Paris", "Lyon"]}, '["Paris","Lyon"]'),
    ({"ground_truth": 42}, "42"),
    ({"ground_truth": "Caf\u0065\u0301\x00"}, "Caf\u00e9"),  # cleaned as every text
    ({"ground_truth": "   "}, None),
    ({"ground_truth": math.nan}, None),  # an empty CSV cell
    ({}, None),
])
def test_ground_truth(fields: dict[str, Any], expected: str | None) -> None:
    assert sample(**fields).ground_truth == expected


@pytest.mark.parametrize(("fields", "expected"), [
    ({"baseline_response": "Paris is in France."}, "Paris is in France."),
    ({"baselineResponse": "Mastra's"}, "Mastra's"),
    ({"baseline_response": {"text": "x"}}, '{"text":"x"}'),
    ({"baseline_response": ""}, None),
    ({}, None),
])
def test_baseline_response(fields: dict[str, Any], expected: str | None) -> None:
    assert sample(**fields).baseline_response == expected


# --- system --------------------------------------------------------------------------------------

AGENT_INPUT = {"inputMessages": [mastra("user", "Where is Paris?")],
               "systemMessages": [{"role": "system", "content": "You are a geography tutor."}],
               "taggedSystemMessages": {"memory": [{"role": "system", "content": "The user likes maps."}]}}


@pytest.mark.parametrize(("run", "expected"), [
    ({**BASE, "system": " Answer briefly. "}, "Answer briefly."),
    ({**BASE, "system": ["Answer briefly.", "Be kind."]}, "Answer briefly.\nBe kind."),
    ({**BASE, "system": []}, None),
    ({**BASE, "input": [{"role": "system", "content": "Answer briefly."}, {"role": "developer", "content": "Be kind."},
                        user("Where is Paris?")]}, "Answer briefly.\nBe kind."),
    ({**BASE, "input": AGENT_INPUT}, "You are a geography tutor.\nThe user likes maps."),
    ({**BASE, "input": AGENT_INPUT, "system": "Given."}, "Given."),  # the run's own field wins
    ({**BASE, "input": [user("Where is Paris?")]}, None),
    (BASE, None),
])
def test_system(run: dict[str, Any], expected: str | None) -> None:
    assert to_sample(run).system == expected


def test_a_system_that_is_not_text_is_refused() -> None:
    with pytest.raises(InvalidRunError, match="system must be a string or a list of strings, got int"):
        sample(system=3)
    with pytest.raises(InvalidRunError, match="got list"):
        sample(system=["a", 1])


# --- conversation ----------------------------------------------------------------------------------

TOOL_ONLY = {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}


@pytest.mark.parametrize(("run", "expected"), [
    pytest.param({**BASE, "conversation": [{"role": "system", "content": "Be brief."}, user("Hi"), assistant("Hello"),
                                           {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
                                           user("Weather?"), assistant("Sunny.")]},
                 (("user", "Hi"), ("assistant", "Hello"), ("user", "Weather?"), ("assistant", "Sunny.")),
                 id="explicit: user and assistant messages with text"),
    pytest.param({"input": [{"role": "system", "content": "Be brief."}, user("Hi"), assistant("Hello"),
                            user("Weather?")], "output": [TOOL_ONLY, assistant(" Sunny. ")]},
                 (("user", "Hi"), ("assistant", "Hello"), ("user", "Weather?"), ("assistant", "Sunny.")),
                 id="derived: input messages then output messages"),
    pytest.param({"input": {"inputMessages": [mastra("user", "Weather?")],
                            "rememberedMessages": [mastra("user", "Hi"), mastra("assistant", "Hello")]},
                  "output": [mastra("assistant", "Sunny.")]},
                 (("user", "Hi"), ("assistant", "Hello"), ("user", "Weather?"), ("assistant", "Sunny.")),
                 id="Mastra agent input: remembered messages first"),
    pytest.param({"input": [user("Hi"), assistant("Hello"), user("Weather?")], "output": "Sunny."},
                 (("user", "Hi"), ("assistant", "Hello"), ("user", "Weather?"), ("assistant", "Sunny.")),
                 id="message input, string output: the answer is the last turn"),
    pytest.param({"input": "Weather?", "output": [assistant("Let me look."), assistant("Sunny.")]},
                 (("user", "Weather?"), ("assistant", "Let me look."), ("assistant", "Sunny.")),
                 id="string input, message output"),
    pytest.param({"output": {"role": "assistant", "text": "Sunny."}}, (("assistant", "Sunny."),),
                 id="a single Mastra {role, text} message, no input"),
    pytest.param({"input": "Weather?", "output": "Sunny."}, None, id="plain strings: none"),
])
def test_conversation(run: dict[str, Any], expected: tuple[tuple[str, str], ...] | None) -> None:
    assert to_sample(run).conversation == expected


def test_turns_are_the_conversation_or_the_input_and_output() -> None:
    assert sample().turns == (("user", "Where is Paris?"), ("assistant", "In France."))
    assert to_sample({"output": "In France."}).turns == (("assistant", "In France."),)
    explicit = sample(conversation=[user("Hi"), assistant("Hello")])
    assert explicit.turns == explicit.conversation == (("user", "Hi"), ("assistant", "Hello"))


@pytest.mark.parametrize(("conversation", "message"), [
    ("Hi, then hello.", "conversation must be a list of chat messages"),
    ([{"role": "narrator", "content": "x"}], r"conversation\[0\]: unknown chat role 'narrator'"),
    ([user("Hi"), 3], r"conversation\[1\]: a chat message must be a dict"),
])
def test_a_bad_conversation_is_refused(conversation: Any, message: str) -> None:
    with pytest.raises(InvalidRunError, match=message):
        sample(conversation=conversation)


# --- tool calls --------------------------------------------------------------------------------------

MASTRA_OUTPUT = [
    mastra("assistant", "", invocations=[
        invocation("t1", "search", "result", result={"hits": 2}, args={"q": "Paris"}),
        invocation("t2", "weather", "call", args={"city": "Paris"}),
        invocation("t3", "book", "output-error", args={"date": "monday"}),
        invocation("t4", "draft", "partial-call"),  # still streaming: not a call made
    ], legacy=[invocation("t1", "search", "call"), invocation("t5", "legacy_tool", "result", result="old")]),
    mastra("assistant", "Paris is in France."),
]

OPENAI_OUTPUT = [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
        {"id": "c2", "type": "function", "function": {"name": "map", "arguments": "not json"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
    assistant("It is sunny in Paris."),
]


@pytest.mark.parametrize(("fields", "expected"), [
    pytest.param({"tool_calls": ["search", " weather "]}, (ToolCall("search", "{}", None, "call"),
                                                          ToolCall("weather", "{}", None, "call")), id="names"),
    pytest.param({"toolCalls": [{"tool_name": "search", "args": {"q": "Paris"}, "result": {"hits": 2}},
                                {"toolName": "weather", "arguments": '{"city": "Paris"}'},
                                {"name": "book", "state": "output-error"},
                                {"tool_name": "note", "result": "Saved.", "state": "result"}]},
                 (ToolCall("search", '{"q":"Paris"}', '{"hits":2}', "result"),
                  ToolCall("weather", '{"city":"Paris"}', None, "call"),
                  ToolCall("book", "{}", None, "output-error"),
                  ToolCall("note", "{}", "Saved.", "result")), id="dicts, camelCase field"),
    pytest.param({"output": MASTRA_OUTPUT},
                 (ToolCall("search", '{"q":"Paris"}', '{"hits":2}', "result"),  # the part wins over legacy
                  ToolCall("legacy_tool", "{}", "old", "result"),
                  ToolCall("weather", '{"city":"Paris"}', None, "call"),
                  ToolCall("book", '{"date":"monday"}', None, "output-error")), id="Mastra tool invocations"),
    pytest.param({"output": OPENAI_OUTPUT},
                 (ToolCall("weather", '{"city":"Paris"}', "Sunny", "result"),
                  ToolCall("map", "not json", None, "call")), id="OpenAI tool_calls and tool messages"),
    pytest.param({"output": OPENAI_OUTPUT, "tool_calls": ["given"]}, (ToolCall("given", "{}", None, "call"),),
                 id="an explicit list wins"),
    pytest.param({}, (), id="a string output: none"),
])
def test_tool_calls(fields: dict[str, Any], expected: tuple[ToolCall, ...]) -> None:
    assert sample(**fields).tool_calls == expected


def test_the_output_text_skips_tool_only_messages() -> None:
    assert sample(output=OPENAI_OUTPUT).output == "It is sunny in Paris."
    assert sample(output=MASTRA_OUTPUT).output == "Paris is in France."


@pytest.mark.parametrize(("tool_calls", "message"), [
    ("search", "tool_calls must be a list of tool calls, got str"),
    ({"tool_name": "search"}, "tool_calls must be a list of tool calls, got dict"),
    ([3], r"tool_calls\[0\]: a tool call must be a name or a dict with tool_name, got int"),
    (["search", {"args": {}}], r"tool_calls\[1\]: a tool call needs a tool_name"),
    ([" "], r"tool_calls\[0\]: a tool call needs a tool_name"),
    ([{"tool_name": "search", "state": "pending"}], "unknown tool call state 'pending'"),
])
def test_bad_tool_calls_are_refused(tool_calls: Any, message: str) -> None:
    with pytest.raises(InvalidRunError, match=message):
        sample(tool_calls=tool_calls)


def test_extract_tool_calls_keeps_every_state_and_results_only_results() -> None:
    calls = extract_tool_calls(MASTRA_OUTPUT)
    assert [(c["tool_name"], c["state"]) for c in calls] == [
        ("search", "result"), ("legacy_tool", "result"), ("weather", "call"), ("book", "output-error")]
    assert calls[0] == {"tool_name": "search", "tool_call_id": "t1", "args": {"q": "Paris"}, "result": {"hits": 2},
                        "state": "result", "is_error": False}
    assert extract_tool_results(MASTRA_OUTPUT) == [
        {"tool_name": "search", "tool_call_id": "t1", "args": {"q": "Paris"}, "result": {"hits": 2}},
        {"tool_name": "legacy_tool", "tool_call_id": "t5", "args": {}, "result": "old"}]
    assert [c["state"] for c in extract_tool_calls(OPENAI_OUTPUT)] == ["result", "call"]
    assert [r["result"] for r in extract_tool_results(OPENAI_OUTPUT)] == ["Sunny"]
    no_result = [mastra("assistant", invocations=[{"toolCallId": "x", "toolName": "t", "state": "result"}])]
    assert len(extract_tool_calls(no_result)) == 1 and extract_tool_results(no_result) == []  # result undefined
    assert extract_tool_calls("a string") == extract_tool_results("a string") == []


def test_a_result_flagged_is_error_keeps_the_flag() -> None:
    """Mastra's executor sets ``isError: true`` beside ``state: 'result'`` when a tool reported a
    failure: the call keeps the flag (its checks and trajectories read it as a failure), and its
    result is still a result (Mastra's `extractToolResults` does not read the flag)."""
    flagged = {**invocation("t1", "search", "result", result={"ok": False}), "isError": True}
    output = [mastra("assistant", invocations=[flagged, {**invocation("t2", "search", "result", result=1),
                                                        "isError": "true"}])]  # only true itself
    assert [c["is_error"] for c in extract_tool_calls(output)] == [True, False]
    assert [r["result"] for r in extract_tool_results(output)] == [{"ok": False}, 1]
    assert sample(output=output).tool_calls == (ToolCall("search", "{}", '{"ok":false}', "result", is_error=True),
                                                ToolCall("search", "{}", "1", "result"))
    assert sample(output="x", tool_calls=[{"tool_name": "a", "result": 1, "isError": True},
                                          {"name": "b", "result": 2, "is_error": True}]).tool_calls == (
        ToolCall("a", "{}", "1", "result", is_error=True), ToolCall("b", "{}", "2", "result", is_error=True))


# --- expected trajectory -------------------------------------------------------------------------------

MASTRA_STEPS = [{"name": "search", "stepType": "tool_call", "data": {"q": "Paris"}}, {"name": "answer"}]


@pytest.mark.parametrize(("fields", "expected"), [
    ({"expected_trajectory": ["search", "answer"]}, ("search", "answer")),
    ({"expectedTrajectory": MASTRA_STEPS}, ('[tool_call] search (data: {"q":"Paris"})', "answer")),
    ({"expected_trajectory": {"steps": MASTRA_STEPS}}, ('[tool_call] search (data: {"q":"Paris"})', "answer")),
    ({"expected_trajectory": [{"name": " search ", "stepType": 3, "data": "free text"}]},
     ("search (data: free text)",)),
    ({"expected_trajectory": []}, None),
    ({}, None),
])
def test_expected_trajectory(fields: dict[str, Any], expected: tuple[str, ...] | None) -> None:
    assert sample(**fields).expected_trajectory == expected


@pytest.mark.parametrize(("trajectory", "message"), [
    ("search", "expected_trajectory must be a list of step names or steps"),
    ({"nosteps": []}, "expected_trajectory must be a list"),
    ([{"stepType": "tool_call"}], r"expected_trajectory\[0\]: a step must be a name or a dict with a name"),
    (["search", 3], r"expected_trajectory\[1\]"),
])
def test_a_bad_trajectory_is_refused(trajectory: Any, message: str) -> None:
    with pytest.raises(InvalidRunError, match=message):
        sample(expected_trajectory=trajectory)
