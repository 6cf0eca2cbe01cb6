"""Normalising runs: plain strings or chat messages in, one `Sample` of clean text out.

A run is a mapping with `output`, optional `input`, `context` and `run_id` (or Mastra's
`runId`; a missing, None or NaN `input` or `context` means none; a run without an id gets one
derived from its texts, so it is the same on every run). `input` and `output` take the shapes
Mastra's judges accept:

- a string;
- a list of chat messages: OpenAI-style `{role, content}` with `content` a string or a list of
  `{type: "text", text}` parts (joined), or `None` beside `tool_calls`; or Mastra's stored
  messages, whose `content` is an object (`{content}` text, `{text}`, or `{parts}`, the last
  text part counting, as in Mastra);
- a single message object, `{text}` / `{content}` objects, and (input) Mastra's agent input
  `{inputMessages: [...]}` or `{messages}` / `{prompt}` / `{input}` / `{user}`.

The input is the first user message's text; the output is the last assistant message that has
text (tool-call-only and empty assistant messages are skipped); an output whose assistant
messages hold no text at all is empty. `extract_tool_results` reads the tool results an agent
run carries (Mastra's `extractToolResults`, plus OpenAI `tool` messages).
"""

from __future__ import annotations

import hashlib
import json
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


def message_text(message: Any, where: str) -> tuple[str, str | None]:
    """`(role, text)` of one chat message; text None when it carries none (tool calls only)."""
    if not isinstance(message, Mapping):
        raise InvalidRunError(f"{where}: a chat message must be a dict with role and content")
    role, content = message.get("role"), message.get("content")
    if role not in ROLES:
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


def _messages(value: Any, field: str) -> list[Any] | None:
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
    if _is_missing(value):
        raise InvalidRunError(f"{field} is missing ({value})")
    messages = _messages(value, field)
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
    if not mine:
        raise InvalidRunError(f"{field} has no {role} message")
    with_text = [t for t in mine if t and t.strip()]
    if not with_text:
        return ""  # only tool calls or empty messages: nothing was said
    return clean_text(with_text[0] if role == "user" else with_text[-1])


def extract_tool_results(output: Any) -> list[dict[str, Any]]:
    """Tool results in a run's output messages, oldest first, as
    ``{"tool_name", "tool_call_id", "args", "result"}`` dicts.

    Reads Mastra's stored messages (`content.parts` tool invocations and the legacy
    `content.toolInvocations`, parts winning on a shared call id; only state ``"result"`` with
    a result) and OpenAI-style `tool` messages (named from the assistant's `tool_calls`).
    Anything else (a string output, unknown shapes) gives an empty list.
    """
    messages = _messages(output, "output") or []
    found: dict[str, dict[str, Any]] = {}
    calls: dict[str, tuple[str | None, Any]] = {}  # OpenAI: call id -> (tool name, arguments)
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        for call in message.get("tool_calls") or []:
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
                calls[str(call.get("id"))] = (call["function"].get("name"), call["function"].get("arguments"))
        if message.get("role") == "tool" and "tool_call_id" in message:
            call_id = str(message["tool_call_id"])
            name, args = calls.get(call_id, (message.get("name"), None))
            found[call_id] = {"tool_name": name, "tool_call_id": call_id, "args": args, "result": content}
            continue
        if not isinstance(content, Mapping):
            continue
        parts = [p.get("toolInvocation") for p in content.get("parts") or []
                 if isinstance(p, Mapping) and p.get("type") == "tool-invocation"]
        legacy = list(content.get("toolInvocations") or [])
        merged: dict[str, Any] = {}
        for number, invocation in enumerate(legacy + parts):  # parts last: they win
            if isinstance(invocation, Mapping):
                merged[str(invocation.get("toolCallId", f"{index}.{number}"))] = invocation
        for call_id, invocation in merged.items():
            if invocation.get("state") == "result" and invocation.get("result") is not None:
                found[call_id] = {"tool_name": invocation.get("toolName"), "tool_call_id": call_id,
                                  "args": invocation.get("args"), "result": invocation["result"]}
    return list(found.values())


def tool_result_context(output: Any) -> list[str]:
    """Each tool result as a context passage: a string as is, anything else as JSON (Mastra's
    faithfulness fallback, `JSON.stringify(result)`)."""
    return [r["result"] if isinstance(r["result"], str) else json.dumps(r["result"], ensure_ascii=False)
            for r in extract_tool_results(output)]


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


def run_id_of(run: Mapping[str, Any]) -> str | None:
    """The run's own id (`run_id`, or Mastra's `runId`), as text; None when it has none."""
    for key in ("run_id", "runId"):
        if not _is_missing(run.get(key)):
            return str(run[key])
    return None


def to_sample(run: Mapping[str, Any], *, context: Any = None) -> Sample:
    """Normalise one run; `context`, when given, replaces the run's own context field."""
    if not isinstance(run, Mapping):
        raise InvalidRunError(f"a run must be a dict with input and output, got {type(run).__name__}")
    if "output" not in run:
        raise InvalidRunError("run has no 'output'")
    input_text = "" if _is_missing(run.get("input")) else text_of(run["input"], field="input", role="user")
    output_text = text_of(run["output"], field="output", role="assistant")
    run_id = run_id_of(run)
    if run_id is None:  # derived from the texts: the same id on every run of the same data
        digest = hashlib.sha256(json.dumps([input_text, output_text], ensure_ascii=False).encode("utf-8"))
        run_id = f"run-{digest.hexdigest()[:12]}"
    return Sample(
        run_id=run_id,
        input=input_text,
        output=output_text,
        context=context_of(run.get("context") if context is None else context),
    )
