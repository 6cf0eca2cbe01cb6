"""`filter_run`, Mastra's `filterRun`: each option as Mastra's source (core's evals/base.ts) reads it."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import create_scorer, filter_run


def text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "content": {"format": 2, "parts": [{"type": "text", "text": words}]}}


def tool(name: str, *, with_text: bool = False) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "tool-invocation",
                                    "toolInvocation": {"toolName": name, "toolCallId": name, "args": {},
                                                       "state": "result", "result": "ok"}}]
    if with_text:
        parts.append({"type": "text", "text": "done"})
    return {"role": "assistant", "content": {"format": 2, "parts": parts}}


def reasoning() -> dict[str, Any]:
    return {"role": "assistant", "content": {"format": 2, "parts": [{"type": "reasoning", "reasoning": "hm"}]}}


OUTPUT = [reasoning(), tool("write_file"), tool("view"), tool("search_web"), text("assistant", "All done."),
          {"role": "assistant", "content": "plain text, no parts"}]
RUN = {"input": {"inputMessages": [text("user", "Fix it.")], "rememberedMessages": [text("user", "a"), tool("view"),
                                                                                   text("assistant", "b")],
                 "systemMessages": [{"role": "system", "content": "Be brief."}]},
       "output": OUTPUT, "groundTruth": "fixed", "request_context": {"user": "u1"},
       "expectedTrajectory": ["view", "write_file"]}


def names(messages: list[Any]) -> list[str]:
    """Each message as a short tag: a tool's name, ``text``, ``reasoning``, ``plain``."""
    tags = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            tags.append("plain")
            continue
        part = content["parts"][0]
        tags.append(part["toolInvocation"]["toolName"] if part["type"] == "tool-invocation" else part["type"])
    return tags


def test_part_types_keep_matching_messages_and_plain_content() -> None:
    run = filter_run(part_types=["tool-invocation", "text"])(RUN)
    assert names(run["output"]) == ["write_file", "view", "search_web", "text", "plain"]  # reasoning dropped
    assert names(run["input"]["rememberedMessages"]) == ["text", "view", "text"]
    assert run["input"]["systemMessages"] == RUN["input"]["systemMessages"]  # never filtered
    assert run["input"]["inputMessages"] == RUN["input"]["inputMessages"]


def test_part_types_are_prefixes_and_drop_text_when_not_named() -> None:
    run = filter_run(part_types=["tool-"])(RUN)
    assert names(run["output"]) == ["write_file", "view", "search_web", "plain"]  # text parts: not named


def test_tool_names_filter_tool_messages_only_by_prefix() -> None:
    run = filter_run(tool_names=["write", "vi"])(RUN)
    assert names(run["output"]) == ["reasoning", "write_file", "view", "text", "plain"]


def test_both_filters_must_hold() -> None:
    run = filter_run(part_types=["text"], tool_names=["view"])(
        {"output": [tool("view"), tool("view", with_text=True), tool("write_file", with_text=True), text("user", "x")]})
    assert [len(m["content"]["parts"]) for m in run["output"]] == [2, 1]  # view+text, then the text message


def test_empty_lists_filter_everything_they_reach() -> None:
    """Mastra's `[]` is truthy: no tool name matches, no part type matches (plain content stays)."""
    assert names(filter_run(tool_names=[])(RUN)["output"]) == ["reasoning", "text", "plain"]
    assert names(filter_run(part_types=[])(RUN)["output"]) == ["plain"]


def test_caps_take_the_last_messages_after_filtering() -> None:
    run = filter_run(part_types=["tool-invocation"], max_output_messages=2, max_remembered_messages=1)(RUN)
    assert names(run["output"]) == ["search_web", "plain"]
    assert names(run["input"]["rememberedMessages"]) == ["view"]
    assert names(filter_run(max_output_messages=10)(RUN)["output"]) == names(OUTPUT)


def test_drops_fields_under_either_spelling_and_leaves_the_run_given_alone() -> None:
    run = filter_run(drop_request_context=True, drop_expected_trajectory=True, drop_ground_truth=True)(RUN)
    assert not {"groundTruth", "request_context", "expectedTrajectory"} & set(run)
    assert run["output"] == OUTPUT
    assert RUN["groundTruth"] == "fixed" and len(RUN["output"]) == 6


def test_a_string_output_and_plain_input_pass_through() -> None:
    run = {"input": "Hi?", "output": "Hello.", "ground_truth": "Hello."}
    assert filter_run(part_types=["text"], max_output_messages=1)(run) == run


@pytest.mark.parametrize("options, message", [
    ({"max_output_messages": 0}, "max_output_messages must be a positive whole number"),
    ({"max_remembered_messages": 2.5}, "max_remembered_messages must be a positive whole number"),
    ({"part_types": "text"}, "part_types must be a list of strings"),
    ({"tool_names": ["view", 3]}, "tool_names must be a list of strings"),
])
def test_bad_options_are_one_line_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        filter_run(**options)


def test_as_prepare_run_the_scorer_reads_the_filtered_run() -> None:
    """Mastra's documented use: `prepareRun: filterRun({...})`; the steps see the filtered run."""
    counted = (create_scorer("tool_messages", prepare_run=filter_run(part_types=["tool-invocation"],
                                                                     max_output_messages=2))
               .generate_score(lambda run, results: len(run.raw["output"]) / 10))
    result = counted.run(RUN)
    assert result.score == 0.2  # 6 messages unfiltered
