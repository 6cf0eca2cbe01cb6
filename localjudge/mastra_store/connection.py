"""One small interface over the two databases Mastra's storage lives in: a LibSQL/SQLite file
(Python's sqlite3, here) and PostgreSQL (psycopg, the optional `postgres` extra, in
`localjudge.mastra_store.postgres`, imported only when a `postgresql://` URL is opened).

Queries are written once with ``?`` placeholders and double-quoted identifiers (Mastra's columns
are camelCase). Reads return plain dicts, every cell read through `localjudge.mastra_store.cells`
(SQLite's JSONB and JSON text alike; PostgreSQL's json too): a cell that cannot be read is None,
its row naming it under `BAD_CELL`, and the query goes on. The only write is `insert_new`: rows
inserted in one transaction, a row whose id is already there left as it is. `probe_insert` makes
the same insert and rolls it back: the pre-flight check that the store takes localjudge's rows.

A write waits for a lock another session holds (a live Mastra app's, a ``LOCK TABLE``) for
`lock_seconds`, then tries again, `LOCK_RETRIES` times in all with growing pauses (about a
minute by default), and ends with one line naming the lock: never a wait without end.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from localjudge.mastra_store.cells import read_row, sqlite_text

LOCK_RETRIES = 8  # tries of a write that found the table locked: a live Mastra app may hold it a while
LOCK_SECONDS = 5.0  # how long each try waits for the lock
T = TypeVar("T")


class StoreError(RuntimeError):
    """The store cannot be opened or read as Mastra's storage: the message says why, in one line."""


class Store(Protocol):
    """An open Mastra storage."""

    kind: str  # "sqlite" or "postgres"

    def columns(self, table: str) -> dict[str, str] | None:
        """The table's columns and their declared types (lower case); None when there is no table."""

    def unique_key(self, table: str, column: str) -> bool:
        """Whether `column` alone is the table's primary key or has a unique index (no WHERE) of its own."""

    def fetch(self, sql: str, params: Sequence[Any] = (), json_columns: frozenset[str] = frozenset(),
              *, table: str = "query") -> list[dict]:
        """Rows of a query as dicts, read by `cells.read_row` (`json_columns` decoded; `table` names
        the rows in a bad cell's reason)."""

    def insert_new(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str]) -> int:
        """Insert rows in one transaction, skipping ids already present; the number inserted."""

    def probe_insert(self, table: str, row: Mapping[str, Any], json_columns: frozenset[str]) -> None:
        """Insert `row` as `insert_new` would, then roll back: raises `StoreError` where a write would fail."""

    def close(self) -> None: ...


def insert_sql(table: str, names: Sequence[str], placeholder: str) -> str:
    """The one insert both stores make: a row whose id is there already is left as it is."""
    quoted = ", ".join(f'"{n}"' for n in names)
    return (f'INSERT INTO "{table}" ({quoted}) VALUES ({", ".join(placeholder for _ in names)}) '
            'ON CONFLICT ("id") DO NOTHING')


def retry_pause(attempt: int) -> float:
    """Seconds to wait before try `attempt + 2` of a locked write: 0.2 s, doubling."""
    return float(0.2 * 2 ** attempt)


def open_store(url: str) -> Store:
    """Open Mastra's storage at `url`: ``file:PATH`` (LibSQL's local file) or ``postgresql://...``.

    Raises:
        StoreError: an unknown URL scheme, a file that does not exist, a server that refuses.
    """
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "file":
        return SqliteStore(_file_path(url))
    if scheme in ("postgres", "postgresql"):
        from localjudge.mastra_store.postgres import PostgresStore

        return PostgresStore(url)
    if scheme in ("libsql", "http", "https", "ws", "wss"):
        raise StoreError(f"{scheme}:// stores (a remote LibSQL/Turso server) are not read: give a local file: URL "
                         "or a postgresql:// URL")
    raise StoreError(f"unknown Mastra store URL {url!r}: give file:PATH (LibSQL) or postgresql://...")


def _file_path(url: str) -> Path:
    """The path of a LibSQL ``file:`` URL: ``file:./mastra.db``, ``file:/abs/mastra.db`` or
    ``file:///abs/mastra.db`` (query parameters dropped)."""
    rest = url[len("file:"):].split("?", 1)[0]
    if rest.startswith("//"):  # file://HOST/PATH: only the local host
        host, _, tail = rest[2:].partition("/")
        if host not in ("", "localhost"):
            raise StoreError(f"{url}: a file: URL on another host ({host}) is not read")
        rest = "/" + tail
    path = Path(rest)
    if not path.is_file():
        raise StoreError(f"no Mastra store at {path}: the file does not exist")
    return path


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
                values = [_json_text(row[n]) if n in json_columns else row[n] for n in names]
                written += self._db.execute(sql, values).rowcount
            self._db.execute("COMMIT" if keep else "ROLLBACK")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        return written

    def close(self) -> None:
        self._db.close()


def _json_text(value: Any) -> str | None:
    """A JSON column's value as JSON text (LibSQL's readers take text as well as JSONB)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@contextmanager
def opened(url: str) -> Iterator[Store]:
    """`open_store` as a context manager: closed at the end."""
    store = open_store(url)
    try:
        yield store
    finally:
        store.close()
