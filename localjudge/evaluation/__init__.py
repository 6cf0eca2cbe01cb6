"""Scoring datasets: many rows, several scorers, in batches, resumable; and Mastra's `runEvals`.

`dataset_runs` (`evaluate`, `score_runs`), `target_runs` (`run_evals`: a target plus scorers, thresholds),
`store` (append-only, content-keyed result logs: what resumes a run), `run_lock` (one run at a
time on an output), `tables` (row files in and out: JSONL, JSON, CSV, parquet, dataset folders).
"""

from localjudge.evaluation.dataset_runs import (
    Columns,
    Evaluation,
    ScorerSummary,
    check_result_columns,
    evaluate,
    rows_to_runs,
    score_runs,
    to_dataset,
)
from localjudge.evaluation.run_lock import RunLock, RunLockedError
from localjudge.evaluation.store import ResultStore
from localjudge.evaluation.tables import WRITE_SUFFIXES, decode_cell, read_table, write_table
from localjudge.evaluation.target_runs import ItemResult, RunEvalsResult, RunSummary, ThresholdResult, run_evals

__all__ = [
    "Columns",
    "Evaluation",
    "ItemResult",
    "ResultStore",
    "RunLock",
    "RunLockedError",
    "RunEvalsResult",
    "RunSummary",
    "ScorerSummary",
    "ThresholdResult",
    "WRITE_SUFFIXES",
    "check_result_columns",
    "decode_cell",
    "evaluate",
    "read_table",
    "rows_to_runs",
    "run_evals",
    "score_runs",
    "to_dataset",
    "write_table",
]
