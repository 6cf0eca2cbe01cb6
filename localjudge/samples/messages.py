"""Chat messages to text: the shapes Mastra's judges accept, read into clean strings.

A field (a run's `input` or `output`) is a string; a list of chat messages (OpenAI-style
`{role, content}` with `content` a string or a list of `{type: "text", text}` parts, or `None`
beside `tool_calls`; or Mastra's stored messages, whose `content` is an object: `{content}`
text, `{text}`, or `{parts}`, the last text part counting, as in Mastra); a single message
object; `{text}` / `{content}` objects; or (input) Mastra's agent input `{inputMessages: [...]}`
or `{messages}` / `{prompt}` / `{input}` / `{user}`. `text_of` takes the first user message's
text for an input and the last assistant message with text for an output.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from localjudge.text_safety import safe_text

ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})


class InvalidRunError(ValueError):
    """A run is structurally wrong: raised before any model call."""



_LINE_BREAKS = re.compile("\r\n?|\x85")  # CR LF, CR and NEL all mean a new line
_SPACE_CONTROLS = re.compile("[\x0b\x0c\x1c-\x1f]")  # vertical tab, form feed, separators
_OTHER_CONTROLS = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")  # the rest of Cc


def clean_text(text: str) -> str:
    """Make text safe to tokenize (valid UTF-8, no control bytes) without changing what it says.

    A surrogate pair (as left by UTF-16 decoding) becomes its character and a lone surrogate
    becomes one U+FFFD; CR LF, CR and NEL become newlines; control characters that separate
    words (vertical tab, form feed, information separators) become spaces; other control
    characters except newline and tab are dropped; the text is NFC-normalised. Zero-width
    characters, RTL marks, emoji and combining marks are kept: they are part of the text judged.
    """
    text = safe_text(text)  # the storing rule first: surrogates mended, NUL dropped
    text = _OTHER_CONTROLS.sub("", _SPACE_CONTROLS.sub(" ", _LINE_BREAKS.sub("\n", text)))
    return unicodedata.normalize("NFC", text)


def is_missing(value: Any) -> bool:
    """None, or the NaN that pandas and CSV readers use for an empty cell."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _parts_text(parts: Any, where: str, *, join: bool) -> str | None:
    """The text of `{type: "text", text}` parts: all joined (OpenAI content) or the last one
    (Mastra's `content.parts`); None when there is none."""
    if not isinstance(parts, list):
        return None
    found = [p.get("text") for p in parts if isinstance(p, Mapping) and p.get("type") == "text"]
    texts = [t for t in found if isinstance(t, str)]
    if len(texts) != len(found):
        raise InvalidRunError(f"{where}: text content parts must hold strings")
    if not texts:
        return None
    return "\n".join(texts) if join else texts[-1]


def message_role(message: Mapping[str, Any]) -> str | None:
    """Mastra's `getEffectiveMessageRole`: the role, or for a ``signal`` message the role it
    carries (`content.metadata.signal.tagName`, then its `type`, then the message's `type`)."""
    role = message.get("role")
    if role != "signal":
        return role if isinstance(role, str) else None
    content = message.get("content")
    metadata = content.get("metadata") if isinstance(content, Mapping) else None
    signal = metadata.get("signal") if isinstance(metadata, Mapping) else None
    signal = signal if isinstance(signal, Mapping) else {}
    found = (signal.get("tagName"), signal.get("type"), message.get("type"))
    return next((r for r in found if isinstance(r, str)), None)


def message_text(message: Any, where: str) -> tuple[str, str | None]:
    """`(role, text)` of one chat message; text None when it carries none (tool calls only)."""
    if not isinstance(message, Mapping):
        raise InvalidRunError(f"{where}: a chat message must be a dict with role and content")
    role, content = message_role(message), message.get("content")
    if role not in ROLES:
        if message.get("role") == "signal":
            raise InvalidRunError(f"{where}: a 'signal' message carries no known role (got {role!r}; known: "
                                  f"{sorted(ROLES)})")
        raise InvalidRunError(f"{where}: unknown chat role {role!r} (known: {sorted(ROLES)})")
    if isinstance(content, str):
        return role, content
    if isinstance(content, list):  # OpenAI content parts: [{"type": "text", "text": ...}, ...]
        return role, _parts_text(content, where, join=True)
    if isinstance(content, Mapping):  # Mastra's stored message: {format: 2, parts, content?, ...}
        for key in ("content", "text"):
            if isinstance(content.get(key), str) and content[key]:
                return role, content[key]
        return role, _parts_text(content.get("parts"), where, join=False)
    if content is None and isinstance(message.get("text"), str):  # Mastra's {role, text}
        return role, message["text"]
    if content is None and (message.get("tool_calls") or message.get("function_call")):
        return role, None  # an OpenAI assistant message that only calls tools
    raise InvalidRunError(f"{where}: message content must be a string, got {type(content).__name__}")


def messages_of(value: Any, field: str) -> list[Any] | None:
    """The chat messages a field holds (list, single message, or a wrapping object), else None."""
    if isinstance(value, Mapping):
        for key in ("inputMessages", "messages"):
            if isinstance(value.get(key), list):
                return list(value[key])
        if "role" in value:
            return [value]
        return None
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return list(value)
    return None


_WRAPPED_TEXT = {"input": ("prompt", "text", "content", "input", "user"), "output": ("text", "content")}


def text_of(value: Any, *, field: str, role: str) -> str:
    """The text of a run field: a string as is, or the chosen message's text.

    Args:
        value: A string, a chat message or a list of them, or a wrapping object (see above).
        field: The field's name, for error messages.
        role: ``"user"`` takes the first user message, ``"assistant"`` the last assistant one
            that has text.
    """
    if isinstance(value, str):
        return clean_text(value)
    if is_missing(value):
        raise InvalidRunError(f"{field} is missing ({value})")
    messages = messages_of(value, field)
    if messages is None and isinstance(value, Mapping):
        for key in _WRAPPED_TEXT.get(field, ()):
            if isinstance(value.get(key), str):
                return clean_text(value[key])
    if messages is None:
        raise InvalidRunError(
            f"{field} must be a string or a list of chat messages, got {type(value).__name__}"
        )
    texts = [message_text(m, f"{field}[{i}]") for i, m in enumerate(messages)]
    mine = [text for r, text in texts if r == role]
    if not mine and role == "user":
        return ""  # no request (a system-only agent input): as a missing input; a scorer needing one refuses
    if not mine:
        raise InvalidRunError(f"{field} has no {role} message")
    with_text = [t for t in mine if t and t.strip()]
    if not with_text:
        return ""  # only tool calls or empty messages: nothing was said
    return clean_text(with_text[0] if role == "user" else with_text[-1])
