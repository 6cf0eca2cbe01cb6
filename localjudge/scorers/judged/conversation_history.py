"""A run's earlier messages as Mastra's `includeConversationHistory` shows them to a judge.

Mastra's prompt alignment scorer (`@mastra/evals` 1.10.2) can show its judge the conversation
before the current turn: `getConversationHistoryFromRunInput` (`scorers/utils.ts`) takes the last
N (default 10) of an agent input's ``rememberedMessages`` and writes each as ``role: text``, one
line each, oldest first; the judge is told they are context only. `history_of` reads them so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localjudge.samples import Sample, clean_text, mastra_message_text, message_role

HISTORY_MESSAGES = 10  # Mastra's DEFAULT_CONVERSATION_HISTORY_MESSAGES, for `True`
HISTORY_NOTE = ("The HISTORY block holds the conversation's earlier messages, oldest first, for context only: a "
                "short or referring request (\"A\", \"yes\", \"the second one\") means what they asked or offered. "
                "Rate only this response, not the earlier turns, and do not credit or blame it for anything said "
                "in them.")  # Mastra's CONVERSATION_HISTORY_GUIDANCE, shown only where a run has history


def check_history(value: Any) -> int:
    """How many remembered messages `include_conversation_history` shows (0: none), read as
    Mastra reads `includeConversationHistory`: ``True`` 10, ``False`` none, a count N the last N,
    Mastra's ``{"maxMessages": N}`` (``{}``: 10) the same."""
    if isinstance(value, Mapping) and set(value) <= {"maxMessages"}:
        value = value.get("maxMessages", HISTORY_MESSAGES)
    elif isinstance(value, bool):
        return HISTORY_MESSAGES if value else 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(f"include_conversation_history must be true, false or a number of messages (an integer >= 0), "
                     f"got {value!r}")


def history_of(run: Sample, max_messages: int) -> str | None:
    """Mastra's `getConversationHistoryFromRunInput`: the last `max_messages` of the agent input's
    ``rememberedMessages`` (the thread's earlier messages, oldest first), one ``role: text`` line
    each (the text as Mastra's `getTextContentFromMastraDBMessage` reads it); a message with no
    role or no text is left out. None with no such messages, or an input that is not an agent
    input (a string, a list of messages: Mastra shows no history for those either). Reads the
    run as given (`Sample.raw`), so the input is part of the results' keys."""
    if max_messages <= 0:
        return None
    given = run.raw.get("input")
    remembered = given.get("rememberedMessages") if isinstance(given, Mapping) else None
    if not isinstance(remembered, list):
        return None
    lines = []
    for message in remembered[-max_messages:]:
        if not isinstance(message, Mapping):
            continue
        role, text = message_role(message), clean_text(mastra_message_text(message)).strip()
        if role and text:
            lines.append(f"{role}: {text}")
    return "\n".join(lines) or None


__all__ = ["HISTORY_MESSAGES", "HISTORY_NOTE", "check_history", "history_of"]
