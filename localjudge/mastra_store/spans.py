"""One agent run's spans (Mastra's observability trace) read into a run localjudge scores.

An agent run is an ``agent_run`` span and its descendants. From them:

- the input: the first model call's (``model_generation``) messages, split as Mastra's agent
  scorers get them: system messages, the messages remembered from the thread (before the last
  user turn), the new user messages; without a model call, the agent span's own input;
- the output: the agent span's final text, as one assistant message (Mastra's stored format,
  ``content.parts``) holding every tool invocation before the text;
- the tool calls: each ``tool_call`` / ``mcp_tool_call`` span (name, arguments, result, or
  ``output-error`` when it failed), in the order they started; their results are also the run's
  context passages (as Mastra's scorers fall back to tool results for context);
- where it came from: trace, span, run, thread and resource ids, the agent (entity), the
  experiment it belonged to, when it started.

Client-side tools (``client_tool_call``) run outside the agent and have no result in the trace:
they are not read.

A run that cannot be read is refused with `UnreadableRun`, its message naming the table, row and
column: a span of the run holding a cell that cannot be read (`localjudge.mastra_store.cells`),
a span without a ``spanId``, or a tree that is not one (a span met twice: a ``parentSpanId``
cycle, the root's own id repeated, a cycle through the root above it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from localjudge.mastra_store.cells import BAD_CELL, row_label
from localjudge.mastra_store.schema import SPANS

TOOL_SPANS = ("tool_call", "mcp_tool_call")


class UnreadableRun(ValueError):
    """A run that cannot be read from its spans; the message names the table, row and column."""


def run_from_spans(root: Mapping[str, Any], spans: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run of the agent span `root`, given every span of its trace.

    Raises:
        UnreadableRun: see the module's docstring.
    """
    below = descendants(root, spans)
    tools = [s for s in below if s.get("spanType") in TOOL_SPANS]
    calls = [tool_invocation(s) for s in tools]
    text = output_text(root.get("output"))
    parts: list[dict[str, Any]] = [{"type": "tool-invocation", "toolInvocation": call} for call in calls]
    parts.append({"type": "text", "text": text})
    run: dict[str, Any] = {
        "run_id": str(root.get("runId") or root["spanId"]),
        "input": agent_input(root, below),
        "output": [{"id": f"{root['spanId']}-output", "role": "assistant",
                    "content": {"format": 2, "parts": parts, "content": text}}],
        "mastra": origin(root),
    }
    results = [call["result"] for call in calls if call["state"] == "result"]
    if results:
        run["context"] = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in results]
    return run


def origin(root: Mapping[str, Any]) -> dict[str, Any]:
    """Where a run came from, as the score row needs it."""
    return {
        "traceId": root.get("traceId"), "spanId": root.get("spanId"), "runId": root.get("runId"),
        "entityType": root.get("entityType"), "entityId": root.get("entityId"),
        "entityName": root.get("entityName"), "threadId": root.get("threadId"),
        "resourceId": root.get("resourceId"), "experimentId": root.get("experimentId"),
        "startedAt": str(root.get("startedAt")) if root.get("startedAt") is not None else None,
    }


def readable(span: Mapping[str, Any]) -> Mapping[str, Any]:
    """`span`, when every cell of it was read and it has a ``spanId``.

    Raises:
        UnreadableRun: naming the row and column.
    """
    if span.get(BAD_CELL):
        raise UnreadableRun(span[BAD_CELL])
    if span.get("spanId") is None:
        raise UnreadableRun(f"{row_label(SPANS, span)}, column spanId: NULL (a span has an id)")
    return span


