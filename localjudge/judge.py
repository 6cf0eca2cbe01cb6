"""The judge interface (batch-first) and the scripted fake judge shipped for tests.

A judge turns a batch of chat prompts, each with the pydantic schema its answer must follow,
into one raw text per prompt. It does not parse: the engine (`localjudge.scoring.scorer`) validates
every text against its schema in one place, so a bad output costs one item, never the batch.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from localjudge.result import ErrorKind

# In the error of a prompt too long for the judge (kind "too_long": not kept for resuming, since
# the limit may change between runs).
TOO_LONG = "exceeds the model's context window"


class JudgeOutOfMemory(RuntimeError):
    """A backend ran out of accelerator memory on a batch (its caches already freed): the
    engine retries the batch in halves."""

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": str}
ChatPrompt = list[Message]


@dataclass(frozen=True)
class Generation:
    """One raw judge output.

    Attributes:
        text: The generated text (JSON when the backend constrains it).
        finished: False when generation hit `max_new_tokens` before the JSON closed.
        new_tokens: Number of generated tokens.
        label_probs: For each position in `text` where the schema let the judge choose between
            labels (a Literal verdict), the probability of each label. Empty when the backend
            does not measure it.
        error: Set when the backend could not generate for this prompt at all (for example a
            prompt longer than the model's context window); the item is then unscored.
        error_kind: Why, as a value (``"too_long"``); see `localjudge.result.ERROR_KINDS`.
    """

    text: str
    finished: bool = True
    new_tokens: int = 0
    label_probs: tuple[dict[str, float], ...] = ()
    error: str | None = None
    error_kind: ErrorKind | None = None


def too_long(prompt_tokens: int, max_new_tokens: int, context_window: int) -> Generation | None:
    """The unscored answer for a prompt whose tokens plus the answer's budget do not fit the
    context window; None when it fits. Every backend checks this before generating."""
    if prompt_tokens + max_new_tokens <= context_window:
        return None
    return Generation("", error=f"prompt of {prompt_tokens} tokens plus {max_new_tokens} to generate {TOO_LONG} "
                      f"of {context_window} tokens", error_kind="too_long")


@runtime_checkable
class Judge(Protocol):
    """A local model that answers chat prompts in JSON following a schema, a batch at a time."""

    @property
    def identity(self) -> str:
        """A string that changes whenever the model or its decoding settings change."""
        ...

    def generate(
        self,
        prompts: Sequence[ChatPrompt],
        schemas: Sequence[type[BaseModel]],
        *,
        max_new_tokens: int,
    ) -> list[Generation]:
        """Generate one answer per prompt, `prompts[i]` constrained to `schemas[i]`."""
        ...


class UnscriptedCallError(AssertionError):
    """The fake judge was asked for something its script does not cover."""


Scripted = str | Mapping[str, Any] | BaseModel | Generation
ScriptEntry = Sequence[Scripted] | Callable[[ChatPrompt], Scripted]


@dataclass(frozen=True)
class JudgeCall:
    """One recorded call to the fake judge."""

    schema_names: tuple[str, ...]
    prompts: tuple[tuple[Message, ...], ...]
    max_new_tokens: int


@dataclass
class FakeJudge:
    """A scripted judge for tests: returns given outputs per schema and records every call.

    Args:
        script: Maps a schema's class name (for example ``"Claims"``) to either a list of
            outputs, handed out in order, or a function of the chat prompt returning an output.
            An output is a dict or pydantic model (serialized to JSON), a raw string (returned
            as is, so malformed JSON can be scripted) or a `Generation` (to script truncation).
        identity: The identity string used in result keys.

    Raises:
        UnscriptedCallError: on a schema with no script entry, or a list that ran out.
    """

    script: Mapping[str, ScriptEntry]
    identity: str = "fake-judge"
    calls: list[JudgeCall] = field(default_factory=list)
    _queues: dict[str, deque[Scripted]] = field(default_factory=dict, repr=False)

    def generate(
        self,
        prompts: Sequence[ChatPrompt],
        schemas: Sequence[type[BaseModel]],
        *,
        max_new_tokens: int,
    ) -> list[Generation]:
        if len(prompts) != len(schemas):
            raise ValueError(f"{len(prompts)} prompts but {len(schemas)} schemas")
        names = tuple(_family(schema) for schema in schemas)
        self.calls.append(
            JudgeCall(names, tuple(tuple(p) for p in prompts), max_new_tokens)
        )
        return [self._answer(name, prompt) for name, prompt in zip(names, prompts, strict=True)]

    def _answer(self, name: str, prompt: ChatPrompt) -> Generation:
        entry = self.script.get(name)
        if entry is None:
            raise UnscriptedCallError(f"FakeJudge has no script for schema {name!r}")
        if callable(entry):
            return _as_generation(entry(prompt))
        queue = self._queues.setdefault(name, deque(entry))
        if not queue:
            raise UnscriptedCallError(f"FakeJudge ran out of scripted {name!r} outputs")
        return _as_generation(queue.popleft())


def _family(schema: type[BaseModel]) -> str:
    """The scripted name of a schema: per-item variants (`Verdicts_3`) share their base name."""
    return schema.__name__.split("_", 1)[0]


def _as_generation(value: Scripted) -> Generation:
    if isinstance(value, Generation):
        return value
    if isinstance(value, BaseModel):
        return Generation(value.model_dump_json())
    if isinstance(value, str):
        return Generation(value)
    return Generation(json.dumps(value))
