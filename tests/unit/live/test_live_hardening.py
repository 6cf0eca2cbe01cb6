"""Live scoring against hostile input and a hostile store (issue 34, items 1 and 5).

One run holding a lone surrogate, one record the store refuses, one run that cannot be scored:
each costs only itself, the others are stored and called back, and the counters say so. A store
locked by another process is retried; one that cannot be written is refused when the scorer is
made; a WAL store on read-only media reads back; SIGTERM drains the queue when asked to, and the
app's own SIGTERM handler is never replaced.

Permissions do not bind root, so the read-only checks run as `nobody` in a forked child when the
tests run as root (`as_unprivileged`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import localjudge.live.worker as worker
from localjudge import toxicity_scorer
from localjudge.live.worker import LiveScorer, LiveStoreError, SqliteResults, read_results
from tests.conftest import ROOT
from tests.unit.live.test_live_scorer import SlowJudge

POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="file modes and fork are POSIX")


def runs(bad: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Four runs r0..r3; `bad` replaces r2's fields."""
    made = [{"input": "q", "output": f"A polite answer {i}.", "run_id": f"r{i}"} for i in range(4)]
    made[2].update(bad or {})
    return made


def score_all(store: Any, sent: list[dict[str, Any]]) -> tuple[LiveScorer, list[str]]:
    """Submit `sent` as one batch, close; the scorer and the run ids `on_result` saw."""
    seen: list[str] = []
    live = LiveScorer(toxicity_scorer(SlowJudge()), store=store, max_batch=8, max_wait=1.0,
                      on_result=lambda run, result: seen.append(result.run_id))
    for run in sent:
        assert live.submit(run)
    assert live.close(timeout=60)
    return live, sorted(seen)


@pytest.mark.parametrize("name", ["live.db", "live.jsonl"])
def test_a_lone_surrogate_in_one_run_is_stored_safe_and_costs_nothing(tmp_path: Path, name: str) -> None:
    live, seen = score_all(tmp_path / name, runs({"input": "q \ud83d", "output": "A \ud83d\x00 answer.",
                                                  "run_id": "r2\udc00"}))
    rows = {r["run_id"]: r for r in read_results(tmp_path / name)}
    assert sorted(rows) == seen == ["r0", "r1", "r2\ufffd", "r3"]
    assert (rows["r2\ufffd"]["input"], rows["r2\ufffd"]["output"]) == ("q \ufffd", "A \ufffd answer.")
    assert json.loads(rows["r2\ufffd"]["result"])["run_id"] == "r2\ufffd"
    stats = live.stats
    assert (stats.scored, stats.unscored, stats.failed_writes, stats.queued) == (4, 0, 0, 0)


class PickySink:
    """A store that refuses any write holding run r2's record."""

    def __init__(self) -> None:
        self.stored: list[str] = []

    def write(self, records: Any) -> None:
        if any(r["run_id"] == "r2" for r in records):
            raise ValueError("this record does not fit")
        self.stored += [r["run_id"] for r in records]

    def close(self) -> None:
        pass


def test_a_record_the_store_refuses_costs_only_itself(caplog: pytest.LogCaptureFixture) -> None:
    sink = PickySink()
    live, seen = score_all(sink, runs())
    assert sorted(sink.stored) == ["r0", "r1", "r3"] and seen == ["r0", "r1", "r2", "r3"]
    assert (live.stats.scored, live.stats.failed_writes) == (4, 1)
    assert "refused the result of run r2" in caplog.text


def test_a_run_that_cannot_be_scored_is_recorded_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = worker.score_planned

    def breaks_on_r2(jobs: Any, **kwargs: Any) -> Any:
        if any(run["run_id"] == "r2" for _, runs in jobs for run in runs):
            raise RuntimeError("a bug outside the judge")
        return real(jobs, **kwargs)

    monkeypatch.setattr(worker, "score_planned", breaks_on_r2)
    live, seen = score_all(tmp_path / "live.db", runs())
    rows = {r["run_id"]: r for r in read_results(tmp_path / "live.db")}
    assert sorted(rows) == seen == ["r0", "r1", "r2", "r3"]
    assert rows["r2"]["error_kind"] == "invalid_run" and "a bug outside the judge" in rows["r2"]["error"]
    assert all(rows[r]["score"] == 0.0 for r in ("r0", "r1", "r3"))
    assert (live.stats.scored, live.stats.unscored, live.stats.failed_writes) == (3, 1, 0)


def hold_lock(path: Path, seconds: float) -> threading.Thread:
    """Another connection holds `path`'s write lock for `seconds` (as another process would)."""
    locked = threading.Event()

    def hold() -> None:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN EXCLUSIVE")
        locked.set()
        time.sleep(seconds)
        db.execute("COMMIT")
        db.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert locked.wait(10)
    return thread


