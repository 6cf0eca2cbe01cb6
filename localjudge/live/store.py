"""Where live results go: one record per result, written by the worker a batch at a time.

A `ResultSink` is anything with ``write(records)`` and ``close()``: SQLite (`SqliteResults`,
the default) or JSON lines (`JsonlResults`) by the path's suffix. `read_results` reads either
back, oldest first.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from localjudge.result import ScoreResult


class ResultSink(Protocol):
    """Where live results go: written by the worker thread only, a batch at a time."""

    def write(self, records: Sequence[dict[str, Any]]) -> None: ...

    def close(self) -> None: ...


COLUMNS = ("created_at", "scorer", "run_id", "score", "prob_score", "reason", "error", "error_kind", "input",
           "output", "result")


class SqliteResults:
    """Results in a SQLite table `results` (WAL journal: readers never block the writer). The
    connection is opened by the first `write`, in the worker's thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY, created_at TEXT, scorer TEXT, run_id TEXT, "
            "score REAL, prob_score REAL, reason TEXT, error TEXT, error_kind TEXT, input TEXT, output TEXT, "
            "result TEXT)")
        return db

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        if self._db is None:
            self._db = self._connect()
        with self._db:  # one transaction per batch
            self._db.executemany(
                f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                [tuple(r[c] for c in COLUMNS) for r in records])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class JsonlResults:
    """Results as JSON lines, appended and flushed a batch at a time."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))

    def close(self) -> None:
        pass


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Every live result stored at `path` (SQLite or JSONL), oldest first."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM results ORDER BY id")]


def open_sink(store: str | Path | ResultSink | None) -> ResultSink | None:
    """The sink `store` names: a ``.jsonl`` path, any other path (SQLite), a sink as it is, or None."""
    if store is None or not isinstance(store, (str, Path)):
        return store
    return JsonlResults(store) if Path(store).suffix == ".jsonl" else SqliteResults(store)


def record_of(run: Mapping[str, Any], result: ScoreResult) -> dict[str, Any]:
    """The stored record of one live result: its columns, and the whole result as JSON."""
    return {
        "created_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "scorer": result.scorer, "run_id": result.run_id, "score": result.score, "prob_score": result.prob_score,
        "reason": result.reason, "error": result.error, "error_kind": result.error_kind,
        "input": _text(run.get("input", "")), "output": _text(run.get("output", "")),
        "result": json.dumps(result.to_dict(), ensure_ascii=False, default=str),
    }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
