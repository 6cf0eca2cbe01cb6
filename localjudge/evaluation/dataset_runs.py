"""Dataset-scale evaluation: many rows, several scorers, resumable, in batches.

`evaluate` takes a `datasets.Dataset` (or a list of dicts) and returns it with, per scorer,
the columns `<name>_score`, `<name>_prob_score`, `<name>_reason`, `<name>_error`,
`<name>_error_kind` (see `localjudge.result.ERROR_KINDS`) and `<name>_steps` (JSON of every
step's result and prompt), plus a summary. Rows are read once; each scorer's are planned,
keyed, resumed and scored a batch at a time by `localjudge.evaluation.planner` (length-sorted
within a window of batches) and returned in input order. By default every scorer scores each
batch together (``schedule="together"``: each round of steps of every scorer in one judge call);
``schedule="by-scorer"`` runs one scorer after another over all rows (one judge call per scorer
step per batch), the order before; the results are the same. The new columns are joined with
`concatenate_datasets`; nothing goes through `Dataset.map`, so no closure holding the model is
ever hashed for a fingerprint and no cache file is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from localjudge.evaluation.planner import SCHEDULES, Schedule, ScorerRows, resumable, score_planned
from localjudge.evaluation.progress import OnResults, Progress
from localjudge.evaluation.store import ResultStore
from localjudge.evaluation.tables import FOLDER_ROW, dataset_from_rows, decode_cell
from localjudge.result import ScoreResult
from localjudge.samples import Sample
from localjudge.scoring import Scorer

if TYPE_CHECKING:
    from datasets import Dataset


@dataclass(frozen=True)
class Columns:
    """Which dataset columns hold the run's fields (input, context and run id are optional).

    Under its default name (``"input"``, ``"context"``) an optional column that is not there
    means none. Named anything else it must exist: a misspelt name would otherwise leave every
    row without it, found only after the model has loaded. Without a run id column a run's id
    is its row number, which is part of its resume key: rows inserted above it rescore it. Rows
    read from a data folder have their file's name and their row number in it instead
    (`FOLDER_ROW`, see `read_table`).
    """

    input: str | None = "input"
    output: str = "output"
    context: str | None = "context"
    run_id: str | None = None


@dataclass(frozen=True)
class ScorerSummary:
    """Aggregate figures of one scorer over an evaluation: `scored`, `unscored` (failures) and
    `not_scorable` (runs a step declared not scorable, not failures) add up to the rows."""

    scorer: str
    mean_score: float | None
    mean_prob_score: float | None
    scored: int
    unscored: int
    resumed: int
    seconds: float
    new_tokens: int
    oom_backoffs: int = 0
    not_scorable: int = 0


@dataclass(frozen=True)
class Evaluation:
    """The scored dataset, one summary per scorer, and the results as values.

    Attributes:
        dataset: The input columns plus six per scorer.
        summary: Per scorer, its figures.
        results: Per scorer, one result per row (input order).
        samples: Per scorer, each row as that scorer judged it (its context resolved), None
            where the row was invalid for it.
    """

    dataset: Dataset
    summary: dict[str, ScorerSummary] = field(default_factory=dict)
    results: dict[str, list[ScoreResult]] = field(default_factory=dict)
    samples: dict[str, list[Sample | None]] = field(default_factory=dict)


def to_dataset(data: Any) -> Dataset:
    """A `datasets.Dataset` from a Dataset or a list of dicts; empty data is an error."""
    from datasets import Dataset

    dataset = data if isinstance(data, Dataset) else dataset_from_rows(list(data))
    if len(dataset) == 0:
        raise ValueError("the dataset has no rows")
    return dataset


_RUN_FIELDS = frozenset({"input", "output", "context", "run_id", "runId"})


def rows_to_runs(dataset: Dataset, columns: Columns) -> list[dict[str, Any]]:
    """Runs (Mastra's shape) from dataset rows; unknown column names are a clear error."""
    names = set(dataset.column_names)
    # An optional column under its default name that is not there: none.
    input_col = None if columns.input == Columns.input and columns.input not in names else columns.input
    context_col = None if columns.context == Columns.context and columns.context not in names else columns.context
    wanted = [c for c in (input_col, columns.output, context_col, columns.run_id) if c]
    missing = [c for c in wanted if c not in names]
    if missing:
        raise ValueError(f"unknown column {missing[0]!r}; the data has: {', '.join(dataset.column_names)}")
    id_col = columns.run_id or (FOLDER_ROW if FOLDER_ROW in names else None)
    runs = []
    for index, row in enumerate(dataset):
        row = {k: decode_cell(v) for k, v in row.items()}
        # Every other column rides along (ground truth, ids, ...) for a user's get_context.
        run = {k: v for k, v in row.items() if k not in _RUN_FIELDS}
        run.update(input=row[input_col] if input_col else "", output=row[columns.output])
        if context_col:
            run["context"] = row[context_col]
        run["run_id"] = str(row[id_col]) if id_col else str(index)
        runs.append(run)
    return runs


def evaluate(
    data: Any,
    scorers: Sequence[Scorer],
    *,
    batch_size: int = 8,
    columns: Columns = Columns(),
    store: ResultStore | None = None,
    shard: tuple[int, int] | None = None,
    progress: Progress | None = None,
    on_results: OnResults | None = None,
    schedule: Schedule = "together",
) -> Evaluation:
    """Score every row with every scorer.

    Args:
        data: A `datasets.Dataset` or a list of dicts.
        scorers: Scorers to run (each on its own judge; they may share one).
        batch_size: Rows per judge call.
        columns: Where the input, output, context and run id live.
        store: Resume log: rows already in it are not scored again; new results are appended
            as each batch finishes.
        shard: ``(rank, world)``: score only rows with ``index % world == rank`` (data-parallel
            ranks); the returned dataset then holds only those rows.
        progress: Called with a scorer's name and the rows just finished: the rows resumed or
            unreadable first (0 too: its clock starts), then each batch's rows as its judge steps
            end (a share per step; the last row once the batch is stored).
        on_results: Called with a scorer's name and (row index in `data`, result) pairs as soon
            as they are known: the rows resumed or unreadable first, then each batch once stored.
        schedule: ``"together"`` (default): every scorer scores each batch of rows, the same
            round of steps of every scorer in one judge call (rows of different scorers share the
            engine's batch); ``"by-scorer"``: one scorer after another over all rows, the order
            before (for comparison). The same results either way.

    Returns:
        The input columns plus six columns per scorer, in input order, and a summary.
    """
    dataset = to_dataset(data)
    check_result_columns(dataset.column_names, [s.name for s in scorers])
    runs = rows_to_runs(dataset, columns)
    indices = [i for i in range(len(runs)) if shard is None or i % shard[1] == shard[0]]
    results, summary, samples = _score_all(runs, scorers, batch_size, store, indices, progress, on_results, schedule)
    return Evaluation(with_results(dataset.select(indices) if shard else dataset, results), summary, results, samples)


def with_results(dataset: Dataset, results: Mapping[str, Sequence[ScoreResult]]) -> Dataset:
    """`dataset` plus six columns per scorer from one result per row: what `evaluate` returns."""
    columns_out: dict[str, list[Any]] = {}
    for name, scored in results.items():
        columns_out.update(_result_columns(name, list(scored)))
    return _attach(dataset, columns_out)


def score_runs(
    runs: Sequence[Mapping[str, Any]],
    scorers: Sequence[Scorer],
    *,
    batch_size: int = 8,
    store: ResultStore | None = None,
    indices: Sequence[int] | None = None,
    progress: Progress | None = None,
    on_results: OnResults | None = None,
    schedule: Schedule = "together",
) -> tuple[dict[str, list[ScoreResult]], dict[str, ScorerSummary]]:
    """Score runs (dicts in Mastra's shape) with every scorer: the scoring loop under `evaluate`
    (`schedule` as there).

    Returns:
        Per scorer, one result per selected run (input order), and the per-scorer summaries.
    """
    results, summary, _ = _score_all(runs, scorers, batch_size, store, indices, progress, on_results, schedule)
    return results, summary


def _score_all(
    runs: Sequence[Mapping[str, Any]],
    scorers: Sequence[Scorer],
    batch_size: int,
    store: ResultStore | None,
    indices: Sequence[int] | None,
    progress: Progress | None,
    on_results: OnResults | None = None,
    schedule: Schedule = "together",
) -> tuple[dict[str, list[ScoreResult]], dict[str, ScorerSummary], dict[str, list[Sample | None]]]:
    """`score_runs`, also giving each scorer's samples of the selected runs."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    names = [s.name for s in scorers]
    if not scorers or len(set(names)) != len(names):
        raise ValueError(f"give at least one scorer, each once; got {names}")
    chosen = list(range(len(runs))) if indices is None else list(indices)
    done = resumable(store.load(), scorers) if store is not None else {}
    rows = [runs[i] for i in chosen]  # one list for every scorer: each row one row of the schedule
    handed = None if on_results is None else _by_index(on_results, chosen)
    scored: list[tuple[ScorerRows, float]] = []
    if schedule == "together":  # the scorers ran together: each one's seconds are the whole run's
        start = time.perf_counter()
        together = score_planned([(scorer, rows) for scorer in scorers], batch_size=batch_size, done=done,
                                 store=store, progress=progress, on_results=handed)
        scored = [(one, time.perf_counter() - start) for one in together]
    else:  # the planner entry once per scorer
        for scorer in scorers:
            start = time.perf_counter()
            one = score_planned([(scorer, rows)], batch_size=batch_size, done=done, store=store, progress=progress,
                                on_results=handed)[0]
            scored.append((one, time.perf_counter() - start))
    every = range(len(rows))
    results = {s.name: [one.results[p] for p in every] for s, (one, _) in zip(scorers, scored, strict=True)}
    samples = {s.name: [one.samples.get(p) for p in every] for s, (one, _) in zip(scorers, scored, strict=True)}
    summary = {s.name: summarize(s.name, results[s.name], resumed=one.resumed, seconds=seconds,
                                 new_tokens=one.new_tokens, oom_backoffs=one.oom_backoffs)
               for s, (one, seconds) in zip(scorers, scored, strict=True)}
    return results, summary, samples


def _by_index(on_results: OnResults, chosen: Sequence[int]) -> OnResults:
    """`on_results` fed by position in the chosen rows: (row index in the data, result) pairs."""
    return lambda name, pairs: on_results(name, [(chosen[p], result) for p, result in pairs])


def summarize(name: str, results: Sequence[ScoreResult], *, resumed: int, seconds: float, new_tokens: int,
              oom_backoffs: int = 0) -> ScorerSummary:
    """One scorer's figures over its results (one per row)."""
    scored = [r for r in results if r.scored]
    probs = [r.prob_score for r in scored if r.prob_score is not None]
    return ScorerSummary(
        scorer=name,
        mean_score=round(sum(r.score for r in scored) / len(scored), 4) if scored else None,  # type: ignore[misc]
        mean_prob_score=round(sum(probs) / len(probs), 4) if probs else None,
        scored=len(scored),
        unscored=sum(r.failed for r in results),
        resumed=resumed,
        seconds=round(seconds, 3),
        new_tokens=new_tokens,
        oom_backoffs=oom_backoffs,
        not_scorable=sum(r.not_scorable for r in results),
    )


def _result_columns(name: str, results: list[ScoreResult]) -> dict[str, list[Any]]:
    steps = [
        json.dumps(
            {
                "preprocess": r.preprocess_step_result,
                "preprocess_prompt": r.preprocess_prompt,
                "analyze": r.analyze_step_result,
                "analyze_prompt": r.analyze_prompt,
                "generate_reason_prompt": r.generate_reason_prompt,
                "raw_output": r.raw_output,
                "new_tokens": r.new_tokens,
            },
            ensure_ascii=False,
        )
        for r in results
    ]
    return {
        f"{name}_score": [r.score for r in results],
        f"{name}_prob_score": [r.prob_score for r in results],
        f"{name}_reason": [r.reason for r in results],
        f"{name}_error": [r.error for r in results],
        f"{name}_error_kind": [r.error_kind for r in results],
        f"{name}_steps": steps,
    }


def check_result_columns(column_names: Sequence[str], scorer_names: Sequence[str]) -> None:
    """Refuse data that already has a column where a scorer's results go (``toxicity_score``...):
    the results would replace it. The CLI calls this before the model loads."""
    for name in scorer_names:
        taken = [c for c in _result_columns(name, []) if c in column_names]
        if taken:
            raise ValueError(f"the data already has a column {taken[0]!r}, where the {name} scorer's results go: "
                             "rename or drop it (results never replace data)")


def _attach(dataset: Dataset, columns: dict[str, list[Any]]) -> Dataset:
    from datasets import Dataset, Features, Value, concatenate_datasets

    features = Features(
        {name: Value("float64") if name.endswith("score") else Value("string") for name in columns}
    )
    extra = Dataset.from_dict(columns, features=features)
    clash = [c for c in columns if c in dataset.column_names]
    if clash:
        dataset = dataset.remove_columns(clash)
    return concatenate_datasets([dataset, extra], axis=1)

