"""The one planner of batched, resumable scoring: which rows go to the judge together, each row's
result key, which rows a results log already holds, and one batch scored with out-of-memory halving.

`evaluate` (through `score_runs`) and a Ray actor (`localjudge.cluster`) both score through here,
so a row takes one route whichever runs it:
- `plan_batches`: row indices in judge batches, longest first within each window of
  `WINDOW_BATCHES` batches (less padding), ties in row order.
- `read_rows`: one scorer's reading of rows. Each row is made a `Sample` once (a user's
  `prepare_run` and `get_context` run once per row and scorer), keyed (`result_key`) and sorted
  into: unreadable (`invalid_run`, no key, never judged), done (its key is in the log) or pending.
- `score_samples`: one scorer on one batch of samples (one judge call per step for the batch),
  halving the batch on `JudgeOutOfMemory`; a judge that fails costs only this batch
  (`judge_failed`, each row).
- `to_store`: which fresh results a log keeps: those with a key and not a transient error
  (`too_long`, `judge_failed` may pass next time, so the next run judges them again).

`evaluate` runs one scorer over all its pending rows at a time (`score_rows`: each scorer's batches
are planned over its own pending rows, and its steps' prompts stay together in the judge's prefix
cache); the Ray driver plans batches over every row and each actor reads and scores a batch with
every scorer in turn. Scoring the same step of every scorer in one judge call is a change to how a
batch is scored (here), not to the plan.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localjudge.evaluation.progress import BatchProgress, OnResults, Progress
from localjudge.evaluation.store import ResultStore, result_from_dict, result_key
from localjudge.judge import JudgeOutOfMemory
from localjudge.result import TRANSIENT_ERRORS, ScoreResult
from localjudge.samples import Sample
from localjudge.scoring import Scorer

log = logging.getLogger(__name__)

WINDOW_BATCHES = 16  # rows are length-sorted within windows of this many batches


def plan_batches(runs: Sequence[Mapping[str, Any]], batch_size: int,
                 indices: Sequence[int] | None = None) -> list[list[int]]:
    """Row indices (all, or `indices` in their order) in judge batches of `batch_size`: longest
    (output and context) first within each window of `WINDOW_BATCHES` batches."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    chosen = list(range(len(runs))) if indices is None else list(indices)
    window = batch_size * WINDOW_BATCHES
    batches = []
    for start in range(0, len(chosen), window):
        chunk = sorted(chosen[start:start + window], key=lambda i: (-_size(runs[i]), i))
        batches += [chunk[j:j + batch_size] for j in range(0, len(chunk), batch_size)]
    return batches


def _size(run: Mapping[str, Any]) -> int:
    return len(str(run.get("output", ""))) + len(str(run.get("context", "")))


@dataclass
class Reading:
    """One scorer's reading of some rows (by row index).

    Attributes:
        samples: Each readable row, as the scorer judges it (made once).
        keys: Each readable row's result key.
        invalid: Each unreadable row's result (`invalid_run`: why).
        done: The rows whose key the log holds, in the order given.
        pending: The rows to judge, in the order given.
    """

    samples: dict[int, Sample] = field(default_factory=dict)
    keys: dict[int, str] = field(default_factory=dict)
    invalid: dict[int, ScoreResult] = field(default_factory=dict)
    done: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)


def read_rows(scorer: Scorer, runs: Sequence[Mapping[str, Any]], indices: Iterable[int],
              done: Container[str]) -> Reading:
    """Each row of `indices` made a sample once, keyed, and sorted into invalid, done (its key in
    `done`) and pending. A scorer whose key cannot be computed raises (the caller's to record)."""
    reading = Reading()
    for i in indices:
        try:
            sample = reading.samples[i] = scorer.sample(runs[i])
        except Exception as error:  # noqa: BLE001 - user hooks and bad rows: recorded, not fatal
            reading.invalid[i] = ScoreResult.unscored(runs[i].get("run_id"), scorer.name, "invalid_run",
                                                      f"invalid run: {error}")
            continue
        key = reading.keys[i] = result_key(scorer.key, sample, scorer.shown_fields)
        (reading.done if key in done else reading.pending).append(i)
    return reading


