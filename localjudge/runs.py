"""Normalising runs: plain strings or chat-message lists in, one `Sample` of clean text out.

A run is a mapping with `output`, optional `input`, `context` and `run_id` (Mastra's shape; a
missing, None or NaN `input` or `context` means none). `input` and `output` are strings or
lists of chat messages `{role, content}`: the first user message is the input, the last
assistant message is the output judged.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})


class InvalidRunError(ValueError):
    """A run is structurally wrong: raised before any model call."""


@dataclass(frozen=True)
class Sample:
    """A run reduced to the texts the scorers judge."""

    run_id: str | None
    input: str
    output: str
    context: tuple[str, ...] | None = None


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
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    text = _OTHER_CONTROLS.sub("", _SPACE_CONTROLS.sub(" ", _LINE_BREAKS.sub("\n", text)))
    return unicodedata.normalize("NFC", text)


def _is_missing(value: Any) -> bool:
    """None, or the NaN that pandas and CSV readers use for an empty cell."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _message_content(message: Any, where: str) -> tuple[str, str]:
    if not isinstance(message, Mapping):
        raise InvalidRunError(f"{where}: a chat message must be a dict with role and content")
    role, content = message.get("role"), message.get("content")
    if role not in ROLES:
        raise InvalidRunError(f"{where}: unknown chat role {role!r} (known: {sorted(ROLES)})")
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        if not all(isinstance(p, str) for p in parts):
            raise InvalidRunError(f"{where}: text content parts must hold strings")
        content = "\n".join(parts)  # type: ignore[arg-type]
    if not isinstance(content, str):
        raise InvalidRunError(f"{where}: message content must be a string, got {type(content).__name__}")
    return role, content


def text_of(value: Any, *, field: str, role: str) -> str:
    """The text of a run field: a string as is, or the chosen message of a chat list.

    Args:
        value: A string, or a list of chat messages.
        field: The field's name, for error messages.
        role: ``"user"`` takes the first user message, ``"assistant"`` the last assistant one.
    """
    if isinstance(value, str):
        return clean_text(value)
    if _is_missing(value):
        raise InvalidRunError(f"{field} is missing ({value})")
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        messages = [_message_content(m, f"{field}[{i}]") for i, m in enumerate(value)]
        chosen = [content for r, content in messages if r == role]
        if not chosen:
            raise InvalidRunError(f"{field} has no {role} message")
        return clean_text(chosen[0] if role == "user" else chosen[-1])
    raise InvalidRunError(
        f"{field} must be a string or a list of chat messages, got {type(value).__name__}"
    )


def context_of(value: Any) -> tuple[str, ...] | None:
    """Context as a tuple of non-empty passages; None when absent.

    Raises:
        InvalidRunError: for a nested list, a non-string item, or a non-list, non-string value.
    """
    if _is_missing(value):
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, (bytes, bytearray)):
        raise InvalidRunError(f"context must be a string or a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidRunError(f"context[{i}] must be a string, got {type(item).__name__}")
    passages = tuple(clean_text(p).strip() for p in value)
    return tuple(p for p in passages if p)


def to_sample(run: Mapping[str, Any], *, context: Any = None) -> Sample:
    """Normalise one run; `context`, when given, replaces the run's own context field."""
    if not isinstance(run, Mapping):
        raise InvalidRunError(f"a run must be a dict with input and output, got {type(run).__name__}")
    if "output" not in run:
        raise InvalidRunError("run has no 'output'")
    run_id = run.get("run_id")
    return Sample(
        run_id=None if run_id is None else str(run_id),
        input="" if _is_missing(run.get("input")) else text_of(run["input"], field="input", role="user"),
        output=text_of(run["output"], field="output", role="assistant"),
        context=context_of(run.get("context") if context is None else context),
    )
