"""`localjudge serve` as a process of its own (the serve tier's server, and
benchmarks/peers/bench_mastra.py's third side). Not part of localjudge."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "smollm2-135m-instruct"
SERVED = "judge"


class ServeProcess(ServerProcess):
    """`localjudge serve` on the default model, in its own process group."""

    def __init__(self, log_path: Path, *flags: str, model: Path = MODEL, python: str = sys.executable) -> None:
        super().__init__("localjudge serve", log_path, poll=0.5)
        self.line = [python, "-m", "localjudge.cli", "serve", "--model", str(model), "--port", str(self.port),
                     "--served-model-name", SERVED, *flags]
