"""DeepEval 4.3.1 (.venv-deepeval, scripts/setup_deepeval.sh) judging through `localjudge serve`
with the custom model of examples/deepeval_judge.py, both run as docs/serve.md shows them, word
for word: the server started by the page's command (on its default port, 8321: a second model
load in this tier, ~10 s), which prints the line the page shows, and the example by its command.
FaithfulnessMetric and GEval measure without a parse error."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.conftest import need
from tests.serve.serve_process import ROOT
from tests.server_process import ServerProcess

PYTHON = ROOT / ".venv-deepeval" / "bin" / "python"
# docs/serve.md's commands (tests/unit/test_doc_commands.py checks they are the page's)
SERVE = ".venv/bin/localjudge serve --model models/smollm2-135m-instruct --served-model-name judge"
DEEPEVAL = ".venv-deepeval/bin/python examples/deepeval_judge.py http://127.0.0.1:8321/v1"
SHOWN = "localjudge serve: judge on http://127.0.0.1:8321/v1 (Ctrl-C or SIGTERM: answers what is in flight, then exits)"
PORT = 8321


@pytest.fixture
def documented_serve(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    """`localjudge serve` started by the page's command, from the repository root."""
    need(request, PYTHON, "no .venv-deepeval (scripts/setup_deepeval.sh sets it up)")
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", PORT))
        except OSError:
            pytest.fail(f"port {PORT}, where docs/serve.md's command serves, is taken")
    server = ServerProcess("localjudge serve (docs/serve.md)", tmp_path / "serve.log", port=PORT, poll=0.5)
    server.line = shlex.split(SERVE)
    with server.running(timeout=300):
        yield server


def test_deepevals_metrics_measure_through_serve(documented_serve: ServerProcess, tmp_path: Path) -> None:
    assert SHOWN in documented_serve.log_path.read_text(encoding="utf-8")
    folder = tmp_path / "run"  # DeepEval writes .deepeval/ where it runs: a folder laid out as a checkout
    folder.mkdir()
    for name in (".venv-deepeval", "examples"):
        (folder / name).symlink_to(ROOT / name, target_is_directory=True)
    env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "YES"}
    done = subprocess.run(shlex.split(DEEPEVAL), capture_output=True, text=True, timeout=600, env=env, cwd=folder)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert [line.get("error") for line in lines] == [None, None]
    assert all(isinstance(line["score"], (int, float)) and 0 <= line["score"] <= 1 for line in lines)
