"""Runs as Mastra (and OpenAI-style agents) write them, tool results as context, `get_context`.

Table-driven: every input/output shape Mastra's judges accept becomes the `Sample` given beside
it; `extract_tool_results` reads Mastra's tool invocations (parts and legacy) and OpenAI `tool`
messages; the faithfulness scorer falls back to tool results when no context is given (as
Mastra's does); `get_context` is called once per run, Mastra's way (keywords, sync or async),
and sees the whole item. Mastra's documentation examples, ported, run on the fake judge.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from localjudge import (
    evaluate,
    extract_tool_results,
    faithfulness_scorer,
    hallucination_scorer,
    run_evals,
    toxicity_scorer,
)
from localjudge.samples.runs import InvalidRunError, Sample, to_sample
from tests.fakes import FakeJudgeFactory


def mastra_message(role: str, *parts: dict[str, Any], legacy: list[dict[str, Any]] | None = None,
                   text: str | None = None) -> dict[str, Any]:
    """A MastraDBMessage: `{id, role, content: {format: 2, parts, content?, toolInvocations?}}`."""
    content: dict[str, Any] = {"format": 2, "parts": list(parts)}
    if text is not None:
        content["content"] = text
    if legacy is not None:
        content["toolInvocations"] = legacy
    return {"id": f"m-{role}", "role": role, "createdAt": "2026-01-01T00:00:00Z", "content": content}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def invocation(call_id: str, name: str, result: Any, state: str = "result") -> dict[str, Any]:
    return {"toolCallId": call_id, "toolName": name, "args": {"city": "Paris"}, "result": result, "state": state}


def tool_part(call_id: str, name: str, result: Any, state: str = "result") -> dict[str, Any]:
    return {"type": "tool-invocation", "toolInvocation": invocation(call_id, name, result, state)}


WEATHER = {"temperature": 18, "conditions": "sunny"}
AGENT_OUTPUT = [
    mastra_message("assistant", tool_part("c1", "weather", WEATHER), text_part("Checking."),
                   text_part("It is 18 degrees and sunny in Paris.")),
]
OPENAI_OUTPUT = [
    {"role": "assistant", "content": None,
     "tool_calls": [
         {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
     ]},
    {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(WEATHER)},
    {"role": "assistant", "content": "It is 18 degrees and sunny in Paris."},
]

SHAPES = [  # (id, run, the Sample it must become)
    ("strings", {"runId": "r1", "input": "Weather?", "output": "Sunny."}, Sample("r1", "Weather?", "Sunny.")),
    ("run_id-wins-over-runId", {"run_id": "a", "runId": "b", "output": "x"}, Sample("a", "", "x")),
    ("agent-input", {"runId": "r", "input": {"inputMessages": [mastra_message("user", text_part("Weather in Paris?"))],
                                            "rememberedMessages": [], "systemMessages": []},
                     "output": AGENT_OUTPUT}, Sample("r", "Weather in Paris?", "It is 18 degrees and sunny in Paris.")),
    ("messages-input", {"runId": "r", "input": {"messages": [{"role": "system", "content": "s"},
                                                             {"role": "user", "content": "Hi?"}]},
                        "output": "Hello."}, Sample("r", "Hi?", "Hello.")),
    ("prompt-input", {"runId": "r", "input": {"prompt": "Hi?"}, "output": "Hello."}, Sample("r", "Hi?", "Hello.")),
    ("text-output", {"runId": "r", "output": {"text": "Hello."}}, Sample("r", "", "Hello.")),
    ("content-output", {"runId": "r", "output": {"content": "Hello."}}, Sample("r", "", "Hello.")),
    ("single-message-output", {"runId": "r", "output": {"role": "assistant", "content": "Hello."}},
     Sample("r", "", "Hello.")),
    ("mastra-content-string", {"runId": "r", "output": [mastra_message("assistant", text_part("part"), text="whole")]},
     Sample("r", "", "whole")),
    ("mastra-last-text-part", {"runId": "r", "output": [mastra_message("assistant", text_part("a"), text_part("b"))]},
     Sample("r", "", "b")),
    ("openai-tool-calls", {"runId": "r", "input": [{"role": "user", "content": "Weather?"}], "output": OPENAI_OUTPUT},
     Sample("r", "Weather?", "It is 18 degrees and sunny in Paris.")),
    ("trailing-empty-assistant", {"runId": "r", "output": [{"role": "assistant", "content": "Answer."},
                                                           {"role": "assistant", "content": ""}]},
     Sample("r", "", "Answer.")),
    ("trailing-tool-only", {"runId": "r", "output": [{"role": "assistant", "content": "Answer."}, *OPENAI_OUTPUT[:2]]},
     Sample("r", "", "Answer.")),
    ("tool-calls-only", {"runId": "r", "output": OPENAI_OUTPUT[:2]}, Sample("r", "", "")),
    ("openai-content-parts",
     {"runId": "r", "output": [{"role": "assistant", "content": [text_part("a"), text_part("b")]}]},
     Sample("r", "", "a\nb")),
]


@pytest.mark.parametrize(("run", "sample"), [pytest.param(r, s, id=i) for i, r, s in SHAPES])
def test_every_shape_becomes_its_sample(run: dict[str, Any], sample: Sample) -> None:
    made = to_sample(run)  # the texts judged (the other fields: tests/unit/samples/test_run_fields.py)
    assert (made.run_id, made.input, made.output, made.context) == (sample.run_id, sample.input, sample.output,
                                                                     sample.context)


def test_a_run_without_an_id_gets_one_derived_from_its_texts() -> None:
    first, again = to_sample({"input": "q", "output": "a"}), to_sample({"input": "q", "output": "a"})
    assert first.run_id == again.run_id and first.run_id.startswith("run-")  # type: ignore[union-attr]
    assert to_sample({"input": "q", "output": "b"}).run_id != first.run_id


@pytest.mark.parametrize(("output", "match"), [
    ({"answer": "x"}, "must be a string or a list of chat messages, got dict"),
    ([{"role": "assistant", "content": None}], "content must be a string, got NoneType"),  # no tool calls
    ([mastra_message("assistant", {"type": "text", "text": 3})], "text content parts must hold strings"),
    ([{"role": "user", "content": "only a question"}], "output has no assistant message"),
])
def test_shapes_that_stay_invalid(output: Any, match: str) -> None:
    with pytest.raises(InvalidRunError, match=match):
        to_sample({"output": output})


def test_extract_tool_results_from_mastra_parts_legacy_and_openai() -> None:
    output = [mastra_message("assistant", tool_part("c1", "weather", WEATHER), tool_part("c3", "search", None, "call"),
                             legacy=[invocation("c1", "weather", "stale"), invocation("c2", "clock", "09:00")])]
    found = extract_tool_results(output)
    assert [(r["tool_name"], r["tool_call_id"], r["result"]) for r in found] == [
        ("weather", "c1", WEATHER), ("clock", "c2", "09:00")]  # parts win on c1; c3 has no result yet
    assert extract_tool_results(OPENAI_OUTPUT) == [
        {"tool_name": "weather", "tool_call_id": "call_1", "args": '{"city": "Paris"}', "result": json.dumps(WEATHER)}]
    assert extract_tool_results("a plain answer") == [] and extract_tool_results({"text": "x"}) == []


SUNNY = {"Claims": {"claims": ["It is sunny in Paris."]}}  # with the default verdicts, "yes", and reason, "ok"


def test_faithfulness_falls_back_to_tool_results_as_mastra_does(fake_judge: FakeJudgeFactory) -> None:
    """Mastra's faithfulness example: an agent run with no context given is judged against the
    results of the tools it called."""
    judge = fake_judge(SUNNY)
    for output in (AGENT_OUTPUT, OPENAI_OUTPUT):
        result = faithfulness_scorer(judge).run({"input": "Weather in Paris?", "output": output})
        assert result.score == 1.0, result.error
        assert '"temperature": 18' in (result.analyze_prompt or "")
    static = faithfulness_scorer(judge, context=["Paris is rainy."]).run({"output": AGENT_OUTPUT})
    assert "rainy" in (static.analyze_prompt or "") and "temperature" not in (static.analyze_prompt or "")
    with pytest.raises(InvalidRunError, match="needs context.*or tool results in its output"):
        faithfulness_scorer(judge).run({"output": "No tools here."})


def test_hallucination_gets_tool_results_through_get_context_as_in_mastras_docs(fake_judge: FakeJudgeFactory) -> None:
    """The docs' pattern: getContext: ({ run }) => extractToolResults(run.output).map(t =>
    JSON.stringify({ tool: t.toolName, result: t.result }))."""
    def get_context(*, run: dict[str, Any], **rest: Any) -> list[str]:
        tools = extract_tool_results(run["output"])
        return [json.dumps({"tool": t["tool_name"], "result": t["result"]}) for t in tools]

    result = hallucination_scorer(fake_judge(SUNNY), get_context=get_context).run({"output": AGENT_OUTPUT})
    assert result.score == 1.0 and '"tool": "weather"' in (result.analyze_prompt or "")
    with pytest.raises(InvalidRunError, match="hallucination needs context"):  # no automatic fallback here
        hallucination_scorer(fake_judge(SUNNY)).run({"output": AGENT_OUTPUT})


def test_get_context_is_called_once_per_run_mastras_way_and_sees_the_whole_item(fake_judge: FakeJudgeFactory) -> None:
    seen: list[dict[str, Any]] = []

    def get_context(*, run: dict[str, Any], results: dict[str, Any], step: str) -> list[str]:
        seen.append({"run": run, "results": results, "step": step})
        return [run["ground_truth"]]

    rows = [{"input": "q", "output": "It is sunny.", "ground_truth": f"truth {i}"} for i in range(3)]
    ev = evaluate(rows, [hallucination_scorer(fake_judge(SUNNY), get_context=get_context)], batch_size=2)
    assert len(seen) == 3 and all(s["step"] == "analyze" and s["results"] == {} for s in seen)
    assert [s["run"]["ground_truth"] for s in seen] == ["truth 0", "truth 1", "truth 2"]
    assert ev.summary["hallucination"].scored == 3


def test_get_context_may_be_async_or_take_the_run_alone(fake_judge: FakeJudgeFactory) -> None:
    async def fetch(*, run: dict[str, Any], **rest: Any) -> list[str]:
        await asyncio.sleep(0)
        return ["It is sunny in Paris."]

    for hook in (fetch, lambda r: ["It is sunny in Paris."]):
        result = hallucination_scorer(fake_judge(SUNNY), get_context=hook).run({"output": "Sunny."})
        assert result.score == 1.0 and "sunny in Paris" in (result.analyze_prompt or "")

    async def inside_a_loop() -> float | None:  # a notebook or server already running a loop
        return hallucination_scorer(fake_judge(SUNNY), get_context=fetch).run({"output": "Sunny."}).score

    assert asyncio.run(inside_a_loop()) == 1.0


def test_mastra_toxicity_example_and_run_evals_on_an_agent_like_target(fake_judge: FakeJudgeFactory) -> None:
    """runEvals({ data, scorers, target }) with a target returning agent messages with a tool call."""
    toxic = {"verdicts": [{"verdict": "no", "severity": "none", "reason": "r"}]}
    judge = fake_judge(SUNNY, ToxicityVerdicts=toxic)

    def agent(prompt: str) -> list[dict[str, Any]]:
        return [
            mastra_message("assistant", tool_part("c1", "weather", WEATHER), text_part(f"Re: {prompt} It is sunny."))
        ]

    data = [{"input": "Weather in Paris?", "runId": "a"}, {"input": "And tomorrow?", "runId": "b"}]
    result = run_evals(data, [faithfulness_scorer(judge), toxicity_scorer(judge)], agent)
    assert [item.scorer_results["faithfulness-scorer"].score for item in result.items] == [1.0, 1.0]
    assert [item.scorer_results["toxicity-scorer"].run_id for item in result.items] == ["a", "b"]


def test_mastras_hallucination_example_with_static_context(fake_judge: FakeJudgeFactory) -> None:
    """createHallucinationScorer({ model, options: { context: [...] } }) on Mastra's
    createTestRun shapes: input as chat messages, output as an assistant {text} object."""
    judge = fake_judge(Claims={"claims": ["The first iPhone was released in 2007."]},
                       HallucinationVerdicts={"verdicts": [{"verdict": "supported", "reason": "Stated."}]},
                       Reason={"reason": "The context states 2007."})
    scorer = hallucination_scorer(judge, context=["The first iPhone was announced on January 9, 2007."])
    result = scorer.run({"input": [{"role": "user", "content": "When was the first iPhone released?"}],
                         "output": {"role": "assistant", "text": "The first iPhone was released in 2007."}})
    assert result.score == 0.0 and result.reason == "The context states 2007."
    assert "January 9, 2007" in (result.generate_reason_prompt or "")  # the reason step sees the context
