"""The serve tier: `localjudge serve` on the default model, started by the tier, with real clients
— Mastra's own scorers under Node (the differential tier's pinned @mastra/evals 1.10.2 and
@mastra/core 1.71.0), the `openai` Python client — and a client that leaves mid-stream, a
SIGTERM while answers are in flight. Needs tests/differential/node (scripts/setup_node.sh) for
the Mastra tests; without it they are skipped with a note (an error with -m serve)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.serve_process import SERVED, ServeProcess

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "differential" / "node"
NODE = HARNESS / "node_modules" / ".bin" / "node"
SCRIPTS = ROOT / "tests" / "serve" / "node_scripts"
EXAMPLE = ROOT / "examples" / "example.jsonl"


# Tighter bounds than serve's defaults on what a schema leaves open, and on a text answer: the
# default model repeats an open array's items and a reason's sentences to the bound, and Mastra's
# schemas set none, so these decide how long its judgments take (docs/serve.md, "Bounds").
BOUNDS = ("--max-items", "4", "--max-string", "120", "--text-tokens", "128")


@pytest.fixture(scope="session")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """One server for the tier's client tests (loaded once: ~10 s)."""
    server = ServeProcess(tmp_path_factory.mktemp("serve") / "serve.log", *BOUNDS)
    with server.running(timeout=300):
        yield server


def example_rows(n: int) -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()[:n]]


def need(request: pytest.FixtureRequest, path: Path, why: str) -> None:
    """A client's set-up must be there: without it the test is skipped with `why`, or fails when
    the tier was asked for (`-m serve`)."""
    if path.exists():
        return
    markexpr = request.config.getoption("markexpr", "") or ""
    if "serve" in markexpr and "not serve" not in markexpr:
        pytest.fail(why)
    pytest.skip(why)


def mastra(request: pytest.FixtureRequest, url: str, rows: list[dict[str, Any]], scorers: list[str]) -> list[Any]:
    """Run tests/serve/node_scripts/mastra_judge.mjs: every (row, scorer) job at once, its results."""
    need(request, NODE, "no tests/differential/node (scripts/setup_node.sh sets it up)")
    spec = {"url": url, "model": SERVED, "rows": rows, "scorers": scorers}
    done = subprocess.run([str(NODE), str(SCRIPTS / "mastra_judge.mjs")], input=json.dumps(spec), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout))
