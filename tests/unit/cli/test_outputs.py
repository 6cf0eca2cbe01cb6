"""Issue 34, items 3 and 6: every output a command writes is checked before any model loads, and
one run at a time holds an output (`localjudge.cli.outputs`, `localjudge.evaluation.RunLock`).

Item 3: an ``--out`` that could only fail when the results are written (a suffix nothing writes,
a folder, a path under a file) is refused at the start: no judge is built, no resume log is kept
under a name the corrected command would not find. Item 6: a second run on the same output is
refused with one line naming the first (process id, host), before it loads a model or opens a
log; the ranks of one data-parallel run share the lock; a dead holder's lock is taken over.
The holders here are other processes: POSIX locks never conflict within one process.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from localjudge.cli import bench, model_flags, shared
from localjudge.cli.main import main
from localjudge.cli.outputs import LOCK_NAME, run_name
from localjudge.engines import JudgeSpec
from localjudge.evaluation import RunLock, RunLockedError
from tests.conftest import EXAMPLES, ROOT
from tests.fakes import FakeJudgeFactory

EXAMPLE = EXAMPLES / "example.jsonl"
HOLD = """
import sys
from localjudge.evaluation import RunLock
RunLock(sys.argv[1], sys.argv[2]).acquire()
print("held", flush=True)
sys.stdin.read()
"""


def no_model(*args: object, **kwargs: object) -> None:
    pytest.fail("a model was loaded before the outputs were checked")


@pytest.fixture
def no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_flags, "build_judge", no_model)
    monkeypatch.setattr(JudgeSpec, "load", no_model)


def score(capsys: pytest.CaptureFixture[str], out: Path | str, *more: str) -> tuple[int, str]:
    code = main(["--quiet", "score", "--model", "m", "--scorer", "toxicity", "--data", str(EXAMPLE), "--out", str(out),
                 *more])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("out", "message"), [
    ("res.csv", "--out '{tmp}/res.csv': name a .jsonl or .parquet file (what can be written)"),
    ("folder.jsonl", "--out '{tmp}/folder.jsonl' is a folder: name a file (.jsonl or .parquet)"),
    ("file.txt/res.jsonl", "--out '{tmp}/file.txt/res.jsonl': {tmp}/file.txt is not a folder"),
])
def test_a_bad_out_is_refused_before_the_model_loads(tmp_path: Path, capsys, no_loading, out: str,
                                                     message: str) -> None:
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "file.txt").write_text("x")
    code, err = score(capsys, tmp_path / out)
    assert code == 2 and err == f"localjudge: error: {message.format(tmp=tmp_path)}\n"
    assert not list(tmp_path.glob("*.progress"))  # nothing kept under a name the corrected --out would not find


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_place_is_refused_before_the_model_loads(tmp_path: Path, capsys, no_loading) -> None:
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o555)
    code, err = score(capsys, locked / "sub" / "res.jsonl")
    assert code == 2 and "cannot write in" in err


def test_sweep_and_bench_outputs_are_checked_before_the_model_loads(tmp_path: Path, capsys, no_loading) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    config = tmp_path / "sweep.yaml"
    config.write_text(f"out_dir: {blocker}\nmodels: [{{path: m}}]\nscorers: [toxicity]\n"
                      f"datasets: [{{path: {EXAMPLE}}}]\n")
    assert main(["sweep", str(config)]) == 2
    assert f"out_dir '{blocker}' exists and is not a folder" in capsys.readouterr().err
    argv = ["bench", "--model", "m", "--benchmark", "toxigen", "--limit", "2", "--out-dir", str(blocker)]
    args = main.__globals__["build_parser"]().parse_args(argv)
    with pytest.raises(shared.CliError, match=f"--out-dir '{blocker}' exists and is not a folder"):
        bench.run_bench_command(args)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the run lock of ``tmp_path/out.jsonl`` (as a run of its own)."""
    lock = tmp_path / "out.jsonl.progress" / LOCK_NAME
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(lock), "another-run"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    yield process
    process.kill()
    process.wait()


def test_a_second_run_on_one_out_is_refused_naming_the_first(tmp_path: Path, capsys, no_loading,
                                                             holder: subprocess.Popen[str]) -> None:
    code, err = score(capsys, tmp_path / "out.jsonl")
    assert code == 2 and err.count("\n") == 1
    assert f"--out {tmp_path / 'out.jsonl'} is in use by another run (process {holder.pid} on " \
           f"{platform.node()}, since " in err
    assert [p.name for p in (tmp_path / "out.jsonl.progress").iterdir()] == [LOCK_NAME]  # no log opened


def test_a_dead_holders_lock_does_not_block(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch,
                                            fake_judge: FakeJudgeFactory, holder: subprocess.Popen[str]) -> None:
    """SIGKILLed, the holder leaves its record in the lock file; the next run takes it over."""
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    record = json.loads((tmp_path / "out.jsonl.progress" / LOCK_NAME).read_text())
    assert record["pid"] == holder.pid and record["run"] == "another-run"
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge())
    code, err = score(capsys, tmp_path / "out.jsonl")
    assert code == 0, err
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == len(EXAMPLE.read_text().splitlines())


def test_the_ranks_of_one_run_share_its_lock(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    """A process of the holding run joins it (data-parallel ranks write one output by design);
    any other run is refused while one of the run's processes lives."""
    lock = tmp_path / "out.jsonl.progress" / LOCK_NAME
    with RunLock(lock, "another-run"):
        pass
    with pytest.raises(RunLockedError, match=f"process {holder.pid} on "):
        RunLock(lock, "a-third-run").acquire()


def test_ranks_name_one_run_and_single_runs_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "abc"}.items():
        monkeypatch.setenv(key, value)
    assert run_name(2) == run_name(2) == "ranks@10.0.0.1/29500/abc"
    assert run_name(1) != run_name(1)
