"""A run's text as Mastra's code scorers and checks read it (issue 46 item 1): every message's
text joined, where localjudge's default reads the last assistant message with text."""

from __future__ import annotations

from typing import Any

from localjudge.samples.mastra_reading import (
    ASSISTANT_RUN_ON,
    ASSISTANT_SPACED,
    EVERY_MESSAGE,
    mastra_text,
    message_text,
)
from localjudge.scorers import checks
from localjudge.scorers.coded.textual_difference import textual_difference_scorer


def said(text: str, *parts: dict[str, Any]) -> dict[str, Any]:
    """A Mastra stored message from the assistant."""
    return {"role": "assistant", "content": {"format": 2, "content": text,
                                             "parts": ([{"type": "text", "text": text}] if text else []) + list(parts)}}


TOOL = {"type": "tool-invocation", "toolInvocation": {"toolCallId": "t", "toolName": "lookup", "args": {},
                                                      "state": "result", "result": {}}}
RUN = {"input": "Where is my order?",
       "output": [said("There was an error; retrying."), said("", TOOL), said("Your order ships today.")]}


def test_each_field_joined_as_mastra_joins_it() -> None:
    assert mastra_text(RUN["output"], "output", EVERY_MESSAGE) == \
        "There was an error; retrying., , Your order ships today."
    assert mastra_text(RUN["output"], "output", ASSISTANT_SPACED) == \
        "There was an error; retrying.  Your order ships today."
    assert mastra_text(RUN["output"], "output", ASSISTANT_RUN_ON) == \
        "There was an error; retrying.Your order ships today."
    asked = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi."},
             {"role": "user", "content": "Where?"}]
    assert mastra_text(asked, "input", EVERY_MESSAGE) == "Hi., Where?"  # system messages kept apart
    assert mastra_text("Plain.", "output", EVERY_MESSAGE) == "Plain."
    assert mastra_text(None, "input", EVERY_MESSAGE) == ""


def test_message_text_is_mastras() -> None:
    """The last text part of a content list (not all of them joined), `{role, text}` as empty."""
    assert message_text({"role": "assistant", "content": [{"type": "text", "text": "a"},
                                                          {"type": "text", "text": "b"}]}) == "b"
    assert message_text({"role": "assistant", "content": None, "text": "x"}) == ""
    assert message_text({"role": "assistant", "content": {"parts": [{"type": "text", "text": ""}]}}) == ""


def test_checks_read_every_assistant_message_under_mastra_only() -> None:
    """The false pass of issue 46: an earlier message's "error" fails Mastra's excludes."""
    assert checks.excludes("error").run(RUN).score == 1  # the last message, localjudge's reading
    assert checks.excludes("error", compat="mastra").run(RUN).score == 0
    assert checks.includes("error", compat="mastra").run(RUN).score == 1
    assert checks.equals("Your order ships today.", compat="mastra").run(RUN).score == 0
    assert checks.equals("Your order ships today.").run(RUN).score == 1


def test_results_keyed_by_the_text_mastra_read() -> None:
    """Under compat="mastra" two runs that differ only in an earlier message are two samples (and
    so two result keys); by default they are one."""
    other = {**RUN, "output": [said("All fine."), *RUN["output"][1:]]}
    mastra, default = textual_difference_scorer(compat="mastra"), textual_difference_scorer()
    assert mastra.sample(RUN).output != mastra.sample(other).output
    assert default.sample(RUN).output == default.sample(other).output
