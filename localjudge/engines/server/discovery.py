"""What a server shows about itself at start: its kind and version, the model it serves and its
context length, and how it constrains answers (the grammar backend, free JSON whitespace, the
repetition guard). `ServerJudge` builds its identity from it.

- **Kind and version** from each kind's own page (`PROBES`), or trusted when given.
- **Model and context length** from ``/v1/models``: a model id is shown escaped (`values.printable`)
  and sent as listed; a context length that is none (`values.context_length`: -5, a list, a
  billion tokens) is ignored with a warning, as if not listed.
- **Grammar** (vLLM): vLLM's ``/server_info`` page, served only when the server was started with
  ``VLLM_SERVER_DEV_MODE=1``, gives the structured-output backend and the logits processors (so
  whether localjudge's repetition guard is loaded). Whatever the page says, one small probe
  request (`PROBE_TOKENS` tokens, constrained by localjudge's grammar spec, with logprobs) shows
  whether the server's JSON grammar lets the judge write whitespace between JSON tokens:
  vLLM computes logprobs after the grammar's mask, so a whitespace token among the allowed top
  tokens means it does (a backend that ignores the spec's ``x-guidance`` options). SGLang's
  ``/get_server_info`` names its ``grammar_backend`` (from its documentation; not checked here).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from localjudge.engines.grammar import grammar_spec
from localjudge.engines.server.client import Client, ServerError
from localjudge.engines.server.dialects import GUARD, reply, request
from localjudge.engines.server.values import context_length, printable
from localjudge.judge import ChatPrompt

log = logging.getLogger(__name__)

# How each kind of server shows itself: (kind, page, a key its JSON has, the key holding its version).
PROBES = (("sglang", "/get_server_info", "version", "version"),
          ("llama-cpp", "/props", "default_generation_settings", "build_info"),
          ("ollama", "/api/version", "version", "version"),
          ("vllm", "/version", "version", "version"))
OWN_BACKEND = {"vllm": "guidance", "sglang": "llguidance"}  # llguidance: the in-process engines' grammar engine
PROBE_TOKENS = 8
PROBE_USER = "localjudge-grammar-probe"  # the OpenAI `user` field of the probe request, to tell it apart
PROBE_PROMPT: ChatPrompt = [{"role": "user",
                              "content": 'Is the sky blue? Answer {"verdict": "yes"} or {"verdict": "no"}.'}]


class _Probe(BaseModel):
    verdict: Literal["yes", "no"]


@dataclass(frozen=True)
class Grammar:
    """How a server constrains answers, as far as it shows: `backend` (None: not shown),
    `free_whitespace` (None: not measured) and whether the repetition guard is loaded."""

    backend: str | None = None
    free_whitespace: bool | None = None
    repeat_guard: bool = False

    def suffix(self, kind: str) -> str:
        """What the identity says about it: ``+grammar-<backend>`` for a backend other than
        localjudge's own, ``+json-whitespace`` when the grammar lets whitespace through."""
        backend = f"+grammar-{self.backend}" if self.backend and self.backend != OWN_BACKEND.get(kind) else ""
        return backend + ("+json-whitespace" if self.free_whitespace else "")


def kind_of(client: Client, kind: str | None) -> tuple[str, str, dict[str, Any]]:
    """(kind, version, the page that showed it) of the server; `kind`, when given, is trusted."""
    for name, page, mark, version in PROBES:
        if kind is not None and name != kind:
            continue
        found = client.probe(page)
        if isinstance(found, dict) and mark in found:
            return name, printable(str(found.get(version) or ""), 64), found
        if kind is not None:
            return kind, "", {}
    return kind or "openai", "", {}


