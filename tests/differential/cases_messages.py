"""Multi-message agent runs through every code scorer and check (issue 46 item 1).

An agent says "There was an error fetching the order; retrying." and then "Your order ships
today.": Mastra's code scorers join every message's text (`", "`), its output checks the assistant
messages' (`" "` or nothing), where localjudge reads the last assistant message with text. By
default the outcomes differ as `joined-messages` says; under ``compat="mastra"`` every case gives
Mastra's number (tests/differential/test_code_parity.py). The runs: two texts, a tool-only
message first, a tool call between two texts, an empty text part between or after them, and two
user messages asked.
"""

from __future__ import annotations

from typing import Any

from tests.differential.cases_agents import agent_input, message, signal
from tests.differential.code_case import SAME, CodeCase, call, case
from tests.differential.parity import Differs

ASKED = "Where is my order?"
ERROR = "There was an error fetching the order; retrying."
SHIPS = "Your order ships today."
TOOL_ONLY = message("assistant", "", parts=[call("lookup_order", {"id": 7}, {"status": "shipped"}, call_id="t1")])
EMPTY_PART = {"id": "assistant-empty", "role": "assistant", "createdAt": "2026-01-01T00:00:00.000Z",
              "content": {"format": 2, "parts": [{"type": "text", "text": ""}], "content": ""}}


def said(text: str) -> dict[str, Any]:
    return message("assistant", text)


def agent_run(*output: dict[str, Any], asked: tuple[str, ...] = (ASKED,)) -> dict[str, Any]:
    """An agent run: these user messages in, these messages out."""
    return {"input": {**agent_input(""), "inputMessages": [message("user", a) for a in asked]}, "output": list(output)}


RUNS = {
    "two-texts": agent_run(said(ERROR), said(SHIPS)),
    "tool-first": agent_run(TOOL_ONLY, said(SHIPS)),
    "tool-between": agent_run(said(ERROR), TOOL_ONLY, said(SHIPS)),
    "empty-part-between": agent_run(said(ERROR), EMPTY_PART, said(SHIPS)),
    "empty-part-last": agent_run(said(SHIPS), EMPTY_PART),
}
SIGNALS = {**agent_run(signal("assistant", ERROR), said(SHIPS)), "input": {**agent_input(""), "inputMessages": [
    signal("user", ASKED)]}}  # the request and the first reply delivered as signal messages
TWO_QUESTIONS = agent_run(said(SHIPS), asked=("Hello.", ASKED))
ERROR_ASKED = agent_run(said(ERROR), said(SHIPS), asked=("Was there an error with my order?",))

# (scorer, Mastra's positional arguments, localjudge's options): the output-text checks
TEXT_CHECKS = [
    ("check_includes", ("error",), {"expected": "error"}),
    ("check_excludes", ("error",), {"unwanted": "error"}),
    ("check_equals", (SHIPS,), {"expected": SHIPS}),
    ("check_matches", ({"$regexp": ["^Your order", ""]},), {"pattern": "^Your order"}),
    ("check_similarity", (SHIPS,), {"expected": SHIPS}),
]
TEXT_SCORERS = ("completeness", "content_similarity", "keyword_coverage", "textual_difference", "tone")
LOOKUP = [{"stepType": "tool_call", "name": "lookup_order"}]
# (scorer, Mastra's positional arguments, localjudge's options, trajectory): the tool readers
TOOL_READERS = [
    ("check_called_tool", ("lookup_order",), {"tool_name": "lookup_order"}, False),
    ("check_did_not_call", ("lookup_order",), {"tool_name": "lookup_order"}, False),
    ("check_tool_order", (["lookup_order"],), {"expected_order": ["lookup_order"]}, False),
    ("check_max_tool_calls", (1,), {"max_calls": 1}, False),
    ("check_used_no_tools", (), {}, False),
    ("check_no_tool_errors", (), {}, False),
    ("code_tool_call_accuracy", ({"expectedTool": "lookup_order"},), {"expected_tool": "lookup_order"}, False),
    ("code_trajectory_accuracy", ({"expectedTrajectory": LOOKUP},), {"expected_trajectory": LOOKUP}, True),
    ("code_trajectory", ({},), {}, True),
]

