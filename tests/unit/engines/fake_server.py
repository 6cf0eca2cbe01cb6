"""An in-process fake OpenAI-compatible server (127.0.0.1, a free port) for the server engine's tests.

It speaks each dialect as `localjudge.engines.server.dialects` encodes it: vLLM's as checked
against vLLM 0.32's server, the others as written from their documentation and source. It
answers one fixed answer (`ANSWER`) or, with `answer = schema_answer`, a minimal valid instance
of the schema each request carries, so whole scorers run on it. No model is loaded.

The vLLM kind's grammar probe (`localjudge.engines.server.discovery`) is answered by `probe`
(default: no logprobs, so nothing is measured) and left out of `posts`; `server_info` is vLLM's
dev-mode ``/server_info`` page (None: not served, as without ``VLLM_SERVER_DEV_MODE``).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus

from localjudge.engines.server.discovery import PROBE_USER
from localjudge.scoring.versioning import example_of

if TYPE_CHECKING:
    from localjudge.engines.server import ServerJudge

ANSWER = '{"verdict":"yes"}'
# Each kind's page that shows what it is (the engine's `PROBES`), and what the page holds.
PAGES = {"vllm": ("/version", {"version": "0.32.0"}),
         "sglang": ("/get_server_info", {"version": "0.5.2", "tp_size": 1}),
         "llama-cpp": ("/props", {"default_generation_settings": {"n_ctx": 2048}, "build_info": "b6100-abc"}),
         "ollama": ("/api/version", {"version": "0.12.3"}),
         "openai": (None, None)}


def ok_reply(path: str, body: dict[str, Any], text: str = ANSWER, finish: str = "stop",
             logprobs: Any = None) -> dict[str, Any]:
    """A successful reply in the shape of the endpoint asked."""
    if path == "/api/chat":
        return {"message": {"role": "assistant", "content": text}, "done_reason": finish, "eval_count": 5}
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish, "logprobs": logprobs}
    if path == "/v1/completions":
        choice["text"] = text
    else:
        choice["message"] = {"role": "assistant", "content": text}
    return {"choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


def sent_schema(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a request constrains its answer to, in whichever dialect's field it is."""
    if "structured_outputs" in body:
        return dict(body["structured_outputs"]["json"])
    if "format" in body:
        return dict(body["format"])
    if "json_schema" in body:
        found = body["json_schema"]
        return dict(json.loads(found) if isinstance(found, str) else found)
    return dict(body["response_format"]["json_schema"]["schema"])


