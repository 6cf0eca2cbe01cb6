"""`run_evals`: Mastra's `runEvals`. A target turns each input into an output; scorers judge it.

As Mastra's: the target runs on every item (`concurrency` at a time); an item is one `input`,
or several sent in turn on one thread (`inputs`), or `turns`, each with its own `gates` and
`scorers` judged on that turn alone; every scorer judges the item's output (all turns' output
together, with the first input) with the whole item in the run (ground truth, request
context...); `gates` must reach their maximum; `on_item_complete` fires as each item's scores
are done with results keyed by scorer id; `scores` holds the unrounded mean per scorer id;
`summary` counts the items and, per scorer or gate id, the runs declared not scorable (left out
of every mean); thresholds and gates give the verdict (`localjudge.evaluation.assertions`).
Unlike Mastra's: items are scored a batch at a time (one judge call per scorer step per batch,
not per item), and a target or scorer that fails on one item is recorded on that item; the run
always goes on (Mastra aborts the whole run). So that such a run still never passes, a
threshold with a failed run fails and a gate's failed run counts 0 (`assertions`).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localjudge.evaluation.assertions import (
    GateResult,
    ThresholdResult,
    TurnResult,
    gate_results,
    mean,
    threshold_results,
    verdict,
)
from localjudge.evaluation.dataset_runs import ScorerSummary, score_runs
from localjudge.evaluation.eval_items import (
    Entry,
    Turn,
    check_items,
    entries_of,
    gates_of,
    row_of,
    run_target,
    turns_of,
)
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer, resolve

TARGET_METHODS = ("generate", "run", "invoke", "predict")
ScorerEntry = Scorer | Mapping[str, Any]  # a scorer, or {"scorer": s, "threshold": t}


@dataclass(frozen=True)
class ItemResult:
    """One item, as Mastra's `onItemComplete` gets it: the item, the target's output (or
    error) and each scorer's result keyed by scorer id; here also each gate's, and each turn's
    gates and scorers (``turns`` items) keyed by id."""

    item: Mapping[str, Any]
    target_result: Any
    target_error: str | None
    scorer_results: dict[str, ScoreResult]
    gate_results: dict[str, ScoreResult] = field(default_factory=dict)
    turn_results: list[dict[str, ScoreResult]] = field(default_factory=list)


@dataclass(frozen=True)
class RunSummary:
    """Mastra's `summary`: how many items ran, and per scorer or gate id how many runs were
    declared not scorable (only ids with some); here also how many targets failed."""

    total_items: int
    target_errors: int
    not_scorable: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RunEvalsResult:
    """Mastra's `RunEvalsResult`, plus per-scorer run statistics and every item.

    Attributes:
        scores: Unrounded mean score per scorer id over the items it scored (None if none).
        summary: `total_items`, `not_scorable` (and `target_errors`).
        items: Every item's `ItemResult`, in input order.
        scorer_summaries: Per scorer id: scored, unscored (failures), not scorable, seconds...
        verdict: ``"failed"`` when a gate fails, else ``"scored"`` when a threshold fails, else
            ``"passed"`` (Mastra's words); None when no gate or threshold gave a number.
        threshold_results: Per scorer id that has a threshold.
        gate_results: Per gate id.
        turn_results: Per turn index of ``turns`` items with gates or scorers.
    """

    scores: dict[str, float | None]
    summary: RunSummary
    items: list[ItemResult]
    scorer_summaries: dict[str, ScorerSummary]
    verdict: str | None = None
    threshold_results: dict[str, ThresholdResult] | None = None
    gate_results: dict[str, GateResult] | None = None
    turn_results: list[TurnResult] | None = None


def _target_function(target: Any) -> Callable[..., Any]:
    """The callable that turns an input into an output: a known method, or the target itself."""
    for name in TARGET_METHODS:
        method = getattr(target, name, None)
        if callable(method):
            return method
    if callable(target):
        return target
    raise TypeError(f"target must be callable or have one of the methods {TARGET_METHODS}")


def run_evals(
    data: Sequence[Mapping[str, Any]],
    scorers: Sequence[ScorerEntry] = (),
    target: Any = None,
    *,
    gates: Sequence[Scorer] = (),
    on_item_complete: Callable[[ItemResult], Any] | None = None,
    concurrency: int = 1,
    batch_size: int = 8,
) -> RunEvalsResult:
    """Run `target` on each item, then score its output with every scorer and gate.

    Args:
        data: Items with `input` (or `inputs`: several sent in turn on one thread; or `turns`:
            ``{"input", "gates"?, "scorers"?}`` each, judged on its own output) and optionally
            `context`, `run_id` (or `runId`), ground truth and request context; every key
            reaches the scorers (`Sample.raw`, `get_context`).
        scorers: Scorers, or ``{"scorer": s, "threshold": t}`` where `t` is the least passing
            mean, or ``{"min": a, "max": b}`` (for lower-is-better scorers, ``{"max": 0.2}``).
        target: A function of the input (sync or async), or an object with a `generate`, `run`,
            `invoke` or `predict` method. Its return value is the output (a string, chat
            messages, or Mastra's agent messages with tool invocations). If it takes a
            `thread_id` or `request_context` keyword, it gets the item's (a thread per item,
            shared by its turns).
        gates: Scorers that must score their maximum (1) on every item: a mean below it fails
            the run (verdict ``"failed"``).
        on_item_complete: Called with each item's `ItemResult` as soon as its batch is scored,
            in input order; may be async.
        concurrency: Targets running at once (threads).
        batch_size: Items per judge call.
    """
    if not data:
        raise ValueError("run_evals needs at least one item")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    entries = entries_of(scorers)  # bad scorers, items and an unusable target fail before any item runs
    gate_list = gates_of(gates)
    has_turn_checks = check_items(data)
    if not entries and not gate_list and not has_turn_checks:
        raise ValueError("give at least one scorer or gate")
    call = _target_function(target)
    items: list[ItemResult] = []
    totals: dict[str, list[ScorerSummary]] = {s.id: [] for s, _ in entries}
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for start in range(0, len(data), batch_size):
            chunk = list(data[start:start + batch_size])
            ran = list(pool.map(lambda item: run_target(call, item), chunk))
            rows = [row_of(item, outputs, str(start + i)) for i, (item, (outputs, _)) in enumerate(zip(chunk, ran,
                                                                                                     strict=True))]
            good = [i for i, (_, error) in enumerate(ran) if error is None]
            judged = {**_score([rows[i] for i in good], [s for s, _ in entries], batch_size, totals),
                      **{f"gate:{k}": v for k, v in _score([rows[i] for i in good], gate_list, batch_size).items()}}
            turns = _score_turns(chunk, ran, rows, good, batch_size)
            for i, (item, (_, error)) in enumerate(zip(chunk, ran, strict=True)):
                at = good.index(i) if error is None else None
                items.append(ItemResult(item, rows[i]["output"] if error is None else None, error,
                                        _picked([(s.id, s) for s, _ in entries], judged, at, rows[i], error),
                                        _picked([(f"gate:{g.id}", g) for g in gate_list], judged, at, rows[i], error),
                                        turns[i]))
                if on_item_complete is not None:
                    resolve(on_item_complete(items[-1]))
    return _result(items, entries, gate_list, totals)


def _picked(wanted: list[tuple[str, Scorer]], judged: dict[str, list[ScoreResult]], at: int | None,
            row: Mapping[str, Any], error: str | None) -> dict[str, ScoreResult]:
    """One item's result of each scorer (by id): the one judged at `at` in its batch, or, where
    the target failed, unscored (``target_failed``)."""
    return {key.removeprefix("gate:"): judged[key][at] if at is not None
            else ScoreResult.unscored(row["run_id"], scorer.name, "target_failed", str(error))
            for key, scorer in wanted}


def _score(rows: list[dict[str, Any]], scorers: list[Scorer], batch_size: int,
           totals: dict[str, list[ScorerSummary]] | None = None) -> dict[str, list[ScoreResult]]:
    """Each scorer's results on `rows` by scorer id: one judge call per step for the batch."""
    if not rows or not scorers:
        return {s.id: [] for s in scorers}
    found: dict[str, list[ScoreResult]] = {}
    for scorer in scorers:  # one at a time: a gate may share its name with a scorer
        results, summary = score_runs(rows, [scorer], batch_size=batch_size)
        found[scorer.id] = results[scorer.name]
        if totals is not None:
            totals[scorer.id].append(summary[scorer.name])
    return found


def _score_turns(chunk: list[Mapping[str, Any]], ran: list[tuple[list[Any], str | None]],
                 rows: list[dict[str, Any]], good: list[int], batch_size: int) -> list[list[dict[str, ScoreResult]]]:
    """Each ``turns`` item's turns judged on their own input and output: per item, per turn,
    the results keyed by gate or scorer id. Every (turn, scorer) pair of the chunk that shares a
    scorer is scored in one batch. Where the item's target failed, every turn's gates and scorers
    are unscored (``target_failed``), so the failure reaches the turns' gates and thresholds."""
    found: list[list[dict[str, ScoreResult]]] = [[] for _ in chunk]
    wanted: dict[int, tuple[Scorer, list[tuple[int, int, dict[str, Any]]]]] = {}
    for i, item in enumerate(chunk):
        if "turns" not in item:
            continue
        turns = turns_of(item)
        found[i] = [{} for _ in turns]
        for t, turn in enumerate(turns):
            run_id = f"{rows[i]['run_id']}/turn-{t}"
            for scorer in [*turn.gates, *(s for s, _ in turn.scorers)]:
                if i not in good:
                    found[i][t][scorer.id] = ScoreResult.unscored(run_id, scorer.name, "target_failed", str(ran[i][1]))
                    continue
                row = {**rows[i], "input": turn.input, "output": ran[i][0][t], "run_id": run_id}
                wanted.setdefault(id(scorer), (scorer, []))[1].append((i, t, row))
    for scorer, places in wanted.values():
        results, _ = score_runs([row for _, _, row in places], [scorer], batch_size=batch_size)
        for (i, t, _), result in zip(places, results[scorer.name], strict=True):
            found[i][t][scorer.id] = result
    return found


def _result(items: list[ItemResult], entries: list[Entry], gates: list[Scorer],
            totals: dict[str, list[ScorerSummary]]) -> RunEvalsResult:
    by_scorer = {s.id: [it.scorer_results[s.id] for it in items] for s, _ in entries}
    by_gate = {g.id: [it.gate_results[g.id] for it in items] for g in gates}
    turns = _turn_results(items)
    not_scorable: dict[str, int] = {}
    filed = [*by_scorer.items(), *by_gate.items(),
             *((key, [r]) for it in items for turn in it.turn_results for key, r in turn.items())]
    for key, results in filed:
        for result in results:
            if result.not_scorable:
                not_scorable[key] = not_scorable.get(key, 0) + 1
    thresholds = threshold_results(entries, by_scorer)
    gate_found = gate_results(gates, by_gate)
    every_gate = [*gate_found.values(), *(g for t in turns for g in (t.gate_results or {}).values())]
    every_threshold = [*thresholds.values(), *(r for t in turns for r in (t.threshold_results or {}).values())]
    return RunEvalsResult(
        scores={k: mean([r.score for r in v if r.score is not None]) for k, v in by_scorer.items()},
        summary=RunSummary(len(items), sum(it.target_error is not None for it in items), not_scorable),
        items=items,
        scorer_summaries={k: _combine(totals[k], by_scorer[k]) for k in by_scorer},
        verdict=verdict(every_gate, every_threshold),
        threshold_results=thresholds or None,
        gate_results=gate_found or None,
        turn_results=turns or None,
    )


def _turn_results(items: list[ItemResult]) -> list[TurnResult]:
    """Per turn index, over the ``turns`` items that have it: gates, thresholds, scorer means."""
    by_index: dict[int, list[tuple[Turn, dict[str, ScoreResult]]]] = {}
    for it in items:
        for t, (turn, results) in enumerate(zip(turns_of(it.item), it.turn_results, strict=False)):
            by_index.setdefault(t, []).append((turn, results))
    found = []
    for t in sorted(by_index):
        gates: dict[str, Scorer] = {}
        thresholds: dict[str, Entry] = {}  # the first threshold given a scorer at this turn, as Mastra keeps
        runs: dict[str, dict[str, list[ScoreResult]]] = {"gate": {}, "scorer": {}, "threshold": {}}
        for turn, results in by_index[t]:
            for gate in turn.gates:
                gates.setdefault(gate.id, gate)
                runs["gate"].setdefault(gate.id, []).append(results[gate.id])
            for scorer, threshold in turn.scorers:
                runs["scorer"].setdefault(scorer.id, []).append(results[scorer.id])
                if threshold is not None:
                    thresholds.setdefault(scorer.id, (scorer, threshold))
                    runs["threshold"].setdefault(scorer.id, []).append(results[scorer.id])
        means = {k: mean([r.score for r in v if r.score is not None]) for k, v in runs["scorer"].items()}
        found.append(TurnResult(t, gate_results(list(gates.values()), runs["gate"]) or None,
                                threshold_results(thresholds.values(), runs["threshold"]) or None,
                                {k: v for k, v in means.items() if v is not None} or None))
    return [r for r in found if r.gate_results or r.threshold_results or r.scores]


def _combine(parts: list[ScorerSummary], results: list[ScoreResult]) -> ScorerSummary:
    """One scorer's statistics over all batches (means over its results on every item)."""
    scored = [r for r in results if r.scored]
    return ScorerSummary(
        scorer=parts[0].scorer if parts else (results[0].scorer if results else ""),
        mean_score=mean([r.score for r in scored if r.score is not None]),
        mean_prob_score=mean([r.prob_score for r in scored if r.prob_score is not None]),
        scored=len(scored),
        unscored=sum(r.failed for r in results),
        resumed=sum(p.resumed for p in parts),
        seconds=round(sum(p.seconds for p in parts), 3),
        new_tokens=sum(p.new_tokens for p in parts),
        oom_backoffs=sum(p.oom_backoffs for p in parts),
        not_scorable=sum(r.not_scorable for r in results),
    )


__all__ = ["GateResult", "ItemResult", "RunEvalsResult", "RunSummary", "ThresholdResult", "TurnResult", "run_evals"]
