"""A run's text as Mastra's code scorers and checks read it: every message, joined.

localjudge reads one text per field for every scorer (the first user message, the last assistant
message with text: `localjudge.samples.messages`). Mastra's code scorers and checks do not use
its `getAssistantMessageFromRunOutput`; each joins the text of several messages, read one by one
with `getTextContentFromMastraDBMessage` (`@mastra/evals` 1.10.2, `scorers/utils.ts`):

- completeness, content similarity, keyword coverage, textual difference: the input's
  `inputMessages` and *every* output message (tool-only ones add an empty piece), each joined
  with ``", "``; tone reads the output so;
- checks `includes`, `excludes`, `similarity`: the output's assistant messages joined with
  ``" "``; `equals` and `matches`: joined with nothing.

`mastra_text` gives that text; a field that is not messages (a plain string, a `{text}` object)
is one piece, as one message holding it would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from localjudge.samples.messages import InvalidRunError, clean_text, is_missing, messages_of, text_of

SYSTEM_ROLES = ("system", "developer")  # Mastra keeps these apart from `inputMessages`


@dataclass(frozen=True)
class Joined:
    """How Mastra joins a field's messages.

    Attributes:
        separator: What goes between two messages' texts (``", "``, ``" "`` or ``""``).
        assistant_only: Only the assistant messages (the checks), not every message.
    """

    separator: str = ", "
    assistant_only: bool = False


EVERY_MESSAGE = Joined(", ")  # Mastra's code scorers: `.map(getTextContentFromMastraDBMessage).join(", ")`
ASSISTANT_SPACED = Joined(" ", assistant_only=True)  # checks includes, excludes, similarity
ASSISTANT_RUN_ON = Joined("", assistant_only=True)  # checks equals, matches
BOTH_JOINED = {"input": EVERY_MESSAGE, "output": EVERY_MESSAGE}


def message_text(message: Any) -> str:
    """Mastra's `getTextContentFromMastraDBMessage`: a string content as is; else the last text
    part of a content list; else `content.content`, then `content.text` (when not empty); else the
    last text part of `content.parts`; else ``""`` (a tool-only message, or `{role, text}`)."""
    if not isinstance(message, Mapping):
        raise InvalidRunError("a chat message must be a dict with role and content")
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: Any = content
    if isinstance(content, Mapping):
        for key in ("content", "text"):
            if isinstance(content.get(key), str) and content[key]:
                return str(content[key])
        parts = content.get("parts")
    if isinstance(parts, list):
        texts = [p for p in parts if isinstance(p, Mapping) and p.get("type") == "text"]
        last = texts[-1].get("text") if texts else None
        return last if isinstance(last, str) else ""
    return ""


def mastra_text(value: Any, field: str, joined: Joined) -> str:
    """The text of a run's `field` (``"input"`` or ``"output"``) as Mastra's code scorers read it.

    An input's messages are Mastra's `inputMessages` (system messages are kept apart, as Mastra's
    agent input keeps them); a missing input is ``""``.
    """
    if field == "input" and is_missing(value):
        return ""
    messages = messages_of(value, field)
    if messages is None:  # a string or a wrapped text: one piece
        return text_of(value, field=field, role="user" if field == "input" else "assistant")
    if field == "input":
        messages = [m for m in messages if not (isinstance(m, Mapping) and m.get("role") in SYSTEM_ROLES)]
    if joined.assistant_only:
        messages = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant"]
    return clean_text(joined.separator.join(message_text(m) for m in messages))


__all__ = ["ASSISTANT_RUN_ON", "ASSISTANT_SPACED", "BOTH_JOINED", "EVERY_MESSAGE", "Joined", "mastra_text",
           "message_text"]
