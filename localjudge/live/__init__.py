"""Live scoring of a running app: a sampled share of its calls, scored in the background.

`worker` (`LiveScorer`: submit, wrap, the batching background worker, stats), `store` (where
live results go: SQLite or JSONL; `read_results`), `mastra` (or a Mastra store's score table, through
the ``--mastra-store`` writer: `MastraScores`), `sampling` (Mastra's sampling by the run's id hash, and its filter),
`sigterm` (SIGTERM as a normal exit, opt-in).
"""

from localjudge.live.mastra import MastraScores
from localjudge.live.store import JsonlResults, LiveStoreError, SqliteResults, read_results
from localjudge.live.worker import LiveScorer, LiveStats

__all__ = ["JsonlResults", "LiveScorer", "LiveStats", "LiveStoreError", "MastraScores", "SqliteResults",
           "read_results"]