def score_samples(scorer: Scorer, samples: Sequence[Sample], backoffs: list[int] | None = None,
                  on_step: Callable[[str, int], None] | None = None) -> list[ScoreResult]:
    """`scorer` on one batch: one result per sample, in order. On `JudgeOutOfMemory` the batch is
    halved and each half scored (counted in `backoffs[0]`), down to one row; any other failure of
    the judge makes each row unscored (`judge_failed`, the error's line). `on_step` is called with
    each step's name and the rows it ran for, as it ends (`BatchProgress.step`).

    The halves run after the `except` block has ended: an exception being handled keeps its
    traceback, and with it every frame of the failed attempt (on a GPU, its KV cache and
    activations), alive; retrying inside the block would retry with that memory still held."""
    backoffs = [0] if backoffs is None else backoffs
    if not samples:
        return []
    try:
        return scorer.run_batch(samples, on_invalid="record",
                                on_step=None if on_step is None else (lambda name: on_step(name, len(samples))))
    except JudgeOutOfMemory as error:
        if len(samples) == 1:
            return judge_failed_results(scorer.name, [s.run_id for s in samples], error)
    except Exception as error:  # noqa: BLE001 - one batch must not end the run
        return judge_failed_results(scorer.name, [s.run_id for s in samples], error)
    backoffs[0] += 1
    half = len(samples) // 2
    log.warning("%s: out of memory at batch %d; retrying as %d + %d", scorer.name, len(samples), half,
                len(samples) - half)
    return (score_samples(scorer, samples[:half], backoffs, on_step)
            + score_samples(scorer, samples[half:], backoffs, on_step))


def judge_failed_results(scorer_name: str, run_ids: Sequence[str | None], error: Exception) -> list[ScoreResult]:
    """A batch that failed as a whole: each run unscored (`judge_failed`) with the error's one line
    (its whitespace, newlines too, collapsed), logged once with its traceback. `evaluate`'s and a
    Ray actor's batches record a failure the same way."""
    log.error("%s: judge failed on a batch of %d", scorer_name, len(run_ids), exc_info=error)
    message = " ".join(f"judge failed: {type(error).__name__}: {error}".split())
    return [ScoreResult.unscored(run_id, scorer_name, "judge_failed", message) for run_id in run_ids]


def to_store(pairs: Iterable[tuple[str | None, ScoreResult]]) -> list[tuple[str, ScoreResult]]:
    """The fresh (key, result) pairs a results log keeps: keyed, and not a transient error."""
    return [(key, result) for key, result in pairs if key is not None and result.error_kind not in TRANSIENT_ERRORS]


@dataclass
class ScorerRows:
    """What `score_rows` gave: a result and (where readable) a sample per row, and its counts."""

    results: dict[int, ScoreResult]
    samples: dict[int, Sample]
    resumed: int
    new_tokens: int
    oom_backoffs: int


def score_rows(scorer: Scorer, runs: Sequence[Mapping[str, Any]], indices: Sequence[int],
               done: Mapping[str, Mapping[str, Any]], store: ResultStore | None, batch_size: int,
               progress: Progress | None = None, on_results: OnResults | None = None) -> ScorerRows:
    """One scorer over the rows of `indices`: rows the log holds (`done`, by key) resumed, the
    others judged in `plan_batches`' batches, each batch's results appended to `store` as it ends.

    `progress` gets the rows read without a judge call first (resumed and unreadable: also 0,
    which starts its clock), then each batch's rows as its judge steps end (`BatchProgress`).
    `on_results` gets the same rows' results: those read without a judge call, then each batch's
    once it is stored."""
    reading = read_rows(scorer, runs, indices, done)
    results: dict[int, ScoreResult] = {**reading.invalid,
                                       **{i: result_from_dict(done[reading.keys[i]]) for i in reading.done}}
    if progress:
        progress(scorer.name, len(results))
    if on_results and results:
        on_results(scorer.name, sorted(results.items()))
    backoffs, tokens = [0], 0
    for batch in plan_batches(runs, batch_size, reading.pending):
        counted = BatchProgress(progress, scorer, len(batch))
        fresh = score_samples(scorer, [reading.samples[i] for i in batch], backoffs, counted.step)
        results.update(zip(batch, fresh, strict=True))
        tokens += sum(result.new_tokens for result in fresh)
        if store is not None:
            store.append(to_store((reading.keys[i], result) for i, result in zip(batch, fresh, strict=True)))
        if on_results:
            on_results(scorer.name, sorted(zip(batch, fresh, strict=True)))
        counted.end()
    return ScorerRows(results, reading.samples, len(reading.done), tokens, backoffs[0])