def descendants(root: Mapping[str, Any], spans: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Every span below `root` in its trace, in the order they started (each read once).

    Raises:
        UnreadableRun: a span below that cannot be read, or one met twice (not a tree).
    """
    children: dict[Any, list[Mapping[str, Any]]] = {}
    for span in spans:
        if span.get("parentSpanId") is not None:
            children.setdefault(span["parentSpanId"], []).append(span)
    found, todo, seen = [], [readable(root)["spanId"]], {readable(root)["spanId"]}
    while todo:
        for child in children.get(todo.pop(), []):
            span_id = readable(child)["spanId"]
            if span_id in seen:
                raise UnreadableRun(f"{row_label(SPANS, child)}, column parentSpanId: span {span_id!r} is met twice "
                                    f"below agent span {root['spanId']!r} (a parentSpanId cycle or a repeated spanId)")
            seen.add(span_id)
            found.append(child)
            todo.append(span_id)
    return sorted(found, key=lambda s: str(s.get("startedAt")))


def under_other_agent(root: Mapping[str, Any], by_id: Mapping[Any, Mapping[str, Any]]) -> bool:
    """True when an agent span has another agent span above it (an agent called by an agent):
    that run is part of the outer one.

    Raises:
        UnreadableRun: the spans above form a cycle (through the root or above it): whether
            another agent is above cannot be told.
    """
    seen = {readable(root)["spanId"]}
    parent = by_id.get(root.get("parentSpanId")) if root.get("parentSpanId") is not None else None
    while parent is not None:
        if parent.get("spanId") in seen:
            raise UnreadableRun(f"{row_label(SPANS, parent)}, column parentSpanId: the spans above agent span "
                                f"{root.get('spanId')!r} form a cycle")
        if parent.get("spanType") == "agent_run":
            return True
        readable(parent)  # whether another agent is above must be told from readable spans
        seen.add(parent["spanId"])
        parent = by_id.get(parent.get("parentSpanId")) if parent.get("parentSpanId") is not None else None
    return False


def tool_invocation(span: Mapping[str, Any]) -> dict[str, Any]:
    """A tool span as Mastra's stored tool invocation (``state``, ``toolCallId``, ``toolName``,
    ``args``, ``result``)."""
    given = span.get("attributes")
    attributes: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    failed = span.get("error") is not None or attributes.get("success") is False
    invocation: dict[str, Any] = {
        "state": "output-error" if failed else "result",
        "toolCallId": str(attributes.get("toolCallId") or span["spanId"]),
        "toolName": str(span.get("entityId") or span.get("entityName") or span.get("name")),
        "args": span.get("input") if span.get("input") is not None else {},
    }
    if not failed:
        invocation["result"] = span.get("output")
    return invocation


def output_text(output: Any) -> str:
    """An agent span's output as text: its ``text`` (Mastra's `{text, files}`), a string as is."""
    if isinstance(output, Mapping):
        output = output.get("text")
    if output is None:
        return ""
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def agent_input(root: Mapping[str, Any], below: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's input in the shape of Mastra's agent scorers (`inputMessages`,
    `rememberedMessages`, `systemMessages`), from the first model call, else the agent span."""
    model_call = next((s for s in below if s.get("spanType") == "model_generation"
                       and isinstance(s.get("input"), Mapping) and isinstance(s["input"].get("messages"), list)), None)
    messages = [m for m in (plain_message(m) for m in model_call["input"]["messages"]) if m] if model_call else []
    if not messages:
        given = root.get("input")
        listed = given if isinstance(given, list) else [given] if given is not None else []
        messages = [m for m in (plain_message(m if isinstance(m, Mapping) else {"role": "user", "content": m})
                                for m in listed) if m]
    system = [m for m in messages if m["role"] == "system"]
    chat = [m for m in messages if m["role"] in ("user", "assistant")]
    start = len(chat)
    while start > 0 and chat[start - 1]["role"] == "user":
        start -= 1
    return {"inputMessages": chat[start:], "rememberedMessages": chat[:start], "systemMessages": system,
            "taggedSystemMessages": {}}


def plain_message(message: Mapping[str, Any]) -> dict[str, str] | None:
    """A model message as ``{role, content}`` text (text parts joined); None for tool messages
    and messages without text."""
    role = message.get("role")
    if role not in ("system", "user", "assistant"):
        return None
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) for p in content
                            if isinstance(p, Mapping) and p.get("type") == "text" and p.get("text"))
    elif content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    return {"role": str(role), "content": content} if content else None
