"""A Ray run's plan, without Ray: the scorers each actor builds, which batches go out, what an actor
does with a batch, and how the results come back into the rows.

The driver reads the rows with localjudge's own reader and cuts them into judge batches with the
one planner (`localjudge.evaluation.plan_batches`: longest first within windows, as `evaluate`
does). One Ray item is one judge batch, pickled: its composition is this plan's, and a batch whose
actor dies every time costs that batch only. An actor scores a batch with `score_batch`, through the
planner's one entry (`score_planned`, as `evaluate`): per scorer, each row read once (its sample,
its key, whether the log has it; a user's hooks run once per row), and every scorer scores its
rows not done together (each round of steps of every scorer in one judge call, out-of-memory
halving), and returns per row and scorer the result key and the
result (None where the key was done: the driver has that result already). The driver's `Collector`
collects each batch's results as it comes back, appends those the planner keeps (`to_store`:
exactly once by key) and assembles the same columns `evaluate` returns.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localjudge.engines import JudgeSource, JudgeSpec, load_source  # noqa: F401 - the cluster's names too
from localjudge.evaluation import (
    ResultStore,
    ScorerSummary,
    score_planned,
    summarize,
    to_store,
)
from localjudge.evaluation import result_from_dict as stored_result
from localjudge.judge import Judge
from localjudge.result import ScoreResult
from localjudge.scorers import build_scorer, load_scorer_modules
from localjudge.scoring import Scorer

Outcome = dict[str, tuple[str | None, dict[str, Any] | None]]  # scorer -> (result key, result; None: done)


@dataclass(frozen=True)
class ScorerSpec:
    """One scorer by name, as `localjudge score --scorer` and a sweep's entries give it. `modules`:
    the user's scorer modules each actor imports before it builds the scorer (`load_scorer_modules`:
    a ``.py`` file by its absolute path, the same on every node, or an importable module's name), so
    a scorer registered outside the package is known there too."""

    name: str
    scale: float = 1.0
    mode: str = "pipeline"
    options: Mapping[str, Any] = field(default_factory=dict)
    compat: str = "localjudge"  # "mastra": Mastra 1.10.2's numbers (see `localjudge.scoring.compat`)
    modules: tuple[str, ...] = ()


ScorerFactory = Callable[[Judge | None], Sequence[Scorer]]  # an actor's judge -> its scorers


def build_specs(specs: Sequence[ScorerSpec], judge: Judge | None) -> list[Scorer]:
    load_scorer_modules(list(dict.fromkeys(module for s in specs for module in s.modules)))  # in the actor's process
    return [build_scorer(s.name, judge, scale=s.scale, mode=s.mode, options=dict(s.options), compat=s.compat)
            for s in specs]


def scorer_factory(scorers: Sequence[ScorerSpec] | ScorerFactory) -> ScorerFactory:
    """A function building the scorers on an actor's judge (picklable: specs become a partial)."""
    if callable(scorers):
        return scorers
    return functools.partial(build_specs, tuple(scorers))


def pack(batch: Sequence[int], runs: Sequence[Mapping[str, Any]]) -> bytes:
    """One Ray item: a batch's (row index, run) pairs, pickled (any cell type travels as it is)."""
    return pickle.dumps([(i, dict(runs[i])) for i in batch], protocol=pickle.HIGHEST_PROTOCOL)


def score_packed(scorers: Sequence[Scorer], packed: bytes, done: Collection[str]) -> bytes:
    """An actor's work on one item: `score_batch` on its runs, pickled with their row indices."""
    rows = pickle.loads(packed)  # noqa: S301 - our own driver's item
    outcomes = score_batch(scorers, [run for _, run in rows], done)
    return pickle.dumps([(index, outcome) for (index, _), outcome in zip(rows, outcomes, strict=True)],
                        protocol=pickle.HIGHEST_PROTOCOL)


