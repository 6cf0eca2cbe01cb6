"""What the two server tiers share: a server in its own process group, and the killed score run.

`ServerProcess` starts a server's start line (`line`, with `env`) in its own process group, its
output appended to a log file, waits until ``/v1/models`` answers, and stops (SIGTERM, then
SIGKILL) or kills (SIGKILL: a crash) the whole group. tests/server/vllm_server.py's `VLLMServer`
and tests/llama_server/llama_server.py's `LlamaServer` are one each: they set the start line.

Both tiers run the same score command on the example file (`score_command`: the three scorers in
batches of `BATCH` rows, as a user runs it, a CLI subprocess) and kill the server once the first
batch is stored (`killed_run`), then resume it on a server started again on the same port. Not
part of localjudge.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "example.jsonl"
RUN_IDS = [json.loads(line)["run_id"] for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
SCORERS = ("hallucination", "faithfulness", "toxicity")  # each batch of rows through all three together
BATCH = 4  # two batches of the 8 rows: the kill falls between them
TOKENIZER = ROOT / "models" / "smollm2-135m-instruct"
RUN_TIMEOUT = 900.0  # seconds a score run may take, and the wait for its first batch


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """One server process group; `url` is its OpenAI-compatible base URL.

    A subclass sets `line` (the start line, for `port`) and `env` before `start`; `name` says
    which server an error is about; `poll` is the seconds between two readiness checks."""

    line: list[str]
    env: dict[str, str]

    def __init__(self, name: str, log_path: Path, *, port: int | None = None, poll: float = 1.0) -> None:
        self.name, self.log_path, self.poll = name, log_path, poll
        self.port = port or free_port()
        self.env = dict(os.environ)
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in `_signal`
        self.process = subprocess.Popen(self.line, stdout=self._log, stderr=subprocess.STDOUT, env=self.env,
                                        cwd=ROOT, start_new_session=True)

    def wait_ready(self, timeout: float) -> float:
        """Seconds until ``/v1/models`` answers (a server still loading its model answers an
        error status, which counts as not yet); raises with the log's end if the server exits
        or `timeout` passes first."""
        assert self.process is not None
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited during start-up (code {self.process.returncode}):\n"
                                   f"{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return time.monotonic() - start
            except OSError:
                time.sleep(self.poll)
        raise RuntimeError(f"{self.name} did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the whole group at once (a crash: nothing is shut down)."""
        self._signal(signal.SIGKILL, wait=30)

    @contextmanager
    def running(self, timeout: float) -> Iterator[ServerProcess]:
        """Started and answering within `timeout` seconds; stopped on leaving (a fixture's body)."""
        self.start()
        try:
            self.wait_ready(timeout)
            yield self
        finally:
            self.stop()

    def stop(self) -> None:
        """SIGTERM (the server shuts down), then SIGKILL whatever is left after 30 s."""
        if self._signal(signal.SIGTERM, wait=30):
            self._signal(signal.SIGKILL, wait=30)

    def _signal(self, sig: int, wait: float) -> bool:
        """Send `sig` to the group; True when some of it is still running after `wait` s."""
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
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:  # a child (vLLM's engine core) may outlive the server briefly
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            return True
        if self._log is not None:
            self._log.close()
            self._log = None
        return False


@dataclass(frozen=True)
class Run:
    rows: list[dict[str, Any]]
    stdout: str
    stderr: str
    seconds: float
    stored: frozenset[str] = frozenset()  # run ids in the resume log when the run ended
    out: Path | None = None  # the command's --out


def score_command(url: str, out: Path) -> list[str]:
    """`localjudge score --engine server` on the example file, as both tiers run it."""
    return [sys.executable, "-m", "localjudge.cli", "score", "--engine", "server", "--base-url", url,
            "--tokenizer", str(TOKENIZER), "--scorer", ",".join(SCORERS), "--data", str(EXAMPLE),
            "--batch-size", str(BATCH), "--request-timeout", "300", "--out", str(out)]


def progress_log(out: Path) -> Path:
    return out.with_name(out.name + ".progress") / "rank-0.jsonl"


def start(command: list[str], folder: Path, name: str) -> subprocess.Popen[str]:
    """`command` started, its output to files (a pipe nobody reads while it runs could fill up)."""
    with open(folder / f"{name}.out", "w") as out, open(folder / f"{name}.err", "w") as err:
        return subprocess.Popen(command, stdout=out, stderr=err, text=True, cwd=ROOT)


def finish(process: subprocess.Popen[str], folder: Path, name: str, began: float, out: Path) -> Run:
    """The run `start` began, once it ends: it must end well; its rows, output and stored rows."""
    process.wait(timeout=RUN_TIMEOUT)
    stdout, stderr = ((folder / f"{name}.{kind}").read_text(encoding="utf-8") for kind in ("out", "err"))
    assert process.returncode == 0, stderr[-4000:]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    log = progress_log(out)
    # a stored result's run id is its row number in the example file (the command names no --id-col)
    stored = frozenset(RUN_IDS[int(json.loads(line)["result"]["run_id"])]
                       for line in log.read_text(encoding="utf-8").splitlines()) if log.exists() else frozenset()
    return Run(rows, stdout, stderr, time.monotonic() - began, stored, out)


def killed_run(server: ServerProcess, folder: Path) -> Run:
    """The score run into ``folder/scored.jsonl``, the server SIGKILLed once the first batch's
    results (every scorer's) are in the resume log: the second batch's requests are in flight."""
    out = folder / "scored.jsonl"
    log = progress_log(out)
    began = time.monotonic()
    process = start(score_command(server.url, out), folder, "killed")
    while not (log.exists() and log.stat().st_size):  # the first batch appended
        assert process.poll() is None, f"the run ended before the kill: {(folder / 'killed.err').read_text()[-4000:]}"
        assert time.monotonic() - began < RUN_TIMEOUT, f"the first batch was not written within {RUN_TIMEOUT:.0f} s"
        time.sleep(0.02)
    server.kill()
    print(f"\nserver killed {time.monotonic() - began:.1f} s into the run")
    return finish(process, folder, "killed", began, out)


def resumed_run(server: ServerProcess, folder: Path) -> Run:
    """The same command again into ``folder/scored.jsonl``, on `server` (started again)."""
    began = time.monotonic()
    out = folder / "scored.jsonl"
    return finish(start(score_command(server.url, out), folder, "resumed"), folder, "resumed", began, out)


def outcome(row: dict[str, Any], name: str) -> tuple[Any, Any]:
    return row[f"{name}_score"], row[f"{name}_error"]


def summary(stdout: str) -> dict[str, dict[str, str]]:
    """The run's summary table (its header, then a row per scorer), by scorer, then column."""
    table = [[cell.strip() for cell in line.strip("|").split("|")] for line in stdout.splitlines()
             if line.startswith("| ")]
    return {row[0]: dict(zip(table[0], row, strict=True)) for row in table[1:]}
