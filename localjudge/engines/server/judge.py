"""The server engine: judge with an inference server a team already runs (vLLM, SGLang,
llama.cpp's llama-server, Ollama, LM Studio or any OpenAI-compatible server), over HTTP.

What stays localjudge's own, as on the in-process engines:

- **The prompt.** With the model's tokenizer (`tokenizer`), localjudge renders its own chat
  template (`localjudge.engines.chat_template`) and sends token ids to servers that take them
  (vLLM, SGLang, llama-server), so the server judges the tokens the in-process engines judge.
  Otherwise it sends chat messages and the server applies its own template (the identity says
  ``+server-template``).
- **The constraint**, per request in the server's own dialect (`dialects`): vLLM gets
  localjudge's grammar spec (compact JSON), the others the JSON schema. What a server shows of
  its grammar setup goes into the identity (`discovery`).
- **Label probabilities** from the server's logprobs where it returns them (`grammar.label_mass`).
- **Faults cost rows, not batches**: each row is one request (`concurrency` in flight per
  server, the server batches them); 429, 5xx, resets, broken replies and timeouts are retried
  with back-off (`client`), and a row whose request still fails, or whose reply is too large,
  not JSON or holds a value that is none (`values`), comes back unscored (``judge_failed``)
  with the error.
- **Several servers** (data parallel, one per GPU say): each takes rows from one shared queue,
  `concurrency` at a time. A server that refuses connections stops taking rows: a row it
  refused goes back to the queue once (for another server, or for it once back), the rows it
  held when it died come back unscored with the error, the rest go to the others. Before the
  rows left are given up, and at each later call, it is asked once whether it is back. With
  every server gone, the rows left are unscored. Resume judges them later.

Greedy (temperature 0, seed 0). The identity names the served model, the server's kind,
version and context length and its host (every host, with several), so resume rescores when the
server changes what it reports; a different model served under the same name cannot be seen
from the API.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from localjudge.credentials import check_credential
from localjudge.engines import chat_template
from localjudge.engines.grammar import grammar_spec, literal_fields, read_labels
from localjudge.engines.options import judge_identity
from localjudge.engines.server.client import Client, ServerError, reply_cap, split_url
from localjudge.engines.server.dialects import KINDS, TOKEN_KINDS, Position, compact, reply, request
from localjudge.engines.server.discovery import (
    PROBE_PROMPT,
    Grammar,
    grammar_of,
    kind_of,
    known_length,
    served_model,
)
from localjudge.engines.server.values import printable
from localjudge.judge import TOO_LONG, ChatPrompt, Generation, too_long

log = logging.getLogger(__name__)
MAX_TIMEOUT = 1e6  # seconds (about 11 days): a longer request_timeout overflows the socket layer

Row = tuple[list[Any], dict[str, Any], dict[str, tuple[str, ...]]]  # prompt (ids or messages), spec, label fields


def base_urls(base_url: str | Sequence[str]) -> list[str]:
    """One URL, several separated by commas, or a list of either: the URLs, each once."""
    items = [base_url] if isinstance(base_url, str) else list(base_url) if isinstance(base_url, (list, tuple)) else None
    if items is None or not all(isinstance(item, str) for item in items):
        raise ValueError(f"base_url must be a URL, URLs separated by commas or a list of URLs, got {base_url!r}")
    urls = [url.strip() for item in items for url in item.split(",") if url.strip()]
    if not urls:
        raise ValueError("base_url: give at least one server URL")
    for url in urls:
        split_url(url)  # each a server URL, without credentials (never shown)
    twice = sorted({url for url in urls if urls.count(url) > 1})
    if twice:
        raise ValueError(f"base_url: {', '.join(twice)} given twice")
    return urls


class ServerJudge(chat_template.TemplatePrompts):
    """A judge on one running inference server, or on several serving the same model.

    Args:
        base_url: The server's OpenAI-compatible URL, e.g. ``http://127.0.0.1:8000/v1``; for
            data parallel, several (a list, or URLs separated by commas): rows are spread over
            them. They must serve the same model with the same kind, version and context length.
        served_model: The model name to request. Default: the only one ``/v1/models`` lists.
        api_key_env: The environment variable holding the server's API key (sent as a Bearer
            header; never stored in the identity, logs, errors or results). One key for all.
        concurrency: Requests in flight at once, per server (the server batches them).
        request_timeout: Seconds one attempt of a request may take, whole (connecting, sending,
            reading the reply), before it is retried (then unscored).
        tokenizer: The model's tokenizer folder (or a loaded tokenizer): prompts are then
            rendered by localjudge and sent as token ids. Only for servers that take them.
        server_kind: One of `dialects.KINDS`; default: detected from the server's pages.
        retries: Further attempts of a failed request (429, 5xx, reset, timeout).
        backoff: Seconds before the first retry, doubled each time.
    """

    def __init__(self, base_url: str | Sequence[str], *, served_model: str | None = None,
                 api_key_env: str | None = None, concurrency: int = 8, request_timeout: float = 600.0,
                 tokenizer: str | Path | Any = None, server_kind: str | None = None, retries: int = 3,
                 backoff: float = 0.5) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive number of requests, got {concurrency!r}")
        if (isinstance(request_timeout, bool) or not isinstance(request_timeout, (int, float))
                or not 0 < request_timeout <= MAX_TIMEOUT):  # NaN and inf too (inf overflowed the socket layer)
            raise ValueError(f"request_timeout must be a finite number of seconds above 0 and at most "
                             f"{MAX_TIMEOUT:g}, got {request_timeout!r}")
        if server_kind is not None and server_kind not in KINDS:
            raise ValueError(f"server_kind must be one of {', '.join(KINDS)}, got {server_kind!r}")
        key = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"api_key_env: the environment variable {api_key_env} is not set")
            check_credential(key, f"api_key_env: the environment variable {api_key_env}")
        self.clients = [Client(url, api_key=key, timeout=float(request_timeout), retries=retries, backoff=backoff)
                        for url in base_urls(base_url)]
        self.client = self.clients[0]
        self.concurrency = concurrency
        shown = [self._discover(client, server_kind, served_model) for client in self.clients]
        self.kind, self.version, self.served_model, self.context_window = _agreed(self.clients, shown)
        if tokenizer is not None and self.kind not in TOKEN_KINDS:
            raise ValueError(f"a {self.kind} server takes chat messages, not token ids: leave out the tokenizer "
                             "(the server then renders the prompt with its own template)")
        self.tokenizer = _load_tokenizer(tokenizer) if isinstance(tokenizer, (str, Path)) else tokenizer
        self.system_role = chat_template.system_role_supported(self.tokenizer) if self.tokenizer is not None else True
        probe = self.prompt_ids(PROBE_PROMPT) if self.tokenizer is not None else PROBE_PROMPT
        grammars = [grammar_of(client, self.kind, self.served_model, found[4], probe)
                    for client, found in zip(self.clients, shown, strict=True)]
        self.grammar: Grammar = _agreed_grammar(self.clients, grammars, self.kind)
        self._schemas: dict[type[BaseModel], tuple[dict[str, Any], dict[str, tuple[str, ...]]]] = {}
        self._down: dict[int, str] = {}  # server index -> the error that took it out, until it answers again
        self._lock = threading.Lock()
        self._warned_logprobs = False
        version = f"{self.kind}-{self.version}" if self.version else self.kind
        suffix = (f"+ctx-{self.context_window}" if self.context_window else "") + self.grammar.suffix(self.kind) + \
            ("" if self.tokenizer is not None else "+server-template")
        hosts = "+".join(sorted(client.host for client in self.clients))
        self._identity = judge_identity(f"{printable(self.served_model)}@{hosts}", version,
                                        repeat_guard=self.grammar.repeat_guard, suffix=suffix)
        log.info("judging with %s (%s server at %s)", printable(self.served_model), version, hosts)

    @property
    def identity(self) -> str:
        return self._identity

    @staticmethod
    def _discover(client: Client, kind: str | None, name: str | None) -> tuple[str, str, str, int | None,
                                                                                dict[str, Any]]:
        """(kind, version, served model, context length, the page that showed the kind) of one server."""
        found_kind, version, props = kind_of(client, kind)
        model, context = served_model(client, name)
        if context is None and found_kind == "llama-cpp":
            settings = props.get("default_generation_settings")
            found = (settings.get("n_ctx") if isinstance(settings, dict) else None) or props.get("n_ctx")
            context = known_length(client, found, "n_ctx") if found is not None else None
        return found_kind, version, model, context, props

    def generate(
        self,
        prompts: Sequence[ChatPrompt],
        schemas: Sequence[type[BaseModel]],
        *,
        max_new_tokens: int,
    ) -> list[Generation]:
        """One request per row, `concurrency` in flight per server; a row whose request fails
        is unscored, and so are the rows no server was left to take."""
        if len(prompts) != len(schemas):
            raise ValueError(f"{len(prompts)} prompts but {len(schemas)} schemas")
        rows = [(self.prompt_ids(p) if self.tokenizer is not None else list(p), *self._schema(s))
                for p, s in zip(prompts, schemas, strict=True)]  # tokenized here: tokenizers are not thread-safe
        if not rows:
            return []
        results: list[Generation | None] = [None] * len(rows)
        queue = deque(range(len(rows)))  # handed out under the lock
        put_back: set[int] = set()  # rows whose server refused the connection: sent again once, elsewhere or later

        def work(server: int) -> None:
            while server not in self._down:
                with self._lock:
                    if not queue:
                        return
                    k = queue.popleft()
                found, refused = self._row(server, rows[k], max_new_tokens)
                with self._lock:
                    if refused and k not in put_back:
                        put_back.add(k)
                        queue.appendleft(k)
                        continue
                results[k] = found

        self._recheck()
        while live := [s for s in range(len(self.clients)) if s not in self._down]:
            slots = [s for s in live for _ in range(min(self.concurrency, len(rows)))]
            with ThreadPoolExecutor(max_workers=len(slots)) as pool:
                list(pool.map(work, slots))
            if all(g is not None for g in results):
                break
            self._recheck()  # every server taken out: each asked once more before the rows left are given up
        gone = "; ".join(f"the server at {self.clients[s].host}: {error}" for s, error in sorted(self._down.items()))
        return [g if g is not None else Generation("", error=f"not sent, no server left ({gone})",
                                                   error_kind="judge_failed") for g in results]

    def _recheck(self) -> None:
        """Ask each server taken out by an earlier call, once, whether it answers again."""
        for server in sorted(self._down):
            try:
                self.clients[server].probe("/v1/models")
            except ServerError:
                continue
            log.info("the server at %s answers again", self.clients[server].host)
            del self._down[server]

    def _schema(self, schema: type[BaseModel]) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
        if schema not in self._schemas:
            spec = grammar_spec(schema)
            self._schemas[schema] = (spec, literal_fields(spec))
        return self._schemas[schema]

    def _row(self, server: int, row: Row, max_new_tokens: int) -> tuple[Generation, bool]:
        """The row's generation on `server`, and whether the server refused the connection (it is
        then taken out, and the row can go to another)."""
        prompt, spec, fields = row
        client = self.clients[server]
        if self.tokenizer is not None and self.context_window is not None:
            unfit = too_long(len(prompt), max_new_tokens, self.context_window)
            if unfit is not None:
                return unfit, False
        path, body = request(self.kind, self.served_model, prompt, spec, max_tokens=max_new_tokens,
                             logprobs=bool(fields))
        try:
            answer = reply(client.post(path, body, max_bytes=reply_cap(max_new_tokens)))
            probs = _label_probs(answer.positions, fields) if fields else ()
        except ServerError as error:
            if error.status == 400 and "context length" in str(error).lower():
                return Generation("", error=f"{TOO_LONG} (the server at {client.host}: {error})",
                                  error_kind="too_long"), False
            if error.unreachable:
                with self._lock:
                    if server not in self._down:
                        log.warning("the server at %s refuses connections (%s): it takes no more rows until it "
                                    "answers again", client.host, error)
                    self._down.setdefault(server, str(error))
            return Generation("", error=f"the server at {client.host}: {error}",
                              error_kind="judge_failed"), error.unreachable
        except (KeyError, IndexError, TypeError, AttributeError, ValueError, ArithmeticError) as error:
            said = printable(client.redact(f"{type(error).__name__}: {error}"), 300)
            return Generation("", error=f"the server at {client.host} gave an unexpected reply ({said})",
                              error_kind="judge_failed"), False
        if probs is None:
            probs = ()
            with self._lock:
                if not self._warned_logprobs:
                    log.warning("the server at %s gave logprobs that are not log-probabilities (positive, not "
                                "numbers, or candidates totalling more than 1): those rows' label probabilities are "
                                "left out (prob_score None)", client.host)
                self._warned_logprobs = True
        return Generation(answer.text, finished=answer.finish_reason != "length", new_tokens=answer.new_tokens,
                          label_probs=probs), False


def _agreed(clients: Sequence[Client], shown: Sequence[tuple[Any, ...]]) -> tuple[str, str, str, int | None]:
    """(kind, version, served model, context length), the same on every server, or a ValueError."""
    first = shown[0][:4]
    for client, found in zip(clients[1:], shown[1:], strict=True):
        if found[:4] != first:
            raise ValueError(f"the servers differ: {clients[0].host} serves {_described(first)} but {client.host} "
                             f"serves {_described(found[:4])}; data-parallel servers must serve the same model alike")
    return first


def _described(found: tuple[Any, ...]) -> str:
    kind, version, model, context = found
    return f"{model} ({kind}{'-' + version if version else ''}, context {context or 'not listed'})"


def _agreed_grammar(clients: Sequence[Client], grammars: Sequence[Grammar], kind: str) -> Grammar:
    for client, grammar in zip(clients[1:], grammars[1:], strict=True):
        if grammar != grammars[0]:
            raise ValueError(f"the servers constrain answers differently: {clients[0].host} "
                             f"{_grammar_text(grammars[0], kind)}, {client.host} {_grammar_text(grammar, kind)}")
    return grammars[0]


def _grammar_text(grammar: Grammar, kind: str) -> str:
    return (f"(grammar backend {grammar.backend or 'not shown'}, JSON whitespace "
            f"{ {None: 'not measured', True: 'free', False: 'none'}[grammar.free_whitespace]}, "
            f"repetition guard {'loaded' if grammar.repeat_guard else 'not shown'})")


def _label_probs(positions: Sequence[Position],
                 fields: dict[str, tuple[str, ...]]) -> tuple[dict[str, float], ...] | None:
    """At each label choice in the answer, each label's probability (`grammar.read_labels`) from
    the position's top tokens. After the grammar's mask (vLLM, SGLang) they are the allowed
    tokens; before it (llama-server) `label_mass` keeps those that begin a label, renormalised.
    The whitespace a server's grammar let in between JSON tokens is set aside first (`compact`).
    None when a choice's candidates hold a value that is no probability (`values.probability`):
    no reading of the row is kept, so no choice is read out of its place."""
    reader = read_labels(compact(positions), fields)
    return None if reader.broken else tuple(reader.readings)


def _load_tokenizer(path: str | Path) -> Any:
    """The model's tokenizer from a local folder (never downloaded)."""
    if not Path(path).is_dir():
        raise ValueError(f"tokenizer must be a local folder holding the model's tokenizer, got {str(path)!r}")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
