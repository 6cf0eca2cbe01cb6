"""Scoring datasets: many rows, several scorers, in batches, resumable; and Mastra's `runEvals`.

`dataset_runs` (`evaluate`, `score_runs`), `target_runs` (`run_evals`: a target plus scorers,
gates, thresholds, turns; `eval_items` reads its items, `assertions` its gates and verdict),
`store` (append-only, content-keyed result logs: what resumes a run), `run_lock` (one run at a
time on an output), `tables` (row files in and out: JSONL, JSON, CSV, parquet, folders of them, dataset folders).
"""

from localjudge.evaluation.dataset_runs import (
    Columns,
    Evaluation,
    ScorerSummary,
    check_result_columns,
    evaluate,
    judge_failed_results,
    rows_to_runs,
    score_runs,
    summarize,
    to_dataset,
    with_results,
)
from localjudge.evaluation.run_lock import RunLock, RunLockedError
from localjudge.evaluation.store import ResultStore, result_from_dict, result_key
from localjudge.evaluation.tables import FOLDER_ROW, WRITE_SUFFIXES, decode_cell, read_table, write_table
from localjudge.evaluation.target_runs import (
    GateResult,
    ItemResult,
    RunEvalsResult,
    RunSummary,
    ThresholdResult,
    TurnResult,
    run_evals,
)

__all__ = [
    "Columns",
    "Evaluation",
    "FOLDER_ROW",
    "GateResult",
    "ItemResult",
    "ResultStore",
    "RunLock",
    "RunLockedError",
    "RunEvalsResult",
    "RunSummary",
    "ScorerSummary",
    "ThresholdResult",
    "TurnResult",
    "WRITE_SUFFIXES",
    "check_result_columns",
    "decode_cell",
    "evaluate",
    "judge_failed_results",
    "read_table",
    "result_from_dict",
    "result_key",
    "rows_to_runs",
    "run_evals",
    "score_runs",
    "summarize",
    "to_dataset",
    "with_results",
    "write_table",
]
