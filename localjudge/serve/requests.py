"""The OpenAI chat request as `localjudge serve` reads it, and the chat prompt it becomes.

Fields a judge has no use for (`temperature`, `top_p`, `seed`, `user`, `presence_penalty`...) are
accepted and ignored: answers are greedy whatever a request asks (docs/serve.md). What cannot be
honoured is refused in one line naming the field (`n` above 1, images, audio).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from localjudge.judge import ChatPrompt, Message

ROLES = ("system", "developer", "user", "assistant", "tool", "function")


@dataclass(frozen=True)
class Limits:
    """What one request may ask for and how requests are batched (the flags of `localjudge serve`)."""

    max_body: int = 4 << 20  # bytes
    max_messages: int = 256
    max_tokens: int = 4096
    text_tokens: int = 512
    max_rows: int = 16
    window: float = 0.02
    max_queue: int = 256
    retry_after: int = 2  # seconds, in a 429


class Loose(BaseModel):
    """OpenAI's objects carry more fields than a judge reads: the others are ignored."""

    model_config = ConfigDict(extra="ignore")


class ChatMessage(Loose):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    name: str | None = None

    def text(self) -> str:
        """The message's text: a string, or its text parts joined by newlines (as vLLM joins them)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        texts = []
        for i, part in enumerate(self.content):
            kind = part.get("type")
            if kind not in ("text", "input_text"):
                raise ValueError(f"messages: content part {i} is of type {kind!r}; the judge reads text parts only")
            text = part.get("text")
            if not isinstance(text, str):
                raise ValueError(f"messages: content part {i} has no text")
            texts.append(text)
        return "\n".join(texts)


class FunctionSpec(Loose):
    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


class Tool(Loose):
    type: Literal["function"] = "function"
    function: FunctionSpec


class ChatRequest(Loose):
    """`POST /v1/chat/completions`."""

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    response_format: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    logprobs: bool = False
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    n: int = 1
    stop: str | list[str] | None = None

    @field_validator("n")
    @classmethod
    def _one_answer(cls, n: int) -> int:
        if n != 1:
            raise ValueError("the judge is greedy: one answer per request (n=1)")
        return n

    def budget(self) -> int | None:
        """The token limit the request sets, if any (`max_completion_tokens` over `max_tokens`)."""
        return self.max_completion_tokens or self.max_tokens

    def stops(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else [s for s in self.stop if s]


def chat_prompt(messages: list[ChatMessage]) -> ChatPrompt:
    """The chat the judge's template renders: system and developer messages first, as one system
    message; tool results and earlier tool calls as text; turns of one role in a row merged (some
    templates refuse them)."""
    system = [m.text() for m in messages if m.role in ("system", "developer")]
    turns: list[Message] = []
    for message in messages:
        if message.role in ("system", "developer"):
            continue
        text = message.text()
        role = message.role
        if role in ("tool", "function"):
            role, text = "user", f"Tool result{f' ({message.name})' if message.name else ''}:\n{text}"
        elif role == "assistant" and message.tool_calls:
            import json

            calls = json.dumps([c.get("function", c) for c in message.tool_calls], ensure_ascii=False)
            text = f"{text}\n{calls}".strip()
        if turns and turns[-1]["role"] == role:
            turns[-1] = {"role": role, "content": f"{turns[-1]['content']}\n\n{text}"}
        else:
            turns.append({"role": role, "content": text})
    if not turns or turns[-1]["role"] != "user":
        raise ValueError("messages: the last message (after system ones) must be the user's (or a tool result)")
    head: list[Message] = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    return [*head, *turns]


def last_user_text(messages: list[ChatMessage]) -> str:
    """The text of the last user message ('' when there is none)."""
    for message in reversed(messages):
        if message.role == "user":
            return message.text()
    return ""
