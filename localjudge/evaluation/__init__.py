"""Scoring datasets: many rows, several scorers, in batches, resumable; and Mastra's `runEvals`.

`dataset_runs` (`evaluate`, `score_runs`), `planner` (the one batch planner under every door:
`score_planned`, each scorer on its own runs as one schedule; batches, result keys and resume, a
batch scored with out-of-memory halving; `progress`: what
a run reports while it goes), `target_runs`
(`run_evals`: a target plus scorers, gates, thresholds, turns; `eval_items` reads its items,
`eval_scoring` judges a batch of them as one schedule,
`assertions` its gates and verdict, `scorer_configs` Mastra's agent and workflow scorer configs,
`eval_store` what it hands a Mastra store),
`ranks` (`evaluate_ranked`: data-parallel ranks on one results folder, rank 0 merging),
`store` (append-only, content-keyed result logs: what resumes a run), `run_lock` (one run at a
time on an output), `tables` (row files in and out: JSONL, JSON, CSV, parquet, folders of them, dataset folders).
"""

from localjudge.evaluation.dataset_runs import (
    Columns,
    Evaluation,
    ScorerSummary,
    check_result_columns,
    evaluate,
    rows_to_runs,
    score_runs,
    summarize,
    to_dataset,
    with_results,
)
from localjudge.evaluation.eval_store import Delivered, EvalScoreSink
from localjudge.evaluation.pass_rate import EvalAssertion, EvalPassRateError, expect_eval, expect_evals
from localjudge.evaluation.planner import (
    SCHEDULES,
    WINDOW_BATCHES,
    Reading,
    Schedule,
    ScorerBatch,
    ScorerRows,
    ScorerRuns,
    judge_failed_results,
    plan_batches,
    read_rows,
    resumable,
    score_planned,
    score_samples,
    score_together,
    to_store,
)
from localjudge.evaluation.progress import OnResults, Progress
from localjudge.evaluation.ranks import done_mark, evaluate_ranked, start_ranks, wait_for_ranks
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
    "EvalAssertion",
    "EvalPassRateError",
    "expect_eval",
    "expect_evals",
    "Columns",
    "Delivered",
    "EvalScoreSink",
    "Evaluation",
    "FOLDER_ROW",
    "GateResult",
    "ItemResult",
    "OnResults",
    "Progress",
    "Reading",
    "SCHEDULES",
    "Schedule",
    "ScorerBatch",
    "ScorerRows",
    "ScorerRuns",
    "ResultStore",
    "RunLock",
    "RunLockedError",
    "RunEvalsResult",
    "RunSummary",
    "ScorerSummary",
    "ThresholdResult",
    "TurnResult",
    "WINDOW_BATCHES",
    "WRITE_SUFFIXES",
    "check_result_columns",
    "decode_cell",
    "evaluate",
    "evaluate_ranked",
    "done_mark",
    "start_ranks",
    "wait_for_ranks",
    "judge_failed_results",
    "plan_batches",
    "read_rows",
    "read_table",
    "result_from_dict",
    "resumable",
    "result_key",
    "rows_to_runs",
    "run_evals",
    "score_runs",
    "score_planned",
    "score_samples",
    "score_together",
    "summarize",
    "to_dataset",
    "to_store",
    "with_results",
    "write_table",
]
