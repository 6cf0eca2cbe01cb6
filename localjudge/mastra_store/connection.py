"""One small interface over the two databases Mastra's storage lives in: a LibSQL/SQLite file
(Python's sqlite3) and PostgreSQL (psycopg, the optional `postgres` extra, imported only here and
only when a `postgresql://` URL is opened).

Queries are written once with ``?`` placeholders and double-quoted identifiers (Mastra's columns
are camelCase). Reads return plain dicts with JSON columns decoded (SQLite's JSONB and JSON text
alike; psycopg decodes PostgreSQL's jsonb itself). The only write is `insert_new`: rows inserted
in one transaction, a row whose id is already there left as it is.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from localjudge.mastra_store.jsonb import read_json_cell

LOCK_RETRIES = 8  # a live Mastra app may hold the SQLite file's write lock: wait, then try again


class StoreError(RuntimeError):
    """The store cannot be opened or read as Mastra's storage: the message says why, in one line."""


class Store(Protocol):
    """An open Mastra storage."""

    kind: str  # "sqlite" or "postgres"

    def columns(self, table: str) -> dict[str, str] | None:
        """The table's columns and their declared types (lower case); None when there is no table."""

    def fetch(self, sql: str, params: Sequence[Any] = (), json_columns: frozenset[str] = frozenset()) -> list[dict]:
        """Rows of a query as dicts, `json_columns` decoded."""

    def insert_new(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str]) -> int:
        """Insert rows in one transaction, skipping ids already present; the number inserted."""

    def close(self) -> None: ...


def open_store(url: str) -> Store:
    """Open Mastra's storage at `url`: ``file:PATH`` (LibSQL's local file) or ``postgresql://...``.

    Raises:
        StoreError: an unknown URL scheme, a file that does not exist, a server that refuses.
    """
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "file":
        return SqliteStore(_file_path(url))
    if scheme in ("postgres", "postgresql"):
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

    def __init__(self, path: Path, *, busy_seconds: float = 5.0) -> None:
        try:
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=busy_seconds,
                                       isolation_level=None)
            self._db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{path} is not a readable SQLite/LibSQL file: {error}") from None

    def columns(self, table: str) -> dict[str, str] | None:
        rows = self._db.execute(f'PRAGMA table_info("{table}")').fetchall()
        return {str(r[1]): str(r[2]).lower() for r in rows} or None

    def fetch(self, sql: str, params: Sequence[Any] = (), json_columns: frozenset[str] = frozenset()) -> list[dict]:
        cursor = self._db.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [{n: read_json_cell(v) if n in json_columns else v for n, v in zip(names, row, strict=True)}
                for row in cursor.fetchall()]

    def insert_new(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str]) -> int:
        if not rows:
            return 0
        for attempt in range(LOCK_RETRIES):
            try:
                return self._insert(table, rows, json_columns)
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error) or attempt == LOCK_RETRIES - 1:
                    raise StoreError(f"could not write to {table}: {error}") from None
                time.sleep(0.2 * 2 ** attempt)
        raise AssertionError("unreachable")

    def _insert(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str]) -> int:
        names = list(rows[0])
        sql = (f'INSERT INTO "{table}" ({", ".join(f"{chr(34)}{n}{chr(34)}" for n in names)}) '
               f'VALUES ({", ".join("?" for _ in names)}) ON CONFLICT("id") DO NOTHING')
        written = 0
        self._db.execute("BEGIN IMMEDIATE")  # the write lock up front: all rows or none
        try:
            for row in rows:
                values = [_json_text(row[n]) if n in json_columns else row[n] for n in names]
                written += self._db.execute(sql, values).rowcount
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return written

    def close(self) -> None:
        self._db.close()


class PostgresStore:
    """PostgreSQL through psycopg 3 (``pip install 'localjudge-evals[postgres]'``)."""

    kind = "postgres"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise StoreError("a postgresql:// store needs psycopg: pip install 'localjudge-evals[postgres]'") from None
        self._psycopg = psycopg
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as error:
            raise StoreError(f"could not connect to the Mastra store: {str(error).strip().splitlines()[0]}") from None

    def columns(self, table: str) -> dict[str, str] | None:
        rows = self._db.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = %s AND table_schema = current_schema()", (table,)).fetchall()
        return {str(r[0]): str(r[1]).lower() for r in rows} or None

    def fetch(self, sql: str, params: Sequence[Any] = (), json_columns: frozenset[str] = frozenset()) -> list[dict]:
        cursor = self._db.execute(sql.replace("%", "%%").replace("?", "%s"), tuple(params))
        names = [d.name for d in cursor.description or ()]
        return [{n: read_json_cell(v) if n in json_columns else v for n, v in zip(names, row, strict=True)}
                for row in cursor.fetchall()]

    def insert_new(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str]) -> int:
        if not rows:
            return 0
        from psycopg.types.json import Jsonb

        names = list(rows[0])
        sql = (f'INSERT INTO "{table}" ({", ".join(f"{chr(34)}{n}{chr(34)}" for n in names)}) '
               f'VALUES ({", ".join("%s" for _ in names)}) ON CONFLICT ("id") DO NOTHING')
        written = 0
        try:
            with self._db.transaction():  # all rows or none
                for row in rows:
                    values = [Jsonb(row[n]) if n in json_columns and row[n] is not None else row[n] for n in names]
                    written += self._db.execute(sql, values).rowcount
        except self._psycopg.Error as error:
            raise StoreError(f"could not write to {table}: {str(error).strip().splitlines()[0]}") from None
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
