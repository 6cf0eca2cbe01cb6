"""DeepEval 4.3.1 (.venv-deepeval, scripts/setup_deepeval.sh) judging through `localjudge serve`
with the custom model of examples/deepeval_judge.py, run as the docs show it: FaithfulnessMetric
and GEval measure without a parse error."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.serve.conftest import need
from tests.serve.serve_process import ROOT, ServeProcess

PYTHON = ROOT / ".venv-deepeval" / "bin" / "python"


def test_deepevals_metrics_measure_through_serve(request: pytest.FixtureRequest, serve: ServeProcess,
                                                 tmp_path: object) -> None:
    need(request, PYTHON, "no .venv-deepeval (scripts/setup_deepeval.sh sets it up)")
    env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "YES"}
    done = subprocess.run([str(PYTHON), str(ROOT / "examples" / "deepeval_judge.py"), serve.url], capture_output=True,
                          text=True, timeout=600, env=env, cwd=str(tmp_path))  # DeepEval writes .deepeval/ here
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert [line.get("error") for line in lines] == [None, None]
    assert all(isinstance(line["score"], (int, float)) and 0 <= line["score"] <= 1 for line in lines)
