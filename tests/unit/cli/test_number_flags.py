"""Number flags are finite and bounded (issue 57 N7): `--request-timeout inf` (or 1e308) ended in
an OverflowError traceback and `nan` named no flag; each is now one line naming the
flag (before the command runs), and the engine refuses such a timeout given from Python or a sweep
too."""

from __future__ import annotations

import math

import pytest

from localjudge.cli.main import main
from localjudge.engines.server import ServerJudge
from tests.conftest import EXAMPLES

SERVER = ["--engine", "server", "--base-url", "http://127.0.0.1:9/v1"]


@pytest.mark.parametrize(("flags", "flag"), [
    ([*SERVER, "--request-timeout", "inf"], "--request-timeout"),
    ([*SERVER, "--request-timeout", "1e308"], "--request-timeout"),
    ([*SERVER, "--request-timeout", "nan"], "--request-timeout"),
    ([*SERVER, "--request-timeout", "0"], "--request-timeout"),
    (["--model", "models/m", "--engine", "vllm", "--gpu-memory-utilization", "nan"], "--gpu-memory-utilization"),
    (["--model", "models/m", "--engine", "vllm", "--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization"),
    (["--model", "models/m", "--ray", "--gpus-per-judge", "inf"], "--gpus-per-judge"),
    (["--model", "models/m", "--ray", "--cpus-per-judge=-inf"], "--cpus-per-judge"),
])
def test_a_number_flag_that_is_not_finite_or_in_bounds_is_one_line_naming_it(
        capsys: pytest.CaptureFixture[str], flags: list[str], flag: str) -> None:
    code = main(["--quiet", "score", "--scorer", "toxicity", "--data", str(EXAMPLES / "example.jsonl"), *flags])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"localjudge: error: {flag} must be ") and err.count("\n") == 1, err
    assert "(a finite number)" in err and "Traceback" not in err


@pytest.mark.parametrize("timeout", [math.inf, math.nan, 1e308, -1.0])
def test_the_engine_refuses_such_a_timeout_from_python_or_a_sweep(timeout: float) -> None:
    with pytest.raises(ValueError, match="request_timeout must be a finite number of seconds"):
        ServerJudge("http://127.0.0.1:9/v1", request_timeout=timeout)
