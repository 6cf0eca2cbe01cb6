"""vLLM's OpenAI-compatible server from .venv-vllm, started as the in-process vLLM engine is built.

`command` is the start line: the options `VLLMJudge.load` gives its engine (the guidance grammar
backend, the repetition guard as a logits processor, seed 0, prefix caching, 20 logprobs, the
checkpoint's dtype) on 127.0.0.1. `VLLMServer` (a `tests.server_process.ServerProcess`) starts it in
its own process group (the API server and its engine-core process), waits for ``/v1/models`` and
stops or kills the whole group.
Used by the server tier (tests/server), benchmarks/bench_server.py and scripts/server_smoke.sh
(``python -m tests.server.vllm_server MODEL_DIR PORT`` runs this start line in place of itself);
docs/servers.md shows the same command, and tests/unit/test_docs.py checks that it does. Not part
of localjudge.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
SERVED = "smollm2"  # the name the default model is served under
CONTEXT = 2048  # max_model_len, as the vLLM tier's engine (tests/vllm)
# The KV cache, bounded: unbounded, vLLM's CPU build reserves ~92% of the machine's memory for it
# (20 GiB for the 135M model here) and refuses to start where less is free. 1 GiB ("1G": vLLM reads
# K, M, G as powers of 1,024) is ample for 2,048-token rows of a 135M model; the in-process engine
# takes 4 GiB.
KV_CACHE = "1G"
GUARD = "localjudge.engines.vllm.guard:RepeatGuard"  # = localjudge.engines.vllm.judge.GUARD (no vLLM import here)
# VLLM_USE_AOT_COMPILE=0: vLLM 0.32's CPU build cannot load its own AOT-compiled model back
# ("'function' object has no attribute 'finalize_loading'") and compiles again at every start
# (~170 s here); its older compile cache loads (a warm start ~60 s, a cold one ~150 s).
# VLLM_SERVER_DEV_MODE=1: the /server_info page the server engine reads the grammar setup from.
ENV = {"HF_HUB_OFFLINE": "1", "VLLM_SERVER_DEV_MODE": "1", "VLLM_USE_AOT_COMPILE": "0"}


def environment(dev_mode: bool = True) -> dict[str, str]:
    """The variables the server starts with (`ENV`, dev mode on or off), over this process's."""
    # torch.compile must run: without TORCHDYNAMO_DISABLE (tests/conftest.py sets it)
    env = {k: v for k, v in os.environ.items() if k != "TORCHDYNAMO_DISABLE"}
    return {**env, **ENV, "VLLM_SERVER_DEV_MODE": "1" if dev_mode else "0"}


def command(model_dir: Path, port: int, *, eager: bool = False, backend: str = "guidance",
            guard: bool = True, served: str = SERVED) -> list[str]:
    """The server's start line, configured as `VLLMJudge.load` configures its engine; the model
    is served as `served`."""
    line = [str(PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
            "--served-model-name", served, "--host", "127.0.0.1", "--port", str(port),
            "--max-model-len", str(CONTEXT), "--seed", "0", "--dtype", "auto", "--enable-prefix-caching",
            "--max-logprobs", "20", "--kv-cache-memory-bytes", KV_CACHE,
            "--structured-outputs-config", json.dumps({"backend": backend})]
    if guard:
        line += ["--logits-processors", GUARD]
    if eager:
        line.append("--enforce-eager")
    return line


class VLLMServer(ServerProcess):
    """One vLLM server process group (the API server and its engine-core process); `url` is its
    OpenAI-compatible base URL.

    `dev_mode` turns on vLLM's ``/server_info`` page (``VLLM_SERVER_DEV_MODE=1``), from which
    the server engine reads the grammar backend and the logits processors."""

    def __init__(self, model_dir: Path, log_path: Path, *, port: int | None = None, eager: bool = False,
                 dev_mode: bool = True, **options: Any) -> None:
        super().__init__("the vLLM server", log_path, port=port, poll=1.0)
        self.line = command(model_dir, self.port, eager=eager, **options)
        self.env, self.dev_mode = environment(dev_mode), dev_mode


if __name__ == "__main__":  # scripts/server_smoke.sh: this process becomes the server
    import sys

    if len(sys.argv) != 3:
        sys.exit("usage: python -m tests.server.vllm_server MODEL_DIR PORT")
    line = command(Path(sys.argv[1]), int(sys.argv[2]))
    os.execve(line[0], line, environment())
