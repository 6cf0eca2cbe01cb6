"""One request's answer from the judge: the constraint applied, the token budget sized, the
answer read back.

- **JSON** (a schema, a tool call): the budget is the longest answer the bounded schema allows
  (`schema_bounds.longest`, a token per character at worst), within the request's `max_tokens`,
  the server's `--max-tokens` and the context left after the prompt. An answer cut off anyway
  (the request's limit was smaller) is asked again under the same schema with its string and
  list caps shrunk to fit the budget (`schema_bounds.fit`), so it closes: the content always
  parses and validates.
- **Text**: generated as a JSON string (``{"text": "..."}``) so the repetition guard, which
  watches strings, closes a loop; the string is unwrapped, its repeated tail dropped. A budget
  of ``--text-tokens`` by default; `stop` strings cut it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.judge import ChatPrompt, Generation
from localjudge.repetition import drop_repeats
from localjudge.serve.batcher import Batcher, schema_class
from localjudge.serve.constraints import Constraint, RequestError
from localjudge.serve.schema_bounds import fit, longest

TEXT_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
               "additionalProperties": False}
TEXT_OPEN = '{"text":"'
WRAP_TOKENS = 8  # the JSON around a text answer, at most


@dataclass(frozen=True)
class Answer:
    """What the reply carries.

    Attributes:
        content: The message's text (JSON under the schema, or text); None for a tool call.
        tool_call: (function name, arguments as JSON text) when the answer is a tool call.
        finish_reason: ``stop``, ``length`` (text cut at the budget) or ``tool_calls``.
        prompt_tokens, completion_tokens: Usage.
        label_probs: For each label choice in the answer (an enum value), each label's
            probability: what `logprobs` reports.
    """

    content: str | None
    tool_call: tuple[str, str] | None
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    label_probs: tuple[dict[str, float], ...] = ()


@dataclass
class Answerer:
    """Answers requests on a batcher.

    Args:
        batcher: Where the judge calls go.
        count_tokens: A chat prompt's length in tokens, as the judge renders it.
        context_window: The judge's prompt plus answer limit, in tokens.
        max_tokens: The most tokens any answer may take (``--max-tokens``).
        text_tokens: A text answer's budget when the request sets none (``--text-tokens``).
    """

    batcher: Batcher
    count_tokens: Callable[[ChatPrompt], int]
    context_window: int
    max_tokens: int = 4096
    text_tokens: int = 512

    def prompt_tokens(self, prompt: ChatPrompt) -> int:
        """The prompt's tokens, checked to leave room for an answer.

        Raises:
            RequestError: the prompt leaves no room for an answer in the context window.
        """
        tokens = self.count_tokens(prompt)
        if self.context_window - tokens < WRAP_TOKENS + 1:
            raise RequestError("messages", f"the prompt's {tokens} tokens leave no room for an answer in the "
                                           f"model's context of {self.context_window} tokens")
        return tokens

    async def answer(self, prompt: ChatPrompt, constraint: Constraint, limit: int | None,
                     stops: Sequence[str] = (), prompt_tokens: int | None = None) -> Answer:
        """The answer to `prompt` under `constraint`, in at most `limit` tokens (None: the server's).

        Raises:
            RequestError: the prompt leaves no room for an answer in the context window.
            QueueFull: the batcher's queue is full.
        """
        if prompt_tokens is None:
            prompt_tokens = self.prompt_tokens(prompt)
        room = self.context_window - prompt_tokens
        cap = min(limit or self.max_tokens, self.max_tokens, room)
        if constraint.kind == "text":
            return await self._text(prompt, min(limit or self.text_tokens, cap), prompt_tokens, stops)
        assert constraint.schema is not None
        budget = min(longest(constraint.schema) + WRAP_TOKENS, max(cap, WRAP_TOKENS + 1))
        generation = await self.batcher.submit(prompt, schema_class(constraint.schema), budget)
        _raise_on_error(generation)
        if not generation.finished:
            shrunk = fit(constraint.schema, budget - WRAP_TOKENS)
            if shrunk is not None:
                generation = await self.batcher.submit(prompt, schema_class(shrunk), budget)
                _raise_on_error(generation)
        content = generation.text
        if constraint.kind == "tool":
            name, arguments = _tool_call(constraint, content)
            return Answer(None, (name, arguments), "tool_calls", prompt_tokens, generation.new_tokens,
                          generation.label_probs)
        reason = "stop" if generation.finished else "length"
        return Answer(content, None, reason, prompt_tokens, generation.new_tokens, generation.label_probs)

    async def _text(self, prompt: ChatPrompt, budget: int, prompt_tokens: int, stops: Sequence[str]) -> Answer:
        generation = await self.batcher.submit(prompt, schema_class(TEXT_SCHEMA, "Text"), budget + WRAP_TOKENS)
        _raise_on_error(generation)
        text = drop_repeats(unwrap_text(generation.text))
        reason = "stop" if generation.finished else "length"
        for stop in stops:
            if stop in text:
                text, reason = text[:text.index(stop)], "stop"
        return Answer(text, None, reason, prompt_tokens, generation.new_tokens)


def _raise_on_error(generation: Generation) -> None:
    if generation.error is not None:
        raise RequestError("messages", generation.error)


def _tool_call(constraint: Constraint, content: str) -> tuple[str, str]:
    if constraint.tool is not None:
        return constraint.tool, content
    value: dict[str, Any] = json.loads(content)
    return str(value["name"]), json.dumps(value["arguments"], ensure_ascii=False, separators=(",", ":"))


def unwrap_text(raw: str) -> str:
    """The text inside a text answer's JSON (``{"text":"..."}``), also when it was cut off."""
    try:
        value = json.loads(raw)
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            return value["text"]
    except ValueError:
        pass
    body = raw[len(TEXT_OPEN):] if raw.startswith(TEXT_OPEN) else raw
    for cut in range(0, 7):  # an escape cut off in the middle (`\`, `\u00`) is dropped
        try:
            text = json.loads('"' + body[:len(body) - cut] + '"')
        except ValueError:
            continue
        return str(text)
    return ""
