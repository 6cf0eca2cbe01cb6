"""Mastra's storage on PostgreSQL, through psycopg 3 (``pip install 'localjudge-evals[postgres]'``,
imported only when a ``postgresql://`` URL is opened; see `localjudge.mastra_store.connection`).

Every statement waits at most `lock_seconds` for a lock (``SET lock_timeout``): a table another
session locked (``LOCK TABLE mastra_scorers``, a long schema change) is tried again, as a locked
SQLite file is, and after the last try the error names the lock and who holds it, in one line.
JSON cells come back as text and are read by `localjudge.mastra_store.cells`, as SQLite's are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from localjudge.mastra_store.cells import postgres_json, read_row
from localjudge.mastra_store.interface import LOCK_RETRIES, LOCK_SECONDS, StoreError, insert_sql, retry_pause

T = TypeVar("T")


class PostgresStore:
    """PostgreSQL through psycopg 3."""

    kind = "postgres"

    def __init__(self, url: str, *, lock_seconds: float = LOCK_SECONDS, retries: int = LOCK_RETRIES) -> None:
        try:
            import psycopg
            from psycopg.types.json import set_json_loads
        except ImportError:
            raise StoreError("a postgresql:// store needs psycopg: pip install 'localjudge-evals[postgres]'") from None
        self._psycopg = psycopg
        self._retries = retries
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
            self._db.execute(f"SET lock_timeout = {int(lock_seconds * 1000)}")
        except psycopg.Error as error:
            raise StoreError(f"could not connect to the Mastra store: {_line(error)}") from None
        set_json_loads(postgres_json, self._db)  # decoded by cells.read_row, one cell at a time

    def columns(self, table: str) -> dict[str, str] | None:
        rows = self._db.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = %s AND table_schema = current_schema()", (table,)).fetchall()
        return {str(r[0]): str(r[1]).lower() for r in rows} or None

    def unique_key(self, table: str, column: str) -> bool:
        found = self._db.execute(
            "SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
            "WHERE i.indrelid = to_regclass(quote_ident(%s)) AND i.indisunique AND i.indnatts = 1 "
            "AND i.indpred IS NULL AND i.indexprs IS NULL AND a.attname = %s", (table, column)).fetchall()
        return bool(found)

    def fetch(self, sql: str, params: Sequence[Any] = (), json_columns: frozenset[str] = frozenset(),
              *, table: str = "query") -> list[dict]:
        def read() -> tuple[list[str], list[tuple]]:
            cursor = self._db.execute(sql.replace("%", "%%").replace("?", "%s"), tuple(params))
            return [d.name for d in cursor.description or ()], cursor.fetchall()

        names, rows = self._locked(f"could not read {table}", table, read)
        return [read_row(table, dict(zip(names, row, strict=True)), json_columns) for row in rows]

    def insert_new(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str]) -> int:
        if not rows:
            return 0
        return self._locked(f"could not write to {table}", table, lambda: self._insert(table, rows, json_columns))

    def probe_insert(self, table: str, row: Mapping[str, Any], json_columns: frozenset[str]) -> None:
        self._locked(f"could not write to {table}", table,
                     lambda: self._insert(table, [row], json_columns, keep=False))

    def _insert(self, table: str, rows: Sequence[Mapping[str, Any]], json_columns: frozenset[str],
                *, keep: bool = True) -> int:
        from psycopg.types.json import Jsonb

        names = list(rows[0])
        sql = insert_sql(table, names, "%s")
        written = 0
        with self._db.transaction(force_rollback=not keep):  # all rows or none
            for row in rows:
                values = [Jsonb(row[n]) if n in json_columns and row[n] is not None else row[n] for n in names]
                written += self._db.execute(sql, values).rowcount
        return written

    def _locked(self, what: str, table: str, action: Callable[[], T]) -> T:
        """`action`, tried again while a lock it waits for is held elsewhere; one-line errors."""
        for attempt in range(self._retries):
            try:
                return action()
            except self._psycopg.errors.LockNotAvailable:
                if attempt == self._retries - 1:
                    raise StoreError(f"{what}: {self._lock_holders(table)}: gave up after {self._retries} tries "
                                     "(try again once it is released)") from None
                time.sleep(retry_pause(attempt))
            except self._psycopg.Error as error:
                raise StoreError(f"{what}: {_line(error)}") from None
        raise AssertionError("unreachable")

    def _lock_holders(self, table: str) -> str:
        """Who holds a lock on `table` now, as one phrase."""
        try:
            rows = self._db.execute(
                "SELECT mode, pid FROM pg_locks WHERE relation = to_regclass(quote_ident(%s)) AND granted "
                "AND pid <> pg_backend_pid() ORDER BY pid", (table,)).fetchall()
        except self._psycopg.Error:
            rows = []
        if not rows:
            return f"waiting for a lock on {table} timed out (its holder has let go since)"
        held = ", ".join(f"{mode} by session pid {pid}" for mode, pid in rows)
        return f"{table} is locked by another session ({held}: a LOCK TABLE, a schema change or a long transaction)"

    def close(self) -> None:
        self._db.close()


def _line(error: BaseException) -> str:
    """A driver error's first line."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
