"""The one planner of batched, resumable scoring: which rows go to the judge together, each row's
result key, which rows a results log already holds, and one batch scored with out-of-memory halving.

`evaluate` (through `score_runs`) and a Ray actor (`localjudge.cluster`) both score through here,
so a row takes one route whichever runs it:
- `plan_batches`: row indices in judge batches, longest first within each window of
  `WINDOW_BATCHES` batches (less padding), ties in row order.
- `read_rows`: one scorer's reading of rows. Each row is made a `Sample` once (a user's
  `prepare_run` and `get_context` run once per row and scorer), keyed (`result_key`) and sorted
  into: unreadable (`invalid_run`, no key, never judged), done (its key is in the log) or pending.
- `score_together`: several scorers on their rows of one batch in lock step
  (`localjudge.scoring.run_together`: each round, every scorer's next judge step in one judge
  call); a judge call that raises (out of memory or any other error) is retried in halves down
  to one row, so only a row the judge fails on alone is unscored (`judge_failed`). `score_samples` is one scorer alone.
- `to_store`: which fresh results a log keeps: those with a key and not a transient error
  (`too_long`, `judge_failed` may pass next time, so the next run judges them again).

`score_planned` is the one entry every door calls: a list of (scorer, runs), each scorer its own
runs, scored as one schedule (the rows pending for any scorer planned into batches, each batch
scored by every scorer together). `evaluate` calls it once (``schedule="by-scorer"``: once per
scorer), `run_evals` once per batch of items (every scorer, gate and turn), a Ray actor once per
batch, the live worker once per sampled batch, `/v1/score` once per window of requests.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from localjudge.evaluation.progress import BatchProgress, OnResults, Progress
from localjudge.evaluation.store import ResultStore, result_from_dict, result_key
from localjudge.judge import JudgeOutOfMemory
from localjudge.result import TRANSIENT_ERRORS, ScoreResult
from localjudge.samples import Sample, run_id_of
from localjudge.scoring import BatchSteps, Scorer, read_samples, run_together

log = logging.getLogger(__name__)

WINDOW_BATCHES = 16  # rows are length-sorted within windows of this many batches
Schedule = Literal["together", "by-scorer"]  # how `evaluate` runs several scorers (see `score_planned`)
SCHEDULES: tuple[Schedule, ...] = ("together", "by-scorer")


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
    chosen = list(indices)
    for i, read in zip(chosen, read_samples(scorer, [runs[i] for i in chosen], "record"), strict=True):
        if isinstance(read, ScoreResult):
            reading.invalid[i] = read
            continue
        reading.samples[i] = read
        key = reading.keys[i] = result_key(scorer.key, read, scorer.shown_fields)
        (reading.done if key in done else reading.pending).append(i)
    return reading


@dataclass
class ScorerBatch:
    """One scorer's rows of a batch, as `score_together` takes them: its samples, `on_step` (called
    with each step's name and the rows it ran for, as it ends: `BatchProgress.step`) and where its
    out-of-memory back-offs are counted (`backoffs[0]`)."""

    scorer: Scorer
    samples: Sequence[Sample]
    on_step: Callable[[str, int], None] | None = None
    backoffs: list[int] = field(default_factory=lambda: [0])

    def part(self, start: int, stop: int | None) -> ScorerBatch:
        return ScorerBatch(self.scorer, self.samples[start:stop], self.on_step, self.backoffs)


def score_together(batches: Sequence[ScorerBatch]) -> list[list[ScoreResult]]:
    """Several scorers on their rows of one batch, in lock step (`run_together`: each round, every
    scorer's next judge step in one judge call): per scorer, one result per sample, in order.

    One failure rule for a merged call: a judge call that raises ends the batches of the scorers
    that had prompts in it, and only theirs; each such batch of more than one row is halved and
    each half scored again, down to one row, so that only a row the judge fails on itself stays
    unscored (`judge_failed`, the error's line). Out of memory (`JudgeOutOfMemory`) is counted in
    the batch's `backoffs` and its halves stay merged with the other scorers' halves; after any
    other error each scorer's batch is first asked alone (another scorer's row may have been the
    cause), then halved: one prompt the engine raises on no longer costs every row batched with
    it, run after run. The failed call's frames are gone before the halves run (`run_together`
    drops the traceback): on a GPU, its KV cache and activations would otherwise stay held while
    the halves retry."""
    results: list[list[ScoreResult]] = [[] for _ in batches]
    live = [k for k, batch in enumerate(batches) if batch.samples]
    outcomes = run_together([_steps(batches[k]) for k in live])
    failed: dict[int, Exception] = {}
    for k, outcome in zip(live, outcomes, strict=True):
        if isinstance(outcome, Exception):
            failed[k] = outcome
        else:
            results[k] = outcome
    halve = []
    for k, error in failed.items():
        batch, half = batches[k], len(batches[k].samples) // 2
        if len(failed) > 1 and not isinstance(error, JudgeOutOfMemory):  # merged: another's row may be the cause
            log.warning("%s: a judge call with other scorers' rows failed (%s); retrying its %d row(s) alone",
                        batch.scorer.name, _line(error), len(batch.samples))
            results[k] = score_together([batch])[0]
        elif len(batch.samples) == 1:
            results[k] = judge_failed_results(batch.scorer.name, [batch.samples[0].run_id], error)
        elif isinstance(error, JudgeOutOfMemory):
            batch.backoffs[0] += 1
            halve.append(k)
            log.warning("%s: out of memory at batch %d; retrying as %d + %d", batch.scorer.name,
                        len(batch.samples), half, len(batch.samples) - half)
        else:
            halve.append(k)
            log.warning("%s: the judge failed on a batch of %d (%s); retrying as %d + %d", batch.scorer.name,
                        len(batch.samples), _line(error), half, len(batch.samples) - half)
    if not halve:
        return results
    firsts = score_together([batches[k].part(0, len(batches[k].samples) // 2) for k in halve])
    seconds = score_together([batches[k].part(len(batches[k].samples) // 2, None) for k in halve])
    for k, first, second in zip(halve, firsts, seconds, strict=True):
        results[k] = first + second
    return results


def _steps(batch: ScorerBatch) -> BatchSteps:
    on_step, rows = batch.on_step, len(batch.samples)
    return batch.scorer.batch_steps(batch.samples, on_invalid="record",
                                    on_step=None if on_step is None else (lambda name: on_step(name, rows)))


def score_samples(scorer: Scorer, samples: Sequence[Sample], backoffs: list[int] | None = None,
                  on_step: Callable[[str, int], None] | None = None) -> list[ScoreResult]:
    """`scorer` alone on one batch (`score_together` with one scorer): one result per sample, in
    order; out-of-memory halvings counted in `backoffs[0]`."""
    return score_together([ScorerBatch(scorer, samples, on_step, [0] if backoffs is None else backoffs)])[0]


def judge_failed_results(scorer_name: str, run_ids: Sequence[str | None], error: Exception) -> list[ScoreResult]:
    """A batch that failed as a whole: each run unscored (`judge_failed`) with the error's one line
    (its whitespace, newlines too, collapsed), logged once in that line (its traceback at debug). `evaluate`'s and a
    Ray actor's batches record a failure the same way."""
    message = f"judge failed: {_line(error)}"
    log.error("%s: %s (%d row%s)", scorer_name, message, len(run_ids), "" if len(run_ids) == 1 else "s")
    log.debug("%s: the judge's error", scorer_name, exc_info=error)
    return [ScoreResult.unscored(run_id, scorer_name, "judge_failed", message) for run_id in run_ids]


