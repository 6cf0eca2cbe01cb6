"""Cases for prompt alignment with the conversation history on (localjudge's
`include_conversation_history`, Mastra's `includeConversationHistory`): agent runs whose input
remembers earlier messages. Both sides score the same judge answers, and
tests/differential/test_prompt_alignment_history.py also compares the transcript each shows its
judge. Kept out of `cases.ALL_CASES` (docs/mastra-parity.md counts those per scorer); run by that
test file in its own Node process."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.differential.cases_agents import FULLY, alignment, message, tool_part
from tests.differential.parity import REFUSED, Case, unscripted


def thread(turns: int) -> list[dict[str, Any]]:
    """`turns` remembered messages, user and assistant by turns, each naming its place."""
    return [message("user" if i % 2 == 0 else "assistant", f"Earlier message {i + 1}.") for i in range(turns)]


MIXED = [
    message("user", "Plan my breakfast."),
    message("assistant", "", parts=[{"type": "text", "text": "Draft."}, {"type": "text", "text": "Oats or eggs?"}]),
    message("assistant", "", parts=[tool_part("menu", {}, "oats")]),  # no text: left out
    {**message("assistant", "   "), "content": "   "},  # blank: left out
    message("user", "Remember, no nuts."),
    message("system", "Memory: the user is vegetarian."),  # any role with text, as it is
]


def with_history(case: Case, remembered: list[dict[str, Any]] | None, local: Any, mastra: Any) -> Case:
    """`case` with the input's remembered messages (None: a plain string input) and the option
    as each side spells it."""
    run = dict(case.run)
    if remembered is None:
        run["input"] = "Give me three tips for growing tomatoes, as a bulleted list."
    else:
        run["input"] = {**run["input"], "rememberedMessages": remembered}
    return replace(case, name=f"history-{case.name}", run=run,
                   options={**case.options, "include_conversation_history": local},
                   mastra_args={"options": {**case.mastra_args["options"], "includeConversationHistory": mastra}})


CASES = [
    with_history(alignment("last-10-of-12", ("mostly", "partly", "fully"), [True, True, False], 0.66), thread(12),
                 True, True),
    with_history(alignment("last-3", FULLY, [True, False], 0.85, mode="user"), thread(7), 3, {"maxMessages": 3}),
    with_history(alignment("mastra-shape", FULLY, [True, False], 0.85, mode="user"), thread(5), {"maxMessages": 2},
                 {"maxMessages": 2}),
    with_history(alignment("mixed-messages", ("mostly", "fully", "partly"), [True, False], 0.63, mode="system",
                           system="Answer in at most three bullet points."), MIXED, True, True),
    with_history(alignment("none-remembered", FULLY, [True], 1.0), [], True, True),
    with_history(alignment("zero", FULLY, [True], 1.0), thread(4), 0, {"maxMessages": 0}),
    with_history(alignment("plain-string", FULLY, [True], 1.0, mode="user"), None, True, True),
    unscripted(with_history(alignment("empty-response", FULLY, [True], REFUSED, response=""), thread(2), True, True),
               mastra=True),
]
