"""The columns localjudge needs in Mastra's tables, checked against the database's own schema.

The schema is read from the database (SQLite's ``PRAGMA table_info``, PostgreSQL's
``information_schema``), never assumed. A needed column that is missing, or whose type is of
another kind than Mastra 1.x writes (text, JSON, a number, a time), refuses the store with one line
naming the table and column: a store written by a Mastra version whose columns differ is not
guessed at. Extra columns are fine.
"""

from __future__ import annotations

from collections.abc import Mapping

from localjudge.mastra_store.connection import Store, StoreError

SPANS = "mastra_ai_spans"
SCORES = "mastra_scorers"
EXPERIMENTS = "mastra_experiments"
EXPERIMENT_RESULTS = "mastra_experiment_results"

# Each kind: the declared types it accepts, SQLite's (LibSQL declares JSON and times as TEXT) and PostgreSQL's.
KINDS: dict[str, frozenset[str]] = {
    "text": frozenset({"text", "varchar", "character varying"}),
    "json": frozenset({"text", "jsonb", "json", "blob"}),
    "number": frozenset({"real", "float", "double", "double precision", "numeric", "integer", "bigint"}),
    "time": frozenset({"text", "timestamp", "timestamp without time zone", "timestamp with time zone"}),
}

NEEDED: dict[str, dict[str, str]] = {
    SPANS: {
        "traceId": "text", "spanId": "text", "parentSpanId": "text", "spanType": "text", "entityType": "text",
        "entityId": "text", "entityName": "text", "runId": "text", "threadId": "text", "resourceId": "text",
        "experimentId": "text", "input": "json", "output": "json", "error": "json", "attributes": "json",
        "startedAt": "time",
    },
    SCORES: {
        "id": "text", "scorerId": "text", "traceId": "text", "spanId": "text", "runId": "text", "scorer": "json",
        "preprocessStepResult": "json", "analyzeStepResult": "json", "score": "number", "reason": "text",
        "metadata": "json", "preprocessPrompt": "text", "analyzePrompt": "text", "generateReasonPrompt": "text",
        "input": "json", "output": "json", "additionalContext": "json", "entityType": "text", "entity": "json",
        "entityId": "text", "source": "text", "resourceId": "text", "threadId": "text", "createdAt": "time",
        "updatedAt": "time",
    },
    EXPERIMENTS: {"id": "text", "datasetId": "text", "targetType": "text", "targetId": "text"},
    EXPERIMENT_RESULTS: {
        "id": "text", "experimentId": "text", "itemId": "text", "input": "json", "output": "json",
        "groundTruth": "json", "error": "json", "traceId": "text",
    },
}

JSON_COLUMNS: dict[str, frozenset[str]] = {
    table: frozenset(c for c, kind in columns.items() if kind == "json") for table, columns in NEEDED.items()
}


def check_tables(store: Store, tables: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Each table's columns as the database declares them, after checking every needed column.

    Raises:
        StoreError: a missing table, or a needed column missing or of another kind (one line).
    """
    found = {}
    for table in tables:
        columns = store.columns(table)
        if columns is None:
            raise StoreError(f"the store has no table {table}: is it Mastra's storage (with observability on for "
                             "traces)?")
        check_columns(table, columns)
        found[table] = columns
    return found


def check_columns(table: str, columns: Mapping[str, str]) -> None:
    """Refuse `columns` (name -> declared type) lacking one `table` needs or holding it as another kind."""
    for name, kind in NEEDED[table].items():
        if name not in columns:
            raise StoreError(f"{table} has no column {name!r}: this store was written by a Mastra version whose "
                             f"{table} columns differ from the ones localjudge reads (Mastra 1.x)")
        declared = columns[name].lower()
        if declared not in KINDS[kind]:
            raise StoreError(f"{table}.{name} is {declared}, not {kind}: this store was written by a Mastra version "
                             f"whose {table} columns differ from the ones localjudge reads (Mastra 1.x)")