def _line(error: BaseException) -> str:
    """An error as one line: its type and message, whitespace (newlines too) collapsed."""
    return " ".join(f"{type(error).__name__}: {error}".split())


def resumable(done: Mapping[str, Mapping[str, Any]], scorers: Sequence[Scorer]) -> dict[str, Mapping[str, Any]]:
    """The stored results (by key, as `ResultStore.load` gives them) a run may resume: one rule for
    numbers read back, a score or `prob_score` of these scorers outside [0, scale] (a log line
    edited to 5.0 on a 0-1 scale) is no reading: left out (the row is scored again), with a
    warning, never written to the output as it is. A scorer whose number is the score itself
    (``score_returns="score"``) takes any finite number; Mastra's NaN stays a reading."""
    bounds = {s.name: s.scale for s in scorers if getattr(s, "score_returns", "fraction") == "fraction"}
    kept, dropped = {}, 0
    for key, record in done.items():
        scale = bounds.get(record.get("scorer"))  # type: ignore[arg-type]
        if scale is not None and not all(_within(record.get(field), scale) for field in ("score", "prob_score")):
            dropped += 1
            continue
        kept[key] = record
    if dropped:
        log.warning("the results log holds %d result(s) with a score outside [0, scale] (edited or corrupt): "
                    "those rows will be scored again", dropped)
    return kept


def _within(value: Any, scale: float) -> bool:
    """Whether a stored number reads as a score in [0, scale] (None: unscored; "NaN": Mastra's own)."""
    if value is None or value == "NaN":
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= scale


def to_store(pairs: Iterable[tuple[str | None, ScoreResult]]) -> list[tuple[str, ScoreResult]]:
    """The fresh (key, result) pairs a results log keeps: keyed, and not a transient error."""
    return [(key, result) for key, result in pairs if key is not None and result.error_kind not in TRANSIENT_ERRORS]


ScorerRuns = tuple[Scorer, Sequence[Mapping[str, Any]]]  # a scorer and the runs it judges


@dataclass
class ScorerRows:
    """What `score_planned` gave one scorer, by position in its runs: a result per run (a resumed
    one only when the log's results were given), a sample and key per readable run, and counts."""

    results: dict[int, ScoreResult]
    samples: dict[int, Sample]
    keys: dict[int, str]
    resumed: int
    new_tokens: int = 0
    oom_backoffs: int = 0


