"""A LibSQL file (Mastra's `@mastra/libsql` local storage) through Python's sqlite3: the
`localjudge.mastra_store.interface.Store` of a ``file:`` URL. Text that is not UTF-8 comes back as
that cell's problem (`cells.sqlite_text`), not the query's; a write waits out the live app's
write lock (`busy_seconds` a try, `retries` tries), then says so in one line.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from localjudge.mastra_store.cells import read_row, sqlite_text
from localjudge.mastra_store.interface import LOCK_RETRIES, LOCK_SECONDS, StoreError, insert_sql, json_text, retry_pause

T = TypeVar("T")


class SqliteStore:
    """A LibSQL file through Python's sqlite3 (never created: it must exist)."""

    kind = "sqlite"

    def __init__(self, path: Path, *, busy_seconds: float = LOCK_SECONDS, retries: int = LOCK_RETRIES) -> None:
        self._retries = retries
        try:
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=busy_seconds,
                                       isolation_level=None)
            self._db.text_factory = sqlite_text  # text that is not UTF-8: that cell's problem, not the query's
            self._db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{path} is not a readable SQLite/LibSQL file: {error}") from None

    def columns(self, table: str) -> dict[str, str] | None:
        rows = self._db.execute(f'PRAGMA table_info("{table}")').fetchall()
        return {str(r[1]): str(r[2]).lower() for r in rows} or None

    def unique_key(self, table: str, column: str) -> bool:
        keys = [str(r[1]) for r in self._db.execute(f'PRAGMA table_info("{table}")') if r[5]]
        if keys == [column]:
            return True
        for index in self._db.execute(f'PRAGMA index_list("{table}")').fetchall():  # seq, name, unique, origin, partial
            if index[2] and not index[4]:
                named = [str(r[2]) for r in self._db.execute(f'PRAGMA index_info("{index[1]}")')]
                if named == [column]:
                    return True
        return False

    def fetch(self, sql: str, params: Sequence[Any] = (), json_columns: frozenset[str] = frozenset(),
              *, table: str = "query") -> list[dict]:
        try:
            cursor = self._db.execute(sql, tuple(params))
            names = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"could not read {table}: {error}") from None
        return [read_row(table, dict(zip(names, row, strict=True)), json_columns) for row in rows]

    def insert_new(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str]) -> int:
        if not rows:
            return 0
        return self._locked_write(table, lambda: self._insert(table, rows, json_columns, keep=True))

    def probe_insert(self, table: str, row: Mapping[str, Any], json_columns: frozenset[str]) -> None:
        self._locked_write(table, lambda: self._insert(table, [row], json_columns, keep=False))

    def _locked_write(self, table: str, write: Callable[[], T]) -> T:
        for attempt in range(self._retries):
            try:
                return write()
            except sqlite3.OperationalError as error:
                locked = "locked" in str(error) or "busy" in str(error)
                if locked and attempt < self._retries - 1:
                    time.sleep(retry_pause(attempt))
                    continue
                if locked:
                    raise StoreError(f"could not write to {table}: the store's write lock is held by another "
                                     f"connection (a live Mastra app?): gave up after {self._retries} tries") from None
                raise StoreError(f"could not write to {table}: {error}") from None
            except sqlite3.Error as error:
                raise StoreError(f"could not write to {table}: {error}") from None
        raise AssertionError("unreachable")

    def _insert(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str],
                *, keep: bool) -> int:
        names = list(rows[0])
        sql = insert_sql(table, names, "?")
        written = 0
        self._db.execute("BEGIN IMMEDIATE")  # the write lock up front: all rows or none
        try:
            for row in rows:
                values = [json_text(row[n]) if n in json_columns else row[n] for n in names]
                written += self._db.execute(sql, values).rowcount
            self._db.execute("COMMIT" if keep else "ROLLBACK")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        return written

    def close(self) -> None:
        self._db.close()
