"""Tool calls and their results, read from a run's output messages.

`extract_tool_calls` is Mastra's `extractToolCalls` (every call made, with its state) and
`extract_tool_results` its `extractToolResults` (the calls that returned a result). Both read
Mastra's stored messages (`content.parts` tool invocations and the legacy
`content.toolInvocations`, parts winning on a shared call id) and OpenAI-style messages (an
assistant's `tool_calls`, answered by `tool` messages). `tool_calls_of` turns either a run's
output or an explicit `tool_calls` list (a dataset column) into the `ToolCall` values a
`Sample` carries. A call keeps Mastra's `isError` flag (set beside ``state: "result"`` when the
executor reported a failure): the checks and trajectories read such a call as failed, as Mastra's
`isErrorInvocation` and `extractTrajectory` do, while its result is still a result, as in Mastra's
`extractToolResults`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.samples.messages import InvalidRunError, clean_text, is_missing, messages_of

CALL_STATES = ("call", "result", "output-error")  # Mastra's states of an invocation that was made


@dataclass(frozen=True)
class ToolCall:
    """One tool call an agent made, as text the judge can read.

    Attributes:
        name: The tool's name.
        args: Its arguments, as JSON text (``"{}"`` for none).
        result: What it returned, as text (a string as is, anything else as JSON); None if it
            returned nothing (still running, or failed).
        state: ``"result"``, ``"call"`` (no result) or ``"output-error"`` (it failed).
        is_error: Mastra's ``isError: true``: the tool returned `result` but reported a failure.
    """

    name: str
    args: str = "{}"
    result: str | None = None
    state: str = "result"
    is_error: bool = False


def as_text(value: Any) -> str:
    """A string as is; anything else as compact JSON (Mastra's `JSON.stringify`)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def extract_tool_calls(output: Any) -> list[dict[str, Any]]:
    """Every tool call in a run's output messages, oldest first, as ``{"tool_name",
    "tool_call_id", "args", "result", "state", "is_error"}`` dicts (`result` None where none came
    back; `is_error` True where the invocation has Mastra's ``isError: true``). States are
    Mastra's ``call``, ``result`` and ``output-error``; a string output gives []."""
    messages = messages_of(output, "output") or []
    found: dict[str, dict[str, Any]] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        for number, call in enumerate(message.get("tool_calls") or []):  # OpenAI: the assistant's calls
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
                call_id = str(call.get("id", f"{index}.{number}"))
                found[call_id] = {"tool_name": call["function"].get("name"), "tool_call_id": call_id,
                                  "args": call["function"].get("arguments"), "result": None, "state": "call",
                                  "is_error": False}
        if message.get("role") == "tool" and "tool_call_id" in message:  # OpenAI: a call's result
            call_id = str(message["tool_call_id"])
            made = found.get(call_id, {"tool_name": message.get("name"), "tool_call_id": call_id, "args": None})
            found[call_id] = {**made, "result": content, "state": "result", "is_error": False}
            continue
        if not isinstance(content, Mapping):
            continue
        parts = [p.get("toolInvocation") for p in content.get("parts") or []
                 if isinstance(p, Mapping) and p.get("type") == "tool-invocation"]
        merged: dict[str, Any] = {}
        for number, invocation in enumerate(list(content.get("toolInvocations") or []) + parts):  # parts win
            if isinstance(invocation, Mapping):
                merged[str(invocation.get("toolCallId", f"{index}.{number}"))] = invocation
        for call_id, invocation in merged.items():
            if invocation.get("state") in CALL_STATES:
                found[call_id] = {"tool_name": invocation.get("toolName"), "tool_call_id": call_id,
                                  "args": invocation.get("args"), "result": invocation.get("result"),
                                  "state": invocation["state"], "is_error": invocation.get("isError") is True}
    return list(found.values())


def _parsed(arguments: Any) -> Any:
    """OpenAI's arguments are a JSON string: the object it holds (the string if it holds none)."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def extract_tool_results(output: Any) -> list[dict[str, Any]]:
    """The tool calls that returned a result (state ``"result"``, a result not None), oldest
    first, as ``{"tool_name", "tool_call_id", "args", "result"}`` dicts (Mastra's
    `extractToolResults`)."""
    return [{k: call[k] for k in ("tool_name", "tool_call_id", "args", "result")}
            for call in extract_tool_calls(output) if call["state"] == "result" and call["result"] is not None]


def tool_result_context(output: Any) -> list[str]:
    """Each tool result as a context passage: a string as is, anything else as JSON (Mastra's
    faithfulness fallback, `JSON.stringify(result)`)."""
    return [r["result"] if isinstance(r["result"], str) else json.dumps(r["result"], ensure_ascii=False)
            for r in extract_tool_results(output)]


def tool_calls_of(explicit: Any, output: Any) -> tuple[ToolCall, ...]:
    """The run's tool calls: an explicit list (a `tool_calls` field: dicts with `tool_name` or
    `toolName` or `name`, and optional `args`, `result`, `state`, `is_error` or `isError`; or
    bare tool names) when
    given, else those in the output's messages.

    Raises:
        InvalidRunError: an explicit list that is not a list of names or such dicts.
    """
    if is_missing(explicit):
        return tuple(_tool_call(c, f"output tool call {i}") for i, c in enumerate(extract_tool_calls(output)))
    if isinstance(explicit, (str, bytes)) or not isinstance(explicit, Sequence):
        raise InvalidRunError(f"tool_calls must be a list of tool calls, got {type(explicit).__name__}")
    return tuple(_tool_call(c, f"tool_calls[{i}]") for i, c in enumerate(explicit))


def _tool_call(call: Any, where: str) -> ToolCall:
    if isinstance(call, str):
        call = {"tool_name": call}
    if not isinstance(call, Mapping):
        raise InvalidRunError(f"{where}: a tool call must be a name or a dict with tool_name, got "
                              f"{type(call).__name__}")
    name = next((call[k] for k in ("tool_name", "toolName", "name") if isinstance(call.get(k), str)), None)
    if not name or not name.strip():
        raise InvalidRunError(f"{where}: a tool call needs a tool_name")
    result = call.get("result")
    state = call.get("state") or ("call" if is_missing(result) else "result")
    if state not in CALL_STATES:
        raise InvalidRunError(f"{where}: unknown tool call state {state!r} (known: {', '.join(CALL_STATES)})")
    args = call.get("args", call.get("arguments"))
    flagged = any(call.get(k) is True for k in ("is_error", "isError"))  # Mastra's `isError === true`
    return ToolCall(clean_text(name.strip()), clean_text(as_text({} if is_missing(args) else _parsed(args))),
                    None if is_missing(result) else clean_text(as_text(result)), state, flagged)