def score_planned(jobs: Sequence[ScorerRuns], *, batch_size: int,
                  done: Mapping[str, Mapping[str, Any]] | Collection[str] = (), store: ResultStore | None = None,
                  progress: Progress | None = None, on_results: OnResults | None = None,
                  unreadable: Literal["raise", "record"] = "raise") -> list[ScorerRows]:
    """The one planner entry: each scorer on its own runs, all of them as one schedule.

    Each scorer reads its runs once (`read_rows`: unreadable, resumed when their key is in `done`,
    or pending). A run given to several scorers (the same object) is one row: the rows pending
    for any scorer are planned into `plan_batches`' batches, and each batch is scored by every
    scorer with rows in it together (`score_together`: each round of steps in one judge call; at
    most `batch_size` rows per scorer per call). Each batch's fresh results are appended to
    `store` (one append for the batch), then handed to `on_results` and counted to `progress`
    per scorer. `evaluate` (every scorer on the same runs; ``by-scorer``: this called once per
    scorer), `run_evals`, a Ray actor, the live worker and `/v1/score` all score through here.

    Args:
        jobs: (scorer, runs) pairs; a scorer may come twice (a gate named as a scorer).
        batch_size: Rows per judge call.
        done: The results log's records by key (a resumed run gets its stored result), or only
            the keys (a resumed run gets no result here: its key says where it is).
        store: Where fresh results are appended (None: not kept).
        progress, on_results: As `evaluate`'s, by position in the scorer's runs.
        unreadable: A scorer whose reading raises (its key cannot be computed): ``"raise"``, or
            ``"record"`` each of its runs unscored (`judge_failed`, the error's line).

    Returns:
        Per job, in order, its `ScorerRows`.
    """
    pool: list[Mapping[str, Any]] = []  # the rows: each run object once (its k-th use in a job: its k-th row)
    rows_of: dict[int, list[int]] = {}
    places: list[list[int]] = []  # per job, each run's row
    for _, runs in jobs:
        uses: dict[int, int] = {}
        place = []
        for run in runs:
            k = uses[id(run)] = uses.get(id(run), -1) + 1
            have = rows_of.setdefault(id(run), [])
            if k == len(have):
                have.append(len(pool))
                pool.append(run)
            place.append(have[k])
        places.append(place)
    readings, found = [], []
    for (scorer, runs), place in zip(jobs, places, strict=True):
        try:
            reading = read_rows(scorer, pool, place, done)
        except Exception as error:  # noqa: BLE001 - recorded when asked: one scorer's runs, not the rest
            if unreadable == "raise":
                raise
            failed = judge_failed_results(scorer.name, [run_id_of(run) for run in runs], error)
            reading = Reading(invalid=dict(zip(place, failed, strict=True)))
        readings.append(reading)
        resumed = {i: result_from_dict(done[reading.keys[i]]) for i in reading.done} if isinstance(done, Mapping) \
            else {}
        found.append(ScorerRows({**reading.invalid, **resumed}, reading.samples, reading.keys, len(reading.done)))
    positions = [{i: p for p, i in enumerate(place)} for place in places]  # per job: row -> position

    def hand_over(k: int, pairs: Iterable[tuple[int, ScoreResult]]) -> None:
        if on_results:
            on_results(jobs[k][0].name, sorted((positions[k][i], result) for i, result in pairs))

    for k, ((scorer, _), rows) in enumerate(zip(jobs, found, strict=True)):
        if progress:
            progress(scorer.name, len(rows.results) + (0 if isinstance(done, Mapping) else rows.resumed))
        if rows.results:
            hand_over(k, rows.results.items())
    pending = [set(r.pending) for r in readings]
    backoffs = [[0] for _ in jobs]
    for batch in plan_batches(pool, batch_size, [i for i in range(len(pool)) if any(i in p for p in pending)]):
        mine = [[i for i in batch if i in p] for p in pending]
        counted = [BatchProgress(progress, scorer, len(m)) for (scorer, _), m in zip(jobs, mine, strict=True)]
        fresh = score_together([ScorerBatch(scorer, [r.samples[i] for i in m], c.step, b) for (scorer, _), r, m, c, b
                                in zip(jobs, readings, mine, counted, backoffs, strict=True)])
        kept: list[tuple[str | None, ScoreResult]] = []
        for rows, r, m, results in zip(found, readings, mine, fresh, strict=True):
            rows.results.update(zip(m, results, strict=True))
            rows.new_tokens += sum(result.new_tokens for result in results)
            kept += [(r.keys[i], result) for i, result in zip(m, results, strict=True)]
        if store is not None:
            store.append(to_store(kept))
        for k, (m, results, c) in enumerate(zip(mine, fresh, counted, strict=True)):
            if m:
                hand_over(k, zip(m, results, strict=True))
                c.end()
    for rows, b, position in zip(found, backoffs, positions, strict=True):
        rows.oom_backoffs = b[0]
        rows.results, rows.samples, rows.keys = (_rekeyed(rows.results, position), _rekeyed(rows.samples, position),
                                                 _rekeyed(rows.keys, position))
    return found


Value = TypeVar("Value")


def _rekeyed(table: dict[int, Value], position: dict[int, int]) -> dict[int, Value]:
    """A table by row (the pool's index) made one by position in a job's runs."""
    return {position[i]: value for i, value in table.items()}