def schema_answer(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """A reply holding a minimal valid instance of the request's schema (compact JSON, as the
    constrained servers write it): first label, one item per list."""
    schema = sent_schema(body)
    text = json.dumps(example_of(schema, schema.get("$defs", {})), separators=(",", ":"))
    return ok_reply(path, body, text=text)


class FakeServer(ThreadingHTTPServer):
    """Answers the pages of one server kind; records every request; per-row actions by the
    prompt's last message (else `default`): "ok", an HTTP status, "reset" (connection closed
    unanswered), "sleep" (answers after the client's timeout) or one of the hostile replies
    `Handler.hostile` writes ("cut", "trickle", "trickle-headers", "huge", "huge-chunked",
    ("redirect", status, location), ("echo", status, "json" | "text"), ("raw", bytes)).
    `pages` overrides a GET page with an action."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.kind = "vllm"
        self.models: list[dict[str, Any]] = [{"id": "judge-model", "max_model_len": 4096}]
        self.requests: list[tuple[str, str, dict[str, Any], dict[str, str]]] = []
        self.actions: dict[str, deque[Any]] = {}
        self.default: Any = "ok"
        self.pages: dict[str, Any] = {}
        self.answer: Callable[[str, dict[str, Any]], dict[str, Any]] = ok_reply
        self.probe: Callable[[str, dict[str, Any]], Any] = ok_reply
        self.server_info: dict[str, Any] | None = None
        self.delay = 0.0
        self.lock = threading.Lock()
        self.in_flight = self.peak = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def posts(self) -> list[tuple[str, dict[str, Any]]]:
        """The rows' requests (the grammar probe left out)."""
        return [(path, body) for method, path, body, _ in self.requests
                if method == "POST" and body.get("user") != PROBE_USER]

    def probes(self) -> list[dict[str, Any]]:
        return [body for method, _, body, _ in self.requests if method == "POST" and body.get("user") == PROBE_USER]

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client gone after a timeout
        pass


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, *args: Any) -> None:
        pass

    counted = False  # this request is in the server's in-flight count

    def _done(self) -> None:
        """Leave the in-flight count: before the reply is written, since a client that has read it
        may send its next request before this thread runs another line."""
        if self.counted:
            with self.server.lock:
                self.server.in_flight -= 1
            self.counted = False

    def _send(self, status: int, data: Any, retry_after: str | None = None) -> None:
        raw = json.dumps(data).encode()
        self._done()
        self.send_response(status)
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        srv = self.server
        with srv.lock:
            srv.requests.append(("GET", self.path, {}, dict(self.headers)))
        page, data = PAGES[srv.kind]
        if self.path in srv.pages:
            self._act(srv.pages[self.path], lambda: {})
        elif self.path == "/v1/models":
            self._send(200, {"object": "list", "data": srv.models})
        elif self.path == page:
            self._send(200, data)
        elif self.path.startswith("/server_info") and srv.kind == "vllm" and srv.server_info is not None:
            self._send(200, srv.server_info)
        else:
            self._send(404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with srv.lock:
            srv.requests.append(("POST", self.path, body, dict(self.headers)))
            srv.in_flight += 1
            srv.peak = max(srv.peak, srv.in_flight)
            self.counted = True
            key = body["messages"][-1]["content"] if "messages" in body else ""
            queue = srv.actions.get(key)
            action = queue.popleft() if queue else srv.default
        try:
            if body.get("user") == PROBE_USER:  # (status, reply) or a reply
                found = srv.probe(self.path, body)
                self._send(*(found if isinstance(found, tuple) else (200, found)))
                return
            time.sleep(srv.delay)
            self._act(action, lambda: srv.answer(self.path, body))
        finally:
            self._done()

    def _act(self, action: Any, answer: Callable[[], Any]) -> None:
        if action == "reset":
            self.close_connection = True
        elif action == "sleep":
            time.sleep(1.0)
            self._send(200, answer())
        elif isinstance(action, int):
            self._send(action, {"error": {"message": f"fake error {action}", "code": action}})
        elif isinstance(action, tuple) and isinstance(action[0], int):
            self._send(action[0], {"error": {"message": action[1]}}, *action[2:])
        elif action == "ok":
            self._send(200, answer())
        else:
            try:
                self.hostile(action, json.dumps(answer()).encode())
            except (BrokenPipeError, ConnectionResetError):  # the client gave up: as it should
                pass
            self.close_connection = True

    def hostile(self, action: Any, good: bytes) -> None:
        """A reply no honest server writes. `good` is the honest reply's body."""
        self._done()
        name = action[0] if isinstance(action, tuple) else action
        if name == "redirect":  # ("redirect", status, location)
            self.send_response(action[1])
            self.send_header("Location", action[2])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif name == "echo":  # ("echo", status, "json" | "text"): the request's key in the reply
            said = f"invalid key: {self.headers.get('Authorization')} (you sent {self.headers.get('Authorization')})"
            raw = json.dumps({"error": {"message": said}}).encode() if action[2] == "json" else said.encode()
            self.send_response(action[1])
            self.send_header("Retry-After", "0.01")
            self.send_header("Content-Type", "application/json" if action[2] == "json" else "text/plain")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        elif name == "echo-forms":  # ("echo-forms", status): the key raw, escaped, URL-encoded, in a URL
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            said = (f"bad key {key} / {key!r} / {key.encode()!r} / {json.dumps(key)} / {quote(key, safe='')} / "
                    f"{quote_plus(key)} / see http://u:{quote(key, safe='')}@h/?token={quote(key, safe='')}&q=1")
            raw = json.dumps({"error": {"message": said}}).encode()
            self.send_response(action[1])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        elif name == "raw":  # ("raw", bytes): a 200 with this body, as the server wrote it
            self._headers(len(action[1]))
            self.wfile.write(action[1])
        elif name == "cut":  # the reply ends before its Content-Length: http.client's IncompleteRead
            self._headers(len(good) + 100)
            self.wfile.write(good[: len(good) // 2])
        elif name == "trickle":  # a valid reply, one byte every 0.05 s: each socket read is quick
            self._headers(len(good) + 400)
            for byte in good + b" " * 400:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)
        elif name == "trickle-headers":  # a header that never ends, a byte every 0.05 s (at most 30 s)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            for _ in range(600):
                self.wfile.write(b"a")
                self.wfile.flush()
                time.sleep(0.05)
        elif name in ("huge", "huge-chunked"):  # 100 MB of a JSON string, with or without a length
            size, piece = 100 << 20, b"a" * (1 << 16)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if name == "huge":
                self.send_header("Content-Length", str(size + 2))
            else:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b'2\r\n"a\r\n' if name == "huge-chunked" else b'"')
            for _ in range(size // len(piece)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if name == "huge-chunked" else piece)
        else:
            raise ValueError(f"unknown action {action!r}")

    def _headers(self, length: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()


@contextmanager
def serving(port: int = 0) -> Iterator[FakeServer]:
    """A fake server running on its own thread until the block ends (on `port`, else a free one)."""
    srv = FakeServer(port)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def judge_on(srv: FakeServer, **options: Any) -> ServerJudge:
    """A server engine on `srv`, retrying without waiting."""
    from localjudge.engines.server import ServerJudge

    return ServerJudge(srv.url, **{"backoff": 0.0, **options})


class CharTokenizer:
    """Stand-in for a model's tokenizer: a plain chat template, one token per character."""

    def apply_chat_template(self, chat: list[dict[str, str]], **_: Any) -> str:
        return "".join(f"<{m['role']}>{m['content']}" for m in chat) + "<assistant>"

    def __call__(self, text: str, add_special_tokens: bool = False) -> SimpleNamespace:
        return SimpleNamespace(input_ids=[ord(c) for c in text])
