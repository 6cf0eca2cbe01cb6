"""The server engine: judge with an inference server a team already runs (vLLM, SGLang,
llama.cpp's llama-server, Ollama, LM Studio or any OpenAI-compatible server), over HTTP.

What stays localjudge's own, as on the in-process engines:

- **The prompt.** With the model's tokenizer (`tokenizer`), localjudge renders its own chat
  template (`localjudge.engines.chat_template`) and sends token ids to servers that take them
  (vLLM, SGLang, llama-server), so the server judges the tokens the in-process engines judge.
  Otherwise it sends chat messages and the server applies its own template (the identity says
  ``+server-template``).
- **The constraint**, per request in the server's own dialect (`dialects`): vLLM gets
  localjudge's grammar spec (compact JSON), the others the JSON schema.
- **Label probabilities** from the server's logprobs where it returns them (`grammar.label_mass`).
- **Faults cost rows, not batches**: each row is one request (`concurrency` in flight, the
  server batches them); 429, 5xx, resets and timeouts are retried with back-off (`client`),
  and a row whose request still fails comes back unscored (``judge_failed``) with the error.

Greedy (temperature 0, seed 0). The identity names the served model, the server's kind,
version and context length and its host, so resume rescores when the server changes what it
reports; a different model served under the same name cannot be seen from the API.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from localjudge.engines import chat_template
from localjudge.engines.grammar import (
    TAIL_CHARS,
    grammar_spec,
    label_choices,
    label_deferred,
    label_mass,
    literal_fields,
    triggers,
)
from localjudge.engines.options import judge_identity
from localjudge.engines.server.client import Client, ServerError
from localjudge.engines.server.dialects import KINDS, TOKEN_KINDS, Position, reply, request
from localjudge.judge import TOO_LONG, ChatPrompt, Generation, too_long

log = logging.getLogger(__name__)

# How each kind of server shows itself: (kind, page, a key its JSON has, the key holding its version).
PROBES = (("sglang", "/get_server_info", "version", "version"),
          ("llama-cpp", "/props", "default_generation_settings", "build_info"),
          ("ollama", "/api/version", "version", "version"),
          ("vllm", "/version", "version", "version"))


class ServerJudge(chat_template.TemplatePrompts):
    """A judge on a running inference server.

    Args:
        base_url: The server's OpenAI-compatible URL, e.g. ``http://127.0.0.1:8000/v1``.
        served_model: The model name to request. Default: the only one ``/v1/models`` lists.
        api_key_env: The environment variable holding the server's API key (sent as a Bearer
            header; never stored in the identity, logs, errors or results).
        concurrency: Requests in flight at once (the server batches them).
        request_timeout: Seconds one request may take before it is retried (then unscored).
        tokenizer: The model's tokenizer folder (or a loaded tokenizer): prompts are then
            rendered by localjudge and sent as token ids. Only for servers that take them.
        server_kind: One of `dialects.KINDS`; default: detected from the server's pages.
        retries: Further attempts of a failed request (429, 5xx, reset, timeout).
        backoff: Seconds before the first retry, doubled each time.
    """

    def __init__(self, base_url: str, *, served_model: str | None = None, api_key_env: str | None = None,
                 concurrency: int = 8, request_timeout: float = 600.0, tokenizer: str | Path | Any = None,
                 server_kind: str | None = None, retries: int = 3, backoff: float = 0.5) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive number of requests, got {concurrency!r}")
        if isinstance(request_timeout, bool) or not isinstance(request_timeout, (int, float)) or request_timeout <= 0:
            raise ValueError(f"request_timeout must be a positive number of seconds, got {request_timeout!r}")
        if server_kind is not None and server_kind not in KINDS:
            raise ValueError(f"server_kind must be one of {', '.join(KINDS)}, got {server_kind!r}")
        key = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"api_key_env: the environment variable {api_key_env} is not set")
        self.client = Client(base_url, api_key=key, timeout=float(request_timeout), retries=retries, backoff=backoff)
        self.concurrency = concurrency
        self.kind, self.version, props = self._discover(server_kind)
        self.served_model, context = self._model(served_model)
        if context is None and self.kind == "llama-cpp":
            context = (props.get("default_generation_settings") or {}).get("n_ctx") or props.get("n_ctx")
        self.context_window: int | None = int(context) if context else None
        if tokenizer is not None and self.kind not in TOKEN_KINDS:
            raise ValueError(f"a {self.kind} server takes chat messages, not token ids: leave out the tokenizer "
                             "(the server then renders the prompt with its own template)")
        self.tokenizer = _load_tokenizer(tokenizer) if isinstance(tokenizer, (str, Path)) else tokenizer
        self.system_role = chat_template.system_role_supported(self.tokenizer) if self.tokenizer is not None else True
        self._schemas: dict[type[BaseModel], tuple[dict[str, Any], dict[str, tuple[str, ...]]]] = {}
        version = f"{self.kind}-{self.version}" if self.version else self.kind
        suffix = (f"+ctx-{self.context_window}" if self.context_window else "") + \
            ("" if self.tokenizer is not None else "+server-template")
        self._identity = judge_identity(f"{self.served_model}@{self.client.host}", version, repeat_guard=False,
                                        suffix=suffix)
        log.info("judging with %s (%s server at %s)", self.served_model, version, self.client.host)

    @property
    def identity(self) -> str:
        return self._identity

    def _discover(self, kind: str | None) -> tuple[str, str, dict[str, Any]]:
        """(kind, version, the page that showed it) of the server; `kind`, when given, is trusted."""
        for name, page, mark, version in PROBES:
            if kind is not None and name != kind:
                continue
            found = self.client.probe(page)
            if isinstance(found, dict) and mark in found:
                return name, str(found.get(version) or ""), found
            if kind is not None:
                return kind, "", {}
        return kind or "openai", "", {}

    def _model(self, served_model: str | None) -> tuple[str, int | None]:
        """The model to request and its context length, from the server's ``/v1/models``."""
        try:
            found = self.client.get("/v1/models")
        except ServerError as error:
            if error.status != 404:
                raise
            found = {}
        listed = (found.get("data") if isinstance(found, dict) else None) or []
        names = [str(m.get("id")) for m in listed if isinstance(m, dict)]
        if served_model is None:
            if len(names) != 1:
                raise ValueError(f"the server at {self.client.host} lists {len(names)} models "
                                 f"({', '.join(names) or 'none'}): choose one with served_model")
            served_model = names[0]
        elif names and served_model not in names:
            raise ValueError(f"the server at {self.client.host} does not serve {served_model!r}; it lists "
                             f"{', '.join(names)}")
        entry = next((m for m in listed if isinstance(m, dict) and m.get("id") == served_model), {})
        return served_model, entry.get("max_model_len")

    def generate(
        self,
        prompts: Sequence[ChatPrompt],
        schemas: Sequence[type[BaseModel]],
        *,
        max_new_tokens: int,
    ) -> list[Generation]:
        """One request per row, `concurrency` in flight; a row whose request fails is unscored."""
        if len(prompts) != len(schemas):
            raise ValueError(f"{len(prompts)} prompts but {len(schemas)} schemas")
        rows = [(self.prompt_ids(p) if self.tokenizer is not None else list(p), *self._schema(s))
                for p, s in zip(prompts, schemas, strict=True)]  # tokenized here: tokenizers are not thread-safe
        if not rows:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(rows))) as pool:
            return list(pool.map(lambda row: self._row(row[0], row[1], row[2], max_new_tokens), rows))

    def _schema(self, schema: type[BaseModel]) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
        if schema not in self._schemas:
            spec = grammar_spec(schema)
            self._schemas[schema] = (spec, literal_fields(spec))
        return self._schemas[schema]

    def _row(self, prompt: list[Any], spec: dict[str, Any], fields: dict[str, tuple[str, ...]],
             max_new_tokens: int) -> Generation:
        if self.tokenizer is not None and self.context_window is not None:
            unfit = too_long(len(prompt), max_new_tokens, self.context_window)
            if unfit is not None:
                return unfit
        path, body = request(self.kind, self.served_model, prompt, spec, max_tokens=max_new_tokens,
                             logprobs=bool(fields))
        try:
            answer = reply(self.client.post(path, body))
        except ServerError as error:
            if error.status == 400 and "context length" in str(error).lower():
                return Generation("", error=f"{TOO_LONG} (the server at {self.client.host}: {error})",
                                  error_kind="too_long")
            return Generation("", error=f"the server at {self.client.host}: {error}", error_kind="judge_failed")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
            return Generation("", error=f"the server at {self.client.host} gave an unexpected reply "
                                        f"({type(error).__name__}: {error})", error_kind="judge_failed")
        return Generation(answer.text, finished=answer.finish_reason != "length", new_tokens=answer.new_tokens,
                          label_probs=_label_probs(answer.positions, fields) if fields else ())


def _label_probs(positions: Sequence[Position], fields: dict[str, tuple[str, ...]]) -> tuple[dict[str, float], ...]:
    """At each label choice in the answer, each label's probability (`grammar.label_mass`) from
    the position's top tokens. After the grammar's mask (vLLM, SGLang) they are the allowed
    tokens; before it (llama-server) `label_mass` keeps those that begin a label, renormalised."""
    choices = triggers(fields)
    found, tail = [], ""
    for piece, candidates in positions:
        for labels, quote in label_choices(tail, choices):
            if candidates and not label_deferred(quote, piece):
                probs = label_mass(candidates, labels, quote)
                if probs:
                    found.append(probs)
        tail = (tail + piece)[-TAIL_CHARS:]
    return tuple(found)


def _load_tokenizer(path: str | Path) -> Any:
    """The model's tokenizer from a local folder (never downloaded)."""
    if not Path(path).is_dir():
        raise ValueError(f"tokenizer must be a local folder holding the model's tokenizer, got {str(path)!r}")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
