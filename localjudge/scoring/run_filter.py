"""`filter_run`: Mastra's `filterRun`, a `prepare_run` built from declarative options.

Mastra's ``filterRun({...})`` (``@mastra/core/evals``, `packages/core/src/evals/base.ts`) returns
a function that rewrites a run before a scorer reads it: it keeps only the agent messages whose
parts are of some types or call some tools, keeps the last N remembered or output messages, and
drops the request context, the expected trajectory or the ground truth. This is the same
function on a run mapping, for ``create_scorer(..., prepare_run=filter_run(...))``.

What it touches, as Mastra's does: ``input["rememberedMessages"]`` when the input is Mastra's
agent input (a mapping with that key), and ``output`` when it is a list of messages. A message is
judged by ``message["content"]["parts"]`` (Mastra's stored message shape); a message without a
parts list (plain text content, a string) is always kept. System messages
(``systemMessages``, ``taggedSystemMessages``) and ``inputMessages`` are never filtered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

PreparedRun = Callable[[Mapping[str, Any]], dict[str, Any]]


def _patterns(name: str, value: Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"filter_run: {name} must be a list of strings, got {value!r}")
    return tuple(value)


def _limit(name: str, value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"filter_run: {name} must be a positive whole number (leave it out for no limit), "
                         f"got {value!r}")
    return value


def _parts(message: Any) -> list[Any] | None:
    """The message's parts (Mastra's ``msg?.content?.parts``), or None where it has no parts list."""
    content = message.get("content") if isinstance(message, Mapping) else None
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return parts if isinstance(parts, list) else None


def _part_type(part: Any) -> str:
    kind = part.get("type") if isinstance(part, Mapping) else None
    return kind if isinstance(kind, str) else ""


def _tool_name(part: Any) -> str | None:
    if _part_type(part) != "tool-invocation":
        return None
    invocation = part.get("toolInvocation")
    name = invocation.get("toolName") if isinstance(invocation, Mapping) else None
    return name if isinstance(name, str) else None


def _keeps(message: Any, part_types: tuple[str, ...] | None, tool_names: tuple[str, ...] | None) -> bool:
    """Mastra's ``filterMessages`` test for one message (every match is a prefix match)."""
    parts = _parts(message)
    if parts is None:
        return True  # plain content: always kept
    typed = lambda: any(_part_type(p).startswith(pattern) for p in parts for pattern in part_types or ())  # noqa: E731
    if not any(_part_type(p) == "tool-invocation" for p in parts):
        return part_types is None or typed()
    if tool_names is not None:
        names = [name for name in map(_tool_name, parts) if name is not None]
        if not any(name.startswith(pattern) for name in names for pattern in tool_names):
            return False
    return part_types is None or typed()


def filter_run(
    *,
    part_types: Sequence[str] | None = None,
    tool_names: Sequence[str] | None = None,
    max_remembered_messages: int | None = None,
    max_output_messages: int | None = None,
    drop_request_context: bool = False,
    drop_expected_trajectory: bool = False,
    drop_ground_truth: bool = False,
) -> PreparedRun:
    """A `prepare_run` function from declarative options, as Mastra's ``filterRun``.

    Args:
        part_types: Keep only messages with a part whose ``type`` starts with one of these
            (``"text"``, ``"tool-invocation"``, ``"reasoning"``, ``"data-"`` for every data part).
            A message without tool invocations is kept when this is not given.
        tool_names: Keep only tool-invocation messages calling a tool whose name starts with one
            of these; messages without tool invocations are not affected.
        max_remembered_messages: Keep the last N of ``input["rememberedMessages"]``, after filtering.
        max_output_messages: Keep the last N output messages, after filtering.
        drop_request_context, drop_expected_trajectory, drop_ground_truth: Remove that field
            (under either spelling: ``request_context`` / ``requestContext``...).

    Returns:
        ``(run) -> run``: a new run; the given one is not changed.

    Raises:
        ValueError: An option of the wrong kind, or a limit below 1 (Mastra reads 0 as "no
            limit"; here a limit is left out for that).
    """
    types_ = _patterns("part_types", part_types)
    tools = _patterns("tool_names", tool_names)
    remembered_cap = _limit("max_remembered_messages", max_remembered_messages)
    output_cap = _limit("max_output_messages", max_output_messages)
    dropped = [names for drop, names in ((drop_request_context, ("request_context", "requestContext")),
                                         (drop_expected_trajectory, ("expected_trajectory", "expectedTrajectory")),
                                         (drop_ground_truth, ("ground_truth", "groundTruth"))) if drop]
    filtering = types_ is not None or tools is not None

    def messages(given: Any, cap: int | None) -> list[Any]:
        kept = [m for m in given if _keeps(m, types_, tools)] if filtering else list(given)
        return kept[-cap:] if cap is not None and len(kept) > cap else kept

    def prepare(run: Mapping[str, Any]) -> dict[str, Any]:
        result = dict(run)
        for names in dropped:
            for name in names:
                result.pop(name, None)
        agent_input = result.get("input")
        if isinstance(agent_input, Mapping) and "rememberedMessages" in agent_input:
            remembered = agent_input["rememberedMessages"] or []
            if not isinstance(remembered, list):
                raise ValueError(f"filter_run: input.rememberedMessages must be a list of messages, "
                                 f"got {type(remembered).__name__}")
            result["input"] = {**agent_input, "rememberedMessages": messages(remembered, remembered_cap)}
        if isinstance(result.get("output"), list):
            result["output"] = messages(result["output"], output_cap)
        return result

    return prepare


__all__ = ["filter_run"]