def served_model(client: Client, name: str | None) -> tuple[str, int | None]:
    """The model to request and its context length, from the server's ``/v1/models``."""
    try:
        found = client.get("/v1/models")
    except ServerError as error:
        if error.status != 404:
            raise
        found = {}
    listed = (found.get("data") if isinstance(found, dict) else None) or []
    entries = [m for m in listed if isinstance(m, dict) and isinstance(m.get("id"), str)] if isinstance(listed, list) \
        else []
    names = [m["id"] for m in entries]
    shown = ", ".join(printable(n, 80) for n in names[:20]) + (", ..." if len(names) > 20 else "")
    if name is None:
        if len(names) != 1:
            raise ValueError(f"the server at {client.host} lists {len(names)} models "
                             f"({shown or 'none'}): choose one with served_model")
        name = names[0]
    elif names and name not in names:
        raise ValueError(f"the server at {client.host} does not serve {printable(name)!r}; it lists {shown}")
    value = next((m for m in entries if m["id"] == name), {}).get("max_model_len")
    return name, known_length(client, value, "max_model_len") if value is not None else None


def known_length(client: Client, value: Any, key: str) -> int | None:
    """A context length a server lists under `key`, or None, with a warning, when it is none."""
    length = context_length(value)
    if length is None:
        log.warning("the server at %s lists %s %s, which is no context length: ignored (prompts are not checked "
                    "against the context window before they are sent)", client.host, key, printable(repr(value), 60))
    return length


def grammar_of(client: Client, kind: str, model: str, props: dict[str, Any],
               prompt: list[int] | ChatPrompt) -> Grammar:
    """What the server shows of its grammar setup (see the module's docstring). `prompt` is
    `PROBE_PROMPT` as this judge sends prompts (token ids or chat messages)."""
    if kind == "sglang":
        backend = props.get("grammar_backend")
        return Grammar(backend=printable(str(backend), 64) if backend else None)
    if kind != "vllm":
        return Grammar()
    config = _vllm_config(client)
    outputs = _dict(config.get("structured_outputs_config"))
    processors = _dict(config.get("model_config")).get("logits_processors")
    processors = processors if isinstance(processors, list) else []
    grammar = Grammar(backend=printable(str(outputs["backend"]), 64) if outputs.get("backend") else None,
                      free_whitespace=_free_whitespace(client, kind, model, prompt),
                      repeat_guard=any(GUARD in str(p) or str(p).endswith("RepeatGuard") for p in processors))
    if grammar.free_whitespace:
        log.warning("the server at %s lets the judge write whitespace between JSON tokens (its grammar backend "
                    "ignores localjudge's x-guidance options): a small judge can loop on it until the token "
                    "budget ends. Start vLLM with --structured-outputs-config '{\"backend\": \"guidance\"}' "
                    "(docs/servers.md)", client.host)
    return grammar


def _dict(found: Any) -> dict[str, Any]:
    return found if isinstance(found, dict) else {}


def _vllm_config(client: Client) -> dict[str, Any]:
    """vLLM's own configuration from ``/server_info`` (dev mode only); {} without it."""
    found = client.probe("/server_info?config_format=json")
    config = found.get("vllm_config") if isinstance(found, dict) else None
    return config if isinstance(config, dict) else {}


def _free_whitespace(client: Client, kind: str, model: str, prompt: list[int] | ChatPrompt) -> bool | None:
    """Whether a constrained answer may hold whitespace between JSON tokens: a whitespace token
    allowed (finite logprob, after the mask) at any position of a probe answer. None: the
    server gave no logprobs (or no answer)."""
    path, body = request(kind, model, prompt, grammar_spec(_Probe), max_tokens=PROBE_TOKENS, logprobs=True)
    try:
        answer = reply(client.post(path, {**body, "user": PROBE_USER}))
    except ServerError as error:
        if error.unreachable:
            raise
        log.warning("the grammar probe of %s failed (%s): its JSON whitespace is not known", client.host, error)
        return None
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, ArithmeticError):
        return None
    tops = [(text, prob) for _, found in answer.positions for text, prob in found]
    if any(not 0.0 <= prob <= 1.0 for _, prob in tops):
        log.warning("the grammar probe of %s gave logprobs that are not log-probabilities: its JSON whitespace is "
                    "not known", client.host)
        return None
    candidates = [text for text, prob in tops if prob > 0.0]
    if not candidates:
        return None
    return any(text and not text.strip() for text in candidates)