def score_batch(scorers: Sequence[Scorer], runs: Sequence[Mapping[str, Any]], done: Collection[str]) -> list[Outcome]:
    """Score one batch with every scorer together, skipping rows whose key is in `done`.

    Per scorer, the planner reads each row once (a row that cannot be read is recorded as
    `invalid_run`, its key None); the rows not done are scored by every scorer together
    (`score_together`: each round of steps in one judge call, a failed call halved). An exception
    that escapes a scorer's reading makes each row of the batch unscored for that scorer
    (`judge_failed`, the exception's line): returned, not raised, since Ray Data would drop the
    batch as a dead actor's and the error would be lost.

    Returns:
        Per row, per scorer: (result key, the result as a dict; None when the key was done).
    """
    outcomes: list[Outcome] = [{} for _ in runs]
    scored = score_planned([(scorer, runs) for scorer in scorers], batch_size=max(len(runs), 1), done=done,
                           unreadable="record")
    for scorer, rows in zip(scorers, scored, strict=True):
        for i, outcome in enumerate(outcomes):
            result = rows.results.get(i)  # none where the key was done
            outcome[scorer.name] = (rows.keys.get(i), None if result is None else result.to_dict())
    return outcomes


class Collector:
    """The driver's side: results per row and scorer as batches come back, stored a batch at a time.

    Args:
        names: The scorers' names, in column order.
        run_ids: Each row's run id (for rows lost to dead actors).
        store: Where fresh results are appended (None: not kept).
        done: The store's results by key, loaded before the run (what `resumed` outcomes point at).
    """

    def __init__(self, names: Sequence[str], run_ids: Sequence[str | None], store: ResultStore | None,
                 done: Mapping[str, Mapping[str, Any]]) -> None:
        self.names, self.run_ids, self.store, self.done = list(names), list(run_ids), store, done
        self.results: dict[str, dict[int, ScoreResult]] = {name: {} for name in names}
        self.resumed = dict.fromkeys(names, 0)
        self.tokens = dict.fromkeys(names, 0)

    def add(self, rows: Sequence[tuple[int, Outcome]]) -> None:
        """One batch's outcomes: kept, and the fresh ones the planner keeps (`to_store`) appended
        to the log (one fsync)."""
        fresh: list[tuple[str | None, ScoreResult]] = []
        for index, outcome in rows:
            if self.complete(index):
                continue  # a retried batch's second answer: each row once
            for name in self.names:
                key, data = outcome[name]
                if data is None:
                    assert key is not None
                    self.results[name][index] = stored_result(self.done[key])
                    self.resumed[name] += 1
                    continue
                result = self.results[name][index] = stored_result(data)
                self.tokens[name] += result.new_tokens
                fresh.append((key, result))
        if self.store is not None:
            self.store.append(to_store(fresh))

    def lose(self, indices: Sequence[int], error: str) -> None:
        """Rows no actor could finish: unscored (`judge_failed`, so never stored: the next run tries
        them again), with `error`."""
        for index in indices:
            for name in self.names:
                self.results[name].setdefault(
                    index, ScoreResult.unscored(self.run_ids[index], name, "judge_failed", f"judge failed: {error}"))

    def complete(self, index: int) -> bool:
        return all(index in by_index for by_index in self.results.values())

    def missing(self, indices: Sequence[int]) -> list[int]:
        """The rows of `indices` without a result from every scorer yet."""
        return [i for i in indices if not self.complete(i)]

    def in_order(self, indices: Sequence[int]) -> dict[str, list[ScoreResult]]:
        """Per scorer, one result per row of `indices`, in their order."""
        return {name: [self.results[name][i] for i in indices] for name in self.names}

    def summary(self, indices: Sequence[int], seconds: float) -> dict[str, ScorerSummary]:
        """Per scorer, `evaluate`'s figures; `seconds` is the whole run's (the scorers ran together)."""
        return {name: summarize(name, results, resumed=self.resumed[name], seconds=seconds,
                                new_tokens=self.tokens[name])
                for name, results in self.in_order(indices).items()}
