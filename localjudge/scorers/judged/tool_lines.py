"""Tools and tool calls as a judge reads them, one line each: a call's name and arguments
(`call_line`, cut to `SHOWN_CHARS`; with its result, Mastra's trajectory line) and the tools an
agent could call, read from a scorer's option (`check_tools`: names, Mastra's `Tool`, OpenAI tool
definitions). Used by the tool call accuracy and trajectory accuracy scorers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from localjudge.samples import ToolCall

NAME_CHARS = 64  # a tool name
SHOWN_CHARS = 300  # a call's arguments (and a step's result) as shown, at most


class Tool(NamedTuple):
    name: str
    description: str


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` on one line (runs of spaces and line breaks as one space), cut to `limit`
    characters (with an ellipsis), for a numbered line of a prompt."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_line(call: ToolCall, *, result: bool = False) -> str:
    """One tool call as the judge reads it: ``name {"arg": ...}``; with `result`, Mastra's
    trajectory line: ``[tool_call] name (args: {...}, result: ...)``."""
    name = clip(call.name, NAME_CHARS)
    if not result:
        return f"{name} {clip(call.args)}" + (" (failed)" if call.state == "output-error" else "")
    details = [f"args: {clip(call.args)}"]
    if call.result is not None:
        details.append(f"result: {clip(call.result)}")
    elif call.state == "output-error":
        details.append("failed")
    return f"[tool_call] {name} ({', '.join(details)})"


def check_tools(tools: Sequence[str | Mapping[str, Any]] | None) -> tuple[Tool, ...]:
    """The available tools as (name, description): a name, or a mapping with ``name`` or ``id``
    (Mastra's `Tool`) and an optional ``description``, or an OpenAI tool ``{"function": {...}}``."""
    if tools is None:
        return ()
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise TypeError("available_tools must be a list of tools (names or {'name' or 'id', 'description'})")
    parsed: list[Tool] = []
    for item in tools:
        if isinstance(item, Mapping) and isinstance(item.get("function"), Mapping):
            item = item["function"]
        name, description = (item, "") if isinstance(item, str) else (None, "")
        if isinstance(item, Mapping):
            name, description = item.get("name") or item.get("id"), item.get("description") or ""
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > NAME_CHARS:
            raise ValueError(f"a tool needs a name of 1 to {NAME_CHARS} characters, got {item!r}")
        if not isinstance(description, str):
            raise ValueError(f"a tool's description must be text, got {description!r}")
        parsed.append(Tool(name.strip(), " ".join(description.split())))
    names = [t.name for t in parsed]
    if len(set(names)) != len(names):
        raise ValueError(f"available tool names must be unique, got {names}")
    return tuple(parsed)
