"""Normalising runs: plain strings or chat messages in, one `Sample` of clean text out.

A run is a mapping with `output` and optional fields, each under its own name or Mastra's:

- `input` and `output`: a string or chat messages in any shape Mastra's judges accept (see
  `localjudge.samples.messages`): the input is the first user message's text, the output the last
  assistant message that has text (an output whose assistant messages hold none is empty);
- `context`: a string or a list of strings (retrieved passages);
- `run_id` / `runId` (a run without one gets an id derived from its texts, the same every run);
- `ground_truth` / `groundTruth`: the reference answer (text, or anything JSON can write);
- `system`: the system prompt the answering model had (else the input's system messages, or
  Mastra's agent input `systemMessages`);
- `tool_calls` / `toolCalls`: the tools called (else those in the output messages: see
  `localjudge.samples.tool_calls`);
- `expected_trajectory` / `expectedTrajectory`: the steps expected (names, or Mastra's
  `{name, stepType, data}` steps, or `{steps: [...]}`);
- `baseline_response` / `baselineResponse`: the response to the clean query (noise sensitivity);
- `conversation`: the whole chat as a list of messages (else, where the input or output is a
  list of messages, those: every user and assistant message with text, in order).

A missing, None or NaN field means none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localjudge.samples.messages import InvalidRunError, clean_text, is_missing, message_text, messages_of, text_of
from localjudge.samples.tool_calls import ToolCall, as_text, extract_tool_results, tool_calls_of, tool_result_context
from localjudge.text_safety import safe_text

Turn = tuple[str, str]  # (role, text) of one message of a conversation


@dataclass(frozen=True)
class Sample:
    """A run reduced to the texts the scorers judge.

    Attributes:
        run_id, input, output, context: The run's id, the first user message, the answer
            judged (the last assistant message with text) and the context passages.
        ground_truth: The reference answer, as text.
        system: The system prompt the answering model had.
        conversation: Every message with text, input then output, where they were messages
            (None for plain strings: then the conversation is just `input` and `output`).
        tool_calls: The tools the answering agent called, in order.
        expected_trajectory: The steps expected of the agent, one line each.
        baseline_response: The response to the clean query, for noise sensitivity.
        raw: The run as given (after the scorer's `prepare_run`): what a function step reads
            beyond the texts (the messages, the request context, a structured ground truth).
            Not part of equality; the texts above are what results are keyed on.
    """

    run_id: str | None
    input: str
    output: str
    context: tuple[str, ...] | None = None
    ground_truth: str | None = None
    system: str | None = None
    conversation: tuple[Turn, ...] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    expected_trajectory: tuple[str, ...] | None = None
    baseline_response: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def request_context(self) -> Any:
        """The run's request context (``request_context`` / ``requestContext``), or None."""
        return field_of(self.raw, "request_context", "requestContext")

    @property
    def ground_truth_data(self) -> Any:
        """The run's ground truth as given (structured data too), or None; `ground_truth` is its text."""
        return field_of(self.raw, "ground_truth", "groundTruth")

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The conversation: the messages kept, or the input and output as two turns."""
        if self.conversation is not None:
            return self.conversation
        return tuple((role, text) for role, text in (("user", self.input), ("assistant", self.output)) if text)


class RecordedRun(dict[str, Any]):
    """A run whose keys read through `Sample.raw` are noted in `read`: the prompt hasher's probe
    runs, so that the run fields a scorer's own steps read are in its results' keys."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()


class _ReadView(Mapping[str, Any]):
    """`Sample.raw` of a `RecordedRun`: reads it, noting each key read (iterating reads them all)."""

    def __init__(self, run: RecordedRun) -> None:
        self._run = run

    def __getitem__(self, key: str) -> Any:
        self._run.read.add(str(key))
        return self._run[key]

    def __iter__(self) -> Any:
        self._run.read.update(map(str, self._run))
        return iter(self._run)

    def __len__(self) -> int:
        return len(self._run)


def field_of(run: Mapping[str, Any], *names: str) -> Any:
    """The first of `names` the run holds a value under (None, NaN: no value)."""
    return next((run[n] for n in names if not is_missing(run.get(n))), None)


def text_field(value: Any) -> str | None:
    """A free field as text: a string as is, anything else as JSON; None when empty."""
    if is_missing(value):
        return None
    text = clean_text(as_text(value)).strip()
    return text or None


def system_of(run: Mapping[str, Any]) -> str | None:
    """The system prompt: the run's `system` (a string or strings), else the input's system and
    developer messages and Mastra's `systemMessages` / `taggedSystemMessages`, joined."""
    given = run.get("system")
    if not is_missing(given):
        if isinstance(given, str):
            return clean_text(given).strip() or None
        if isinstance(given, Sequence) and all(isinstance(g, str) for g in given):
            return clean_text("\n".join(given)).strip() or None
        raise InvalidRunError(f"system must be a string or a list of strings, got {type(given).__name__}")
    value = run.get("input")
    found: list[Any] = []
    if isinstance(value, Mapping):
        found += list(value.get("systemMessages") or [])
        for tagged in (value.get("taggedSystemMessages") or {}).values():
            found += list(tagged or [])
    found += [m for m in messages_of(value, "input") or [] if isinstance(m, Mapping)
              and m.get("role") in ("system", "developer")]
    texts = [message_text({**m, "role": "system"}, "input system message")[1] if isinstance(m, Mapping)
             else None for m in found]
    joined = "\n".join(t.strip() for t in texts if t and t.strip())
    return clean_text(joined) or None


def conversation_of(run: Mapping[str, Any]) -> tuple[Turn, ...] | None:
    """Every user and assistant message with text: the run's `conversation` messages, else the
    input's then the output's, where one of them is messages (the other, plain text, is one turn:
    the answer judged is always in it); None when neither is (plain strings)."""
    if not is_missing(run.get("conversation")):
        messages = messages_of(run["conversation"], "conversation")
        if messages is None:
            raise InvalidRunError("conversation must be a list of chat messages")
        return tuple(turns("conversation", messages))
    value = run.get("input")
    earlier = list(value.get("rememberedMessages") or []) if isinstance(value, Mapping) else []
    given = [messages_of(value, "input") if not is_missing(value) else None, messages_of(run["output"], "output")]
    if given == [None, None]:
        return None
    asked = turns("input", earlier + given[0]) if given[0] is not None else text_turn(value, "input", "user")
    answered = turns("output", given[1]) if given[1] is not None else text_turn(run["output"], "output", "assistant")
    return tuple(asked + answered)


def text_turn(value: Any, field: str, role: str) -> list[Turn]:
    """A field that is not messages (a string, a `{text}` object) as one turn; none when empty."""
    text = "" if is_missing(value) else text_of(value, field=field, role=role).strip()
    return [(role, text)] if text else []


def turns(field: str, messages: Sequence[Any]) -> list[Turn]:
    """The user and assistant messages with text, as (role, text)."""
    found = []
    for i, message in enumerate(messages):
        role, text = message_text(message, f"{field}[{i}]")
        if role in ("user", "assistant") and text and text.strip():
            found.append((role, clean_text(text).strip()))
    return found


def trajectory_of(value: Any) -> tuple[str, ...] | None:
    """Expected steps as lines: a name, or ``[stepType] name (data: {...})`` for Mastra's steps;
    `{steps: [...]}` is read as its steps. None when absent or empty."""
    if is_missing(value):
        return None
    if isinstance(value, Mapping):
        value = value.get("steps")
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidRunError("expected_trajectory must be a list of step names or steps ({name, stepType?, data?})")
    lines = []
    for i, step in enumerate(value):
        if isinstance(step, str):
            step = {"name": step}
        if not isinstance(step, Mapping) or not isinstance(step.get("name"), str) or not step["name"].strip():
            raise InvalidRunError(f"expected_trajectory[{i}]: a step must be a name or a dict with a name")
        kind = f"[{step['stepType']}] " if isinstance(step.get("stepType"), str) else ""
        data = f" (data: {as_text(step['data'])})" if not is_missing(step.get("data")) else ""
        lines.append(clean_text(f"{kind}{step['name'].strip()}{data}"))
    return tuple(lines) or None


def context_of(value: Any) -> tuple[str, ...] | None:
    """Context as a tuple of non-empty passages; None when absent.

    Raises:
        InvalidRunError: for a nested list, a non-string item, or a non-list, non-string value.
    """
    if is_missing(value):
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
        if not is_missing(run.get(key)):
            return safe_text(str(run[key]))  # stored with every result: valid UTF-8, no NUL
    return None


def to_sample(run: Mapping[str, Any], *, context: Any = None) -> Sample:
    """Normalise one run; `context`, when given, replaces the run's own context field."""
    if not isinstance(run, Mapping):
        raise InvalidRunError(f"a run must be a dict with input and output, got {type(run).__name__}")
    if "output" not in run:
        raise InvalidRunError("run has no 'output'")
    input_text = "" if is_missing(run.get("input")) else text_of(run["input"], field="input", role="user")
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
        ground_truth=text_field(field_of(run, "ground_truth", "groundTruth")),
        system=system_of(run),
        conversation=conversation_of(run),
        tool_calls=tool_calls_of(field_of(run, "tool_calls", "toolCalls"), run["output"]),
        expected_trajectory=trajectory_of(field_of(run, "expected_trajectory", "expectedTrajectory")),
        baseline_response=text_field(field_of(run, "baseline_response", "baselineResponse")),
        raw=_ReadView(run) if isinstance(run, RecordedRun) else run,
    )


__all__ = ["InvalidRunError", "RecordedRun", "Sample", "ToolCall", "Turn", "clean_text", "context_of",
           "extract_tool_results", "run_id_of", "text_of", "to_sample", "tool_result_context"]
