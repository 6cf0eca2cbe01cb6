"""What both stores are: the one small interface over the two databases Mastra's storage lives
in (see `localjudge.mastra_store.connection`), its error, and what their writes share.

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
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

LOCK_RETRIES = 8  # tries of a write that found the table locked: a live Mastra app may hold it a while
LOCK_SECONDS = 5.0  # how long each try waits for the lock


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


def json_text(value: Any) -> str | None:
    """A JSON column's value as JSON text (LibSQL's readers take text as well as JSONB)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