# Where localjudge's default reading differs: (Mastra's score, localjudge's rounded)
DEFAULT_DIFFERS: dict[str, tuple[float, float]] = {
    "check_includes/two-texts": (1.0, 0.0),
    "check_excludes/two-texts": (0.0, 1.0),
    "check_equals/two-texts": (0.0, 1.0),
    "check_matches/two-texts": (0.0, 1.0),
    "check_similarity/two-texts": (0.4810126582278481, 1.0),
    "check_includes/tool-between": (1.0, 0.0),
    "check_excludes/tool-between": (0.0, 1.0),
    "check_equals/tool-between": (0.0, 1.0),
    "check_matches/tool-between": (0.0, 1.0),
    "check_similarity/tool-between": (0.4810126582278481, 1.0),
    "check_includes/empty-part-between": (1.0, 0.0),
    "check_excludes/empty-part-between": (0.0, 1.0),
    "check_equals/empty-part-between": (0.0, 1.0),
    "check_matches/empty-part-between": (0.0, 1.0),
    "check_similarity/empty-part-between": (0.4810126582278481, 1.0),
    "completeness/two-texts": (0.5, 0.25),
    "content_similarity/two-texts": (0.21333333333333335, 0.3),
    "textual_difference/two-texts": (0.3076923076923077, 0.39),
    "tone/two-texts": (0.984375, 1.0),
    "content_similarity/tool-first": (0.29411764705882354, 0.3),
    "textual_difference/tool-first": (0.37209302325581395, 0.39),
    "completeness/tool-between": (0.5, 0.25),
    "content_similarity/tool-between": (0.21052631578947367, 0.3),
    "textual_difference/tool-between": (0.3010752688172043, 0.39),
    "tone/tool-between": (0.984375, 1.0),
    "completeness/empty-part-between": (0.5, 0.25),
    "content_similarity/empty-part-between": (0.21052631578947367, 0.3),
    "textual_difference/empty-part-between": (0.3010752688172043, 0.39),
    "tone/empty-part-between": (0.984375, 1.0),
    "content_similarity/empty-part-last": (0.29411764705882354, 0.3),
    "textual_difference/empty-part-last": (0.37209302325581395, 0.39),
    "completeness/two-questions": (0.2, 0.0),
    "content_similarity/two-questions": (0.25, 0.0),
    "textual_difference/two-questions": (0.40816326530612246, 0.21),
    "completeness/error-asked": (0.7142857142857143, 0.14),
    "content_similarity/error-asked": (0.4367816091954023, 0.31),
    "keyword_coverage/error-asked": (1.0, 0.5),
    "textual_difference/error-asked": (0.4716981132075472, 0.32),
}


def expected(scorer: str, name: str) -> float | str | Differs:
    pinned = DEFAULT_DIFFERS.get(f"{scorer}/{name}")
    return SAME if pinned is None else Differs("joined-messages", mastra=pinned[0], local=pinned[1])


MESSAGE_CASES: list[CodeCase] = [
    *(case(scorer, name, run, expected(scorer, name), *args, options=options)
      for name, run in RUNS.items() for scorer, args, options in TEXT_CHECKS),
    *(case(scorer, name, run, expected(scorer, name)) for name, run in RUNS.items() for scorer in TEXT_SCORERS),
    *(case(scorer, name, run, expected(scorer, name)) for name, run in
      (("two-questions", TWO_QUESTIONS), ("error-asked", ERROR_ASKED)) for scorer in TEXT_SCORERS if scorer != "tone"),
    # the separator Mastra's checks join with: a space for includes, nothing for equals
    case("check_includes", "across-messages", RUNS["two-texts"], Differs("joined-messages", mastra=1.0, local=0.0),
         "retrying. your", options={"expected": "retrying. your"}),
    case("check_equals", "across-messages", RUNS["two-texts"], Differs("joined-messages", mastra=1.0, local=0.0),
         ERROR + SHIPS, options={"expected": ERROR + SHIPS}),
    # an output signal message is not an assistant message to the checks, either side
    *(case(scorer, "signals", SIGNALS, SAME, *args, options=options)
      for scorer, args, options in TEXT_CHECKS),
    *(case(scorer, "tool-between", RUNS["tool-between"], expected(scorer, "tool-between"), *args, options=options,
           trajectory=trajectory) for scorer, args, options, trajectory in TOOL_READERS),
]
