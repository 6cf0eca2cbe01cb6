"""What each kind of server is sent and answers: one table, one request builder, one reader.

Per kind (token ids go to ``/v1/completions`` when the judge has the model's tokenizer, else
chat messages to ``/v1/chat/completions``):

- ``vllm``: ``structured_outputs: {json: spec}``; ``logprobs`` (completions) or ``top_logprobs``
  (chat), computed after the grammar's mask; ``vllm_xargs`` switching on localjudge's repetition
  guard, which a server started with ``--logits-processors`` `GUARD` runs (others ignore it).
- ``sglang``: ``json_schema`` (a JSON string) on completions, ``response_format`` on chat; logprobs.
- ``llama-cpp`` (llama-server): ``json_schema`` on completions, ``response_format`` on chat;
  ``n_probs``, computed before the grammar (`grammar.label_mass` renormalises over the labels).
  Its JSON-schema grammar lets the judge write whitespace between JSON tokens (`compact` sets it
  aside before labels are read).
- ``ollama``: chat messages only, to its own ``/api/chat`` with ``format: schema``; no logprobs.
- ``openai`` (LM Studio, any other): chat messages only, ``response_format: {type: json_schema}``,
  ``top_logprobs`` where the server gives them.

vLLM's dialect follows vLLM 0.32's source (its server was seen to take token-id prompts with
``structured_outputs: {json: schema}`` and ``logprobs``); llama-server's was checked against
llama.cpp 0c1e570 (llama-cpp-python 0.3.36's copy: token ids, ``json_schema`` and ``n_probs`` on
``/v1/completions``, its top tokens in ``choices[0].logprobs.content``); the others are written
from each server's documentation and source, not checked against a running server. vLLM gets
localjudge's own grammar spec (`grammar.grammar_spec`), whose ``x-guidance:
{whitespace_flexible: false}`` its ``guidance`` backend reads; its other backends ignore it, and
vLLM 0.32 reads ``disable_any_whitespace`` only from the server's start options, not per request:
start the server with ``--structured-outputs-config '{"backend": "guidance"}'`` for the in-process
engines' grammar. The other servers get the plain JSON schema. A chat-message dialect lets the
server render the prompt with its own template: the judge's identity says so (``+server-template``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.engines.server.values import count, probability
from localjudge.judge import ChatPrompt

KINDS = ("vllm", "sglang", "llama-cpp", "ollama", "openai")
TOKEN_KINDS = frozenset({"vllm", "sglang", "llama-cpp"})  # take token-id prompts on /v1/completions
LOGPROBS = 20  # top logprobs per position: vLLM's and OpenAI's cap; a label choice allows fewer tokens
# localjudge's repetition guard inside a vLLM server (started with ``--logits-processors GUARD``),
# switched on per request by ``vllm_xargs``; the same names as `localjudge.engines.vllm.judge`'s
GUARD = "localjudge.engines.vllm.guard:RepeatGuard"
GUARD_ARG = "localjudge_repeat_guard"
Position = tuple[str, list[tuple[str, float]]]  # a generated token's text, and (text, probability) candidates


@dataclass(frozen=True)
class Reply:
    """A server's answer to one row, read the same way for every dialect."""

    text: str
    finish_reason: str | None
    new_tokens: int
    positions: tuple[Position, ...] = ()


def request(kind: str, model: str, prompt: Sequence[int] | ChatPrompt, spec: dict[str, Any], *,
            max_tokens: int, logprobs: bool) -> tuple[str, dict[str, Any]]:
    """The (path, JSON body) of one greedy, constrained request: token ids go to the completions
    endpoint, chat messages to the chat one. `spec` is `grammar.grammar_spec`'s; `logprobs`:
    ask for the top tokens per position (the schema has labels)."""
    tokens = bool(prompt) and not isinstance(prompt[0], dict)
    schema = {k: v for k, v in spec.items() if k != "x-guidance"}
    if kind == "ollama":
        if tokens:
            raise ValueError("an Ollama server takes chat messages, not token ids")
        return "/api/chat", {"model": model, "messages": list(prompt), "stream": False, "format": schema,
                             "options": {"temperature": 0, "seed": 0, "num_predict": max_tokens}}
    if kind == "openai" and tokens:
        raise ValueError("a generic OpenAI-compatible server takes chat messages, not token ids")
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "temperature": 0, "seed": 0}
    if tokens:
        body["prompt"] = list(prompt)
        if logprobs:
            body["n_probs" if kind == "llama-cpp" else "logprobs"] = LOGPROBS
    else:
        body["messages"] = list(prompt)
        if logprobs:
            body.update(logprobs=True, top_logprobs=LOGPROBS)
    if kind == "vllm":
        body["structured_outputs"] = {"json": spec}
        body["vllm_xargs"] = {GUARD_ARG: True}  # read by the guard where the server loaded it, else ignored
    elif tokens and kind == "sglang":
        body["json_schema"] = json.dumps(schema)
    elif tokens and kind == "llama-cpp":
        body["json_schema"] = schema
    else:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": spec.get("title", "answer"), "schema": schema,
                                                   "strict": True}}
    return ("/v1/completions" if tokens else "/v1/chat/completions"), body