def test_a_stores_missing_folder_is_made(tmp_path: Path) -> None:
    score_all(tmp_path / "runs" / "live.db", runs())
    assert len(read_results(tmp_path / "runs" / "live.db")) == 4


def test_a_store_locked_longer_than_sqlite_waits_is_retried(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    store = SqliteResults(path, busy_timeout=0.05)  # SQLite gives up after 0.05 s; the store retries
    holder = hold_lock(path, 1.5)
    live, _ = score_all(store, runs())
    holder.join()
    assert len(read_results(path)) == 4 and live.stats.failed_writes == 0


def test_a_store_locked_past_the_retries_is_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "live.db"
    store = SqliteResults(path, busy_timeout=0.05, retry_for=0.3)
    holder = hold_lock(path, 3.0)
    live, seen = score_all(store, runs())
    holder.join()
    assert read_results(path) == [] and len(seen) == 4  # the callback still gets them
    assert (live.stats.scored, live.stats.failed_writes) == (4, 4)
    assert "4 results not stored" in caplog.text


@pytest.mark.parametrize("where", ["folder.db", "folder.jsonl", "a-file/live.db", "a-file/live.jsonl"])
def test_a_store_that_cannot_be_written_is_refused_when_made(tmp_path: Path, where: str) -> None:
    (tmp_path / "folder.db").mkdir()
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(LiveStoreError, match=f"live store {tmp_path / where} cannot be written: .+") as caught:
        LiveScorer(toxicity_scorer(SlowJudge()), store=tmp_path / where)
    assert "\n" not in str(caught.value)


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user can enter (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="localjudge-live-"))
    folder.chmod(0o755)
    yield folder
    for path in [folder, *folder.iterdir()]:
        path.chmod(0o755)
    shutil.rmtree(folder)


def as_unprivileged(call: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", call())`` or ``("raised", "Type: message")``, under file permissions: run as it is
    for a normal user, in a forked child as `nobody` for root."""
    def outcome() -> tuple[str, Any]:
        try:
            return "ok", call()
        except Exception as error:  # noqa: BLE001 - reported to the test
            return "raised", f"{type(error).__name__}: {error}"

    if os.geteuid() != 0:
        return outcome()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, report, and leave without running any of pytest's exit code
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps(outcome(), default=str).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    kind, value = json.loads(data)
    return kind, value


def made_store(folder: Path) -> Path:
    """A live store with four results, closed by its writer (a WAL database), left read-only."""
    score_all(folder / "live.db", runs())
    (folder / "live.db").chmod(0o444)
    return folder / "live.db"


@POSIX_ONLY
def test_a_read_only_store_file_is_refused_when_made(open_folder: Path) -> None:
    path = made_store(open_folder)
    kind, message = as_unprivileged(lambda: SqliteResults(path) and "accepted")
    assert kind == "raised" and message.startswith(f"LiveStoreError: live store {path} cannot be written")


@POSIX_ONLY
def test_a_wal_store_on_read_only_media_reads_back(open_folder: Path) -> None:
    path = made_store(open_folder)
    open_folder.chmod(0o555)  # as on read-only media: SQLite cannot make the -shm file beside it
    kind, rows = as_unprivileged(lambda: read_results(path))
    assert kind == "ok", rows
    assert sorted(r["run_id"] for r in rows) == ["r0", "r1", "r2", "r3"]


SIGTERM_SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
from tests.unit.live.test_live_scorer import SlowJudge
from localjudge import toxicity_scorer
from localjudge.live.worker import LiveScorer
live = LiveScorer(toxicity_scorer(SlowJudge(delay=0.1)), store={store!r}, max_batch=2, drain_on_sigterm=True)
for i in range(10):
    live.submit({{"input": "q", "output": f"a{{i}}"}})
print("queued", live.stats.queued, flush=True)
time.sleep(120)
"""


@POSIX_ONLY
def test_sigterm_drains_the_queue_when_asked_to(tmp_path: Path) -> None:
    store = tmp_path / "live.db"
    script = SIGTERM_SCRIPT.format(root=str(ROOT), store=str(store))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    queued = int(proc.stdout.readline().split()[1])
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert queued > 0 and len(read_results(store)) == 10


def test_the_apps_sigterm_handler_is_never_replaced(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    live = LiveScorer(toxicity_scorer(SlowJudge()), store=None)  # by default: SIGTERM untouched
    assert signal.getsignal(signal.SIGTERM) is before
    live.close()

    def apps_handler(signum: int, frame: Any) -> None:
        pass

    signal.signal(signal.SIGTERM, apps_handler)
    try:
        live = LiveScorer(toxicity_scorer(SlowJudge()), store=None, drain_on_sigterm=True)
        assert signal.getsignal(signal.SIGTERM) is apps_handler
        live.close()
    finally:
        signal.signal(signal.SIGTERM, before)
