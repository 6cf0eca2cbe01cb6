"""Mastra's storage in, scores back: the runs a Mastra app stored (its observability traces, or an
experiment's results) read into runs localjudge scores, and the scores written back as Mastra score
rows.

`connection` (opening a LibSQL/SQLite file, `sqlite`, or PostgreSQL, `postgres`, behind one
small interface, `interface`; psycopg imported only for a postgresql:// URL), `cells` (the one rule
every stored cell is read by: a bad cell costs its run, never the store), `jsonb` (SQLite's binary
JSON, as LibSQL stores it), `schema` (the columns needed, checked against the database's own
schema), `preflight` (`check_store`: what is checked before any model loads: the schema, the
score table's key, a rolled-back write), `spans` (one agent run's spans -> a run), `reader`
(selecting and reading runs, experiments), `scores` (results -> score rows).
Nothing is written but score rows, in `mastra_scorers`.
"""

from localjudge.mastra_store.connection import Store, StoreError, open_store, opened
from localjudge.mastra_store.preflight import check_store
from localjudge.mastra_store.reader import (
    UNREADABLE,
    Selection,
    read_agent_runs,
    read_experiment_runs,
    sampled,
    scored_runs,
)
from localjudge.mastra_store.schema import EXPERIMENT_RESULTS, EXPERIMENTS, SCORES, SPANS, check_columns, check_tables
from localjudge.mastra_store.scores import (
    SCORER_PREFIX,
    Judged,
    joined_series,
    judged_results,
    score_row,
    scorer_id,
    write_scores,
)

__all__ = [
    "EXPERIMENTS",
    "EXPERIMENT_RESULTS",
    "Judged",
    "SCORER_PREFIX",
    "SCORES",
    "SPANS",
    "Selection",
    "Store",
    "StoreError",
    "UNREADABLE",
    "check_columns",
    "check_store",
    "check_tables",
    "joined_series",
    "judged_results",
    "open_store",
    "opened",
    "read_agent_runs",
    "read_experiment_runs",
    "sampled",
    "score_row",
    "scored_runs",
    "scorer_id",
    "write_scores",
]
