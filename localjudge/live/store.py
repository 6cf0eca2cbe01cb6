"""Where live results go: one record per result, written by the worker a batch at a time.

A `ResultSink` is anything with ``write(records)`` and ``close()``: SQLite (`SqliteResults`,
the default) or JSON lines (`JsonlResults`) by the path's suffix. `read_results` reads either
back, oldest first. A store that cannot be written is refused when it is made
(`LiveStoreError`), not found out batch after batch; a SQLite store locked by another process
is retried with back-off; every record is under the storing rule (`localjudge.text_safety`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from localjudge.result import ScoreResult
from localjudge.text_safety import safe_text, safe_value

log = logging.getLogger(__name__)


class LiveStoreError(OSError):
    """The live store cannot be written: refused when it is made (a read-only file or folder, a
    path under a file), or a write failed for the whole store (locked past the retries, disk full)."""


class ResultSink(Protocol):
    """Where live results go: written by the worker thread only, a batch at a time."""

    def write(self, records: Sequence[dict[str, Any]]) -> None: ...

    def close(self) -> None: ...


COLUMNS = ("created_at", "scorer", "run_id", "score", "prob_score", "reason", "error", "error_kind", "input",
           "output", "result")


class SqliteResults:
    """Results in a SQLite table `results` (WAL journal: readers never block the writer).

    Made in the caller's thread, it checks that the file can be written (creating the table) and
    raises `LiveStoreError` if not; the writing connection is opened by the first `write`, in the
    worker's thread. A write that finds the database locked (another process holds it longer
    than `busy_timeout`) is retried with back-off (0.1 s doubling to 5 s) for `retry_for`
    seconds, then given up as a `LiveStoreError`.

    Args:
        path: The database file (created if missing, with its folder).
        busy_timeout: Seconds SQLite itself waits on a lock, each try.
        retry_for: Seconds of tries before a locked write is given up.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 5.0, retry_for: float = 120.0) -> None:
        self.path = Path(path)
        self.busy_timeout, self.retry_for = busy_timeout, retry_for
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            probe = self._connect()
            try:
                probe.execute("BEGIN IMMEDIATE")  # takes the write lock: a read-only file fails here
                probe.rollback()
            finally:
                probe.close()
        except OSError as error:
            raise LiveStoreError(f"live store {self.path} cannot be written: {error}") from None
        except sqlite3.OperationalError as error:
            if not _locked(error):  # locked now may pass: the writes retry
                raise LiveStoreError(f"live store {self.path} cannot be written: {error}") from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY, created_at TEXT, scorer TEXT, "
                "run_id TEXT, score REAL, prob_score REAL, reason TEXT, error TEXT, error_kind TEXT, input TEXT, "
                "output TEXT, result TEXT)")
        except BaseException:
            db.close()
            raise
        return db

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        rows = [tuple(r[c] for c in COLUMNS) for r in records]
        deadline, pause = time.monotonic() + self.retry_for, 0.1
        while True:
            try:
                if self._db is None:
                    self._db = self._connect()
                with self._db:  # one transaction per batch
                    self._db.executemany(
                        f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})", rows)
                return
            except sqlite3.OperationalError as error:
                left = deadline - time.monotonic()
                if not _locked(error) or left <= 0:
                    raise LiveStoreError(f"live store {self.path}: {len(rows)} results not stored: {error}") from None
                log.warning("live store %s is locked by another process (%s); retrying in %.1f s",
                            self.path, error, min(pause, left))
                time.sleep(min(pause, left))
                pause = min(pause * 2, 5.0)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class JsonlResults:
    """Results as JSON lines, appended and flushed a batch at a time. Made in the caller's thread,
    it checks that the file can be appended to (creating it and its folder) and raises
    `LiveStoreError` if not."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8"):
                pass
        except OSError as error:
            raise LiveStoreError(f"live store {self.path} cannot be written: {error}") from None

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)  # before the file opens
        try:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(lines)
        except OSError as error:
            raise LiveStoreError(f"live store {self.path}: {len(records)} results not stored: {error}") from None

    def close(self) -> None:
        pass


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Every live result stored at `path` (SQLite or JSONL), oldest first.

    SQLite is opened read-only; where even that needs a write (a WAL database on read-only media
    or in a read-only folder: its shared-memory file cannot be made), the file is read as it is
    (`immutable`), which is complete once its writer has closed."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no live store at {path}")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    uri = path.resolve().as_uri()
    try:
        return _query(f"{uri}?mode=ro")
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            raise
        return _query(f"{uri}?immutable=1")


def _query(uri: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(uri, uri=True)
    try:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM results ORDER BY id")]
    finally:
        db.close()


def _locked(error: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds the database (busy or locked)."""
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (named in `sqlite3` from Python 3.11)
    return "locked" in str(error) or "busy" in str(error)


def open_sink(store: str | Path | ResultSink | None) -> ResultSink | None:
    """The sink `store` names: a ``.jsonl`` path, any other path (SQLite), a sink as it is, or None."""
    if store is None or not isinstance(store, (str, Path)):
        return store
    return JsonlResults(store) if Path(store).suffix == ".jsonl" else SqliteResults(store)


def record_of(run: Mapping[str, Any], result: ScoreResult) -> dict[str, Any]:
    """The stored record of one live result: its columns, and the whole result as JSON. The run's
    texts are the app's, untrusted: they are stored under the storing rule (`safe_value`)."""
    return {
        "created_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "scorer": result.scorer, "run_id": result.run_id, "score": result.score, "prob_score": result.prob_score,
        "reason": result.reason, "error": result.error, "error_kind": result.error_kind,
        "input": _text(run.get("input", "")), "output": _text(run.get("output", "")),
        "result": safe_text(json.dumps(result.to_dict(), ensure_ascii=False, default=str)),
    }


def _text(value: Any) -> str:
    """A run field as stored text: a string as it is, anything else as JSON (its repr when JSON
    cannot hold it: a cycle, a tuple key...); either way under the storing rule."""
    if isinstance(value, str):
        return safe_text(value)
    try:
        return safe_text(json.dumps(safe_value(value), ensure_ascii=False, default=str))
    except (TypeError, ValueError, RecursionError):
        return safe_text(repr(value))
