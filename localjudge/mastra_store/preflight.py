"""What is checked in a Mastra store before any run is read or any model loads: everything that
would otherwise fail only at the end, once every run is judged.

- each table needed is there with the columns localjudge reads (`schema.check_tables`);
- `mastra_scorers` has a primary key or unique index on ``id`` alone (each row is written once by
  its id: ``ON CONFLICT ("id") DO NOTHING``);
- `mastra_scorers` takes a row: one probe row inserted the way the scores will be, then rolled
  back (a read-only file, a read-only transaction or replica, a role without INSERT, a table
  locked by another session past its retries all end here, in one line).
"""

from __future__ import annotations

from typing import Any

from localjudge.mastra_store.connection import Store, StoreError
from localjudge.mastra_store.schema import JSON_COLUMNS, NEEDED, SCORES, check_tables

PROBE_ID = "localjudge:pre-flight-probe"  # never committed
PROBE_VALUES: dict[str, Any] = {"text": PROBE_ID, "json": {"localjudge": "probe"}, "number": 0.0,
                                "time": "2000-01-01T00:00:00.000Z"}


def check_store(store: Store, tables: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Each table's columns (as `check_tables`), after checking that the score table can be written.

    Raises:
        StoreError: the first check that fails, in one line.
    """
    columns = check_tables(store, tables)
    if SCORES in columns:
        if not store.unique_key(SCORES, "id"):
            raise StoreError(f"{SCORES} has no primary key or unique index on id alone: localjudge writes each "
                             "score row once by its id (ON CONFLICT), so this table is not Mastra's as localjudge "
                             "knows it")
        store.probe_insert(SCORES, probe_row(), JSON_COLUMNS[SCORES])
    return columns


def probe_row() -> dict[str, Any]:
    """A score row holding a value in every column localjudge writes (rolled back, never kept)."""
    return {name: PROBE_VALUES[kind] for name, kind in NEEDED[SCORES].items()}
