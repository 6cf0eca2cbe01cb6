"""`run_evals`: Mastra's `runEvals`. A target turns each input into an output; scorers judge it.

As Mastra's: the target runs on every item (`concurrency` at a time), every scorer judges its
output with the whole item in the run (ground truth, request context...), `on_item_complete`
fires as each item's scores are done with results keyed by scorer id, `scores` holds the
unrounded mean per scorer id, `summary.total_items` counts the items, and optional thresholds
give a pass verdict. Unlike Mastra's: items are scored a batch at a time (one judge call per
scorer step per batch, not per item), and a target or scorer that fails on one item is recorded
on that item; the run always goes on (Mastra aborts the whole run).
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.evaluation.dataset_runs import ScorerSummary, score_runs
from localjudge.result import ScoreResult
from localjudge.samples import run_id_of
from localjudge.scoring import Scorer, resolve

log = logging.getLogger(__name__)

TARGET_METHODS = ("generate", "run", "invoke", "predict")
Threshold = float | Mapping[str, float]  # a minimum, or {"min": ..., "max": ...}
ScorerEntry = Scorer | Mapping[str, Any]  # a scorer, or {"scorer": s, "threshold": t}


@dataclass(frozen=True)
class ItemResult:
    """One item, as Mastra's `onItemComplete` gets it: the item, the target's output (or
    error) and each scorer's result keyed by scorer id."""

    item: Mapping[str, Any]
    target_result: Any
    target_error: str | None
    scorer_results: dict[str, ScoreResult]


@dataclass(frozen=True)
class RunSummary:
    """Mastra's `summary`: how many items ran; here also how many targets failed."""

    total_items: int
    target_errors: int


@dataclass(frozen=True)
class ThresholdResult:
    """One scorer's mean against its threshold."""

    score: float | None
    threshold: Threshold
    passed: bool


@dataclass(frozen=True)
class RunEvalsResult:
    """Mastra's `RunEvalsResult`, plus per-scorer run statistics and every item.

    Attributes:
        scores: Unrounded mean score per scorer id over the items it scored (None if none).
        summary: `total_items` (and `target_errors`).
        items: Every item's `ItemResult`, in input order.
        scorer_summaries: Per scorer id: scored, unscored, seconds, tokens...
        verdict: ``"passed"`` when every threshold holds, ``"scored"`` when one does not
            (Mastra's words); None when no threshold was given.
        threshold_results: Per scorer id that has a threshold.
    """

    scores: dict[str, float | None]
    summary: RunSummary
    items: list[ItemResult]
    scorer_summaries: dict[str, ScorerSummary]
    verdict: str | None = None
    threshold_results: dict[str, ThresholdResult] | None = None


def _target_function(target: Any) -> Callable[[Any], Any]:
    """The callable that turns an input into an output: a known method, or the target itself."""
    for name in TARGET_METHODS:
        method = getattr(target, name, None)
        if callable(method):
            return method
    if callable(target):
        return target
    raise TypeError(f"target must be callable or have one of the methods {TARGET_METHODS}")


def _entries(scorers: Sequence[ScorerEntry]) -> list[tuple[Scorer, Threshold | None]]:
    """Scorers with their thresholds, checked before any target runs."""
    found: list[tuple[Scorer, Threshold | None]] = []
    for entry in scorers:
        scorer: Any = entry
        threshold: Any = None
        if not isinstance(entry, Scorer):
            scorer, threshold = entry.get("scorer"), entry.get("threshold")
        if not isinstance(scorer, Scorer):
            raise TypeError(f"each scorer must be a Scorer or {{'scorer': Scorer, 'threshold': ...}}, got {entry!r}")
        if threshold is not None:
            _check_threshold(threshold, scorer)
        found.append((scorer, threshold))
    ids = [s.id for s, _ in found]
    if not found or len(set(ids)) != len(ids):
        raise ValueError(f"give at least one scorer, each once; got {ids}")
    return found


def _check_threshold(threshold: Any, scorer: Scorer) -> None:
    bounds = [threshold] if not isinstance(threshold, Mapping) else [threshold.get(k) for k in ("min", "max")]
    if isinstance(threshold, Mapping) and (set(threshold) - {"min", "max"} or not set(threshold)):
        raise ValueError(f"{scorer.id}: a threshold mapping takes 'min' and/or 'max', got {dict(threshold)}")
    for bound in bounds:
        if bound is None:
            continue
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not 0 <= bound <= scorer.scale:
            raise ValueError(f"{scorer.id}: a threshold must be a number in [0, {scorer.scale:g}], got {bound!r}")


