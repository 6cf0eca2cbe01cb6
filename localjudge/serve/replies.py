"""OpenAI-shaped replies: a chat completion, its stream of chunks, an error.

`logprobs`, when asked for, has one entry per label choice of the answer (each enum value the
grammar let the judge choose): the chosen label and every allowed label's log probability. The
engines measure probabilities there, not at every token (docs/serve.md).
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Iterator
from typing import Any

from localjudge.serve.answers import Answer

STREAM_PIECE = 64  # characters of content per chunk of a stream


def error_body(message: str, *, kind: str = "invalid_request_error", param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    """OpenAI's error object."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def usage(answer: Answer) -> dict[str, int]:
    return {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
            "total_tokens": answer.prompt_tokens + answer.completion_tokens}


def logprobs(answer: Answer, top: int | None) -> dict[str, Any]:
    entries = []
    for probs in answer.label_probs:
        ranked = sorted(probs.items(), key=lambda item: (-item[1], item[0]))
        chosen, p = ranked[0]
        entries.append({"token": chosen, "logprob": _log(p), "bytes": list(chosen.encode()),
                        "top_logprobs": [{"token": label, "logprob": _log(q), "bytes": list(label.encode())}
                                         for label, q in ranked[:top if top is not None else len(ranked)]]})
    return {"content": entries}


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -9999.0


def _tool_calls(answer: Answer, call_id: str) -> list[dict[str, Any]]:
    assert answer.tool_call is not None
    name, arguments = answer.tool_call
    return [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]


class Reply:
    """The reply of one request: its id, creation time, model and fingerprint."""

    def __init__(self, model: str, fingerprint: str, *, with_logprobs: bool = False, top: int | None = None) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model, self.fingerprint = model, fingerprint
        self.with_logprobs, self.top = with_logprobs, top

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model,
                "system_fingerprint": self.fingerprint}

    def completion(self, answer: Answer, source: str) -> dict[str, Any]:
        """The whole reply (``stream: false``)."""
        message: dict[str, Any] = {"role": "assistant", "content": answer.content}
        if answer.tool_call is not None:
            message["tool_calls"] = _tool_calls(answer, f"call_{self.id[9:33]}")
        choice = {"index": 0, "message": message, "finish_reason": answer.finish_reason,
                  "logprobs": logprobs(answer, self.top) if self.with_logprobs else None}
        return {**self._head("chat.completion"), "choices": [choice], "usage": usage(answer),
                "localjudge": {"constraint": source, "label_probs": list(answer.label_probs)}}

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **more: Any) -> str:
        body = {**self._head("chat.completion.chunk"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **more}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    def opening(self) -> str:
        """The first chunk, sent before the answer is ready."""
        return self.chunk({"role": "assistant", "content": ""})

    def stream(self, answer: Answer, source: str) -> Iterator[str]:
        """The answer's chunks after `opening`: its content in pieces (or its tool call), the
        finish reason, usage, then ``[DONE]``."""
        if answer.tool_call is not None:
            call = _tool_calls(answer, f"call_{self.id[9:33]}")[0]
            yield self.chunk({"tool_calls": [{"index": 0, **call}]})
        else:
            content = answer.content or ""
            for start in range(0, len(content), STREAM_PIECE):
                yield self.chunk({"content": content[start:start + STREAM_PIECE]})
        extra: dict[str, Any] = {"usage": usage(answer), "localjudge": {"constraint": source}}
        if self.with_logprobs:
            extra["localjudge"]["logprobs"] = logprobs(answer, self.top)
        yield self.chunk({}, answer.finish_reason, **extra)
        yield "data: [DONE]\n\n"

    def stream_error(self, body: dict[str, Any]) -> Iterator[str]:
        """An error after the stream began (its status is sent): an error event, then ``[DONE]``."""
        yield f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
        yield "data: [DONE]\n\n"