def reply(data: Any) -> Reply:
    """One row's `Reply` from a server's JSON (an OpenAI completion or chat completion, or
    Ollama's chat reply). Raises KeyError, IndexError, TypeError or ValueError on any other
    shape, or a count that is none (`values.count`); a logprob that is no log-probability is
    kept as NaN (`values.probability`), which no label probability is read from."""
    if "choices" not in data and "message" in data:  # Ollama's /api/chat
        return Reply(_text(data["message"]["content"]), _reason(data.get("done_reason")),
                     count(data.get("eval_count") or 0, "eval_count"))
    choice = data["choices"][0]
    text = choice["text"] if "text" in choice else choice["message"]["content"]
    usage = data.get("usage") or {}
    probs = choice.get("logprobs") or data.get("completion_probabilities") or choice.get("completion_probabilities")
    positions = _positions(probs) if probs else ()
    tokens = usage.get("completion_tokens")
    return Reply(_text(text), _reason(choice.get("finish_reason")),
                 len(positions) if tokens is None else count(tokens, "completion_tokens"), positions)


def _text(text: Any) -> str:
    if text is not None and not isinstance(text, str):
        raise TypeError(f"the answer is a {type(text).__name__}, not text")
    return text or ""


def _reason(reason: Any) -> str | None:
    return reason if isinstance(reason, str) else None


def _positions(probs: Any) -> tuple[Position, ...]:
    """(token text, candidates) per generated token from any of the logprob shapes servers use:
    OpenAI completions (``tokens`` + ``top_logprobs`` dicts), OpenAI chat (``content``: a list of
    tokens with ``top_logprobs`` lists) and llama.cpp's ``completion_probabilities``."""
    if isinstance(probs, dict) and "tokens" in probs:
        tops = probs.get("top_logprobs") or []
        return tuple((str(token), [(str(t), probability(lp, log=True)) for t, lp in (tops[k] or {}).items()]
                      if k < len(tops) else []) for k, token in enumerate(probs["tokens"]))
    items = (probs.get("content") or []) if isinstance(probs, dict) else probs
    found = []
    for item in items:
        tops = item.get("top_logprobs") or item.get("probs") or []
        candidates = [(str(c.get("token", c.get("tok_str", ""))), probability(c["logprob"], log=True)
                       if "logprob" in c else probability(c.get("prob", 0.0), log=False)) for c in tops]
        found.append((str(item.get("token", item.get("content", ""))), candidates))
    return tuple(found)


JSON_WHITESPACE = " \t\n\r"


def compact(positions: Sequence[Position]) -> tuple[Position, ...]:
    """The positions with the whitespace between JSON tokens set aside, as localjudge's own
    grammar writes JSON (compact), so that a label choice is found after ``"verdict":``.

    llama-server's JSON-schema grammar allows a space, or one or two newlines and up to 20 spaces
    or tabs, between JSON tokens (its ``space`` rule), and SmolLM2 takes it: llama.cpp
    0c1e570 answered ``{"verdict": "yes"}``, the label's quote in the token ``' "'``. Whitespace
    inside a JSON string is kept; at a position that starts outside a string, each candidate
    loses its leading whitespace (``' "yes'`` and ``'"yes'`` both choose "yes")."""
    found: list[Position] = []
    inside = escaped = False
    for piece, candidates in positions:
        outside = not inside
        kept = []
        for char in piece:
            if inside:
                escaped, inside = (False, True) if escaped else (char == "\\", char != '"')
            elif char == '"':
                inside = True
            elif char in JSON_WHITESPACE:
                continue
            kept.append(char)
        found.append(("".join(kept), [(text.lstrip(JSON_WHITESPACE), p) for text, p in candidates] if outside
                      else candidates))
    return tuple(found)
