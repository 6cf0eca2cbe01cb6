"""Left running: a client that leaves mid-stream costs the others nothing, and SIGTERM answers
what is in flight before the server exits."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.serve.serve_process import SERVED, ServeProcess

BODY = {"model": SERVED, "messages": [{"role": "user", "content": "Write a short story about a cat."}],
        "max_tokens": 60}


def post(url: str, body: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
    request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return dict(json.loads(reply.read()))


def test_a_client_gone_mid_stream_costs_the_others_nothing(serve: ServeProcess) -> None:
    body = json.dumps({**BODY, "stream": True}).encode()
    with socket.create_connection(("127.0.0.1", serve.port)) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        assert b"200 OK" in sock.recv(200)  # the stream began; the client leaves now
    reply = post(serve.url, BODY)
    assert reply["choices"][0]["message"]["content"]
    with urllib.request.urlopen(f"http://127.0.0.1:{serve.port}/health", timeout=10) as health:
        assert json.loads(health.read())["status"] == "ok"


def test_sigterm_answers_what_is_in_flight_then_exits(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "serve.log")
    server.start()
    try:
        server.wait_ready(timeout=300)
        answers: list[dict[str, Any]] = []
        threads = [threading.Thread(target=lambda: answers.append(post(server.url, BODY))) for _ in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)  # the requests are in flight
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        for thread in threads:
            thread.join(timeout=300)
        assert len(answers) == 3 and all(a["choices"][0]["message"]["content"] for a in answers)
        # then it exits by the signal it was sent (uvicorn re-raises it once shut down)
        assert server.process.wait(timeout=60) in (0, -signal.SIGTERM)
        assert "Traceback" not in server.log_tail(200)
    finally:
        server.stop()