def _passes(mean: float | None, threshold: Threshold) -> bool:
    if mean is None:
        return False
    if isinstance(threshold, Mapping):
        return threshold.get("min", -math.inf) <= mean <= threshold.get("max", math.inf)
    return mean >= threshold


def run_evals(
    data: Sequence[Mapping[str, Any]],
    scorers: Sequence[ScorerEntry],
    target: Any,
    *,
    on_item_complete: Callable[[ItemResult], Any] | None = None,
    concurrency: int = 1,
    batch_size: int = 8,
) -> RunEvalsResult:
    """Run `target` on each item's `input`, then score its output with every scorer.

    Args:
        data: Items with `input` and optionally `context`, `run_id` (or `runId`), ground truth
            and request context; every key reaches the scorers' `get_context` with the run.
        scorers: Scorers, or ``{"scorer": s, "threshold": t}`` where `t` is the least passing
            mean, or ``{"min": a, "max": b}`` (for lower-is-better scorers, ``{"max": 0.2}``).
        target: A function of the input (sync or async), or an object with a `generate`, `run`,
            `invoke` or `predict` method. Its return value is the output (a string, chat
            messages, or Mastra's agent messages with tool invocations).
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
    entries = _entries(scorers)  # bad scorers and an unusable target fail before any item runs
    call = _target_function(target)
    items: list[ItemResult] = []
    totals: dict[str, list[ScorerSummary]] = {s.id: [] for s, _ in entries}
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for start in range(0, len(data), batch_size):
            chunk = list(data[start:start + batch_size])
            ran = list(pool.map(lambda item: _run_target(call, item), chunk))
            rows = [{**item, "output": out, "run_id": run_id_of(item) or str(start + i)}
                    for i, (item, (out, _)) in enumerate(zip(chunk, ran, strict=True))]
            good = {i: k for k, i in enumerate(i for i, (_, error) in enumerate(ran) if error is None)}  # row -> scored
            results, summary = score_runs([rows[i] for i in good], [s for s, _ in entries], batch_size=batch_size)
            for scorer, _ in entries:
                totals[scorer.id].append(summary[scorer.name])
            for i, (item, (out, error)) in enumerate(zip(chunk, ran, strict=True)):
                by_id = {
                    s.id: results[s.name][good[i]] if error is None
                    else ScoreResult.unscored(rows[i]["run_id"], s.name, "target_failed", error)
                    for s, _ in entries
                }
                items.append(ItemResult(item, out, error, by_id))
                if on_item_complete is not None:
                    resolve(on_item_complete(items[-1]))
    means = {s.id: _mean([it.scorer_results[s.id].score for it in items if it.scorer_results[s.id].scored])
             for s, _ in entries}
    thresholds = {s.id: ThresholdResult(means[s.id], t, _passes(means[s.id], t)) for s, t in entries if t is not None}
    verdict = None if not thresholds else "passed" if all(r.passed for r in thresholds.values()) else "scored"
    return RunEvalsResult(
        scores=means,
        summary=RunSummary(len(items), sum(it.target_error is not None for it in items)),
        items=items,
        scorer_summaries={k: _combine(v, [it.scorer_results[k] for it in items]) for k, v in totals.items()},
        verdict=verdict,
        threshold_results=thresholds or None,
    )


def _run_target(call: Callable[[Any], Any], item: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The target's output for one item, or the error that stopped it (recorded, not raised)."""
    try:
        value = call(item.get("input"))
        return resolve(value), None
    except Exception as error:  # noqa: BLE001 - one item's failure is recorded, not fatal
        log.warning("target failed on an item: %s", error)
        return None, f"target failed: {type(error).__name__}: {error}"


def _combine(parts: list[ScorerSummary], results: list[ScoreResult]) -> ScorerSummary:
    """One scorer's statistics over all batches (means over its results on every item)."""
    scored = [r for r in results if r.scored]
    return ScorerSummary(
        scorer=parts[0].scorer,
        mean_score=_mean([r.score for r in scored]),
        mean_prob_score=_mean([r.prob_score for r in scored if r.prob_score is not None]),
        scored=len(scored),
        unscored=len(results) - len(scored),
        resumed=sum(p.resumed for p in parts),
        seconds=round(sum(p.seconds for p in parts), 3),
        new_tokens=sum(p.new_tokens for p in parts),
        oom_backoffs=sum(p.oom_backoffs for p in parts),
    )


def _mean(values: list[Any]) -> float | None:
    """Unrounded, as Mastra's."""
    return sum(values) / len(values) if values else None
