"""`run_evals`' assertions, as Mastra's: gates, thresholds, per-turn results and the verdict.

A *gate* is a scorer that must score its maximum (1 on the default scale) on every item: its
mean over the items is checked against it. A *threshold* is a bound on a scorer's mean: a
number (the least passing mean) or ``{"min": a, "max": b}``. Runs a scorer declared not
scorable are left out of every mean; a gate run that failed (unscored) counts 0, as a gate
that throws does in Mastra. A threshold with a failed run (the target or the scorer failed on
that item) does not pass, whatever the mean of the rest: Mastra's `runEvals` aborts the whole
run on such an item, so it never passes one. The verdict is ``"failed"`` when a gate fails, else
``"scored"`` when a threshold fails, else ``"passed"``; None when no gate or threshold produced
a number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.result import ScoreResult
from localjudge.scoring import Scorer

Threshold = float | Mapping[str, float]  # a minimum, or {"min": ..., "max": ...}


@dataclass(frozen=True)
class ThresholdResult:
    """One scorer's mean (over its scored runs) against its threshold; `failed` counts its runs
    that failed (target or scorer), any of which fails the threshold."""

    score: float | None
    threshold: Threshold
    passed: bool
    failed: int = 0


@dataclass(frozen=True)
class GateResult:
    """One gate's mean over the items (a failed run counts 0) and whether it reached the maximum;
    `failed` counts its runs that failed (target or scorer): with any, no pass rate passes it."""

    score: float
    passed: bool
    failed: int = 0


@dataclass(frozen=True)
class TurnResult:
    """One turn index of multi-turn items (``turns``), over every item that has it: its gates,
    its thresholds and the mean of each of its scorers (None where it had none)."""

    index: int
    gate_results: dict[str, GateResult] | None = None
    threshold_results: dict[str, ThresholdResult] | None = None
    scores: dict[str, float] | None = None


def check_threshold(threshold: Any, scorer: Scorer) -> None:
    """Refuse a threshold Mastra refuses (a bound outside [0, scale], neither bound, min > max,
    not a number or a mapping), with a one-line error naming the scorer."""
    if isinstance(threshold, Mapping):
        if set(threshold) - {"min", "max"} or not set(threshold) & {"min", "max"}:
            raise ValueError(f"{scorer.id}: a threshold mapping takes 'min' and/or 'max', got {dict(threshold)}")
        bounds = [threshold.get("min"), threshold.get("max")]
    else:
        bounds = [threshold]
    for bound in bounds:
        if bound is None:
            continue
        if (isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound)
                or not 0 <= bound <= scorer.scale):
            raise ValueError(f"{scorer.id}: a threshold must be a number in [0, {scorer.scale:g}], got {bound!r}")
    low, high = bounds[0], bounds[-1]
    if isinstance(threshold, Mapping) and low is not None and high is not None and low > high:
        raise ValueError(f"{scorer.id}: the threshold's min ({low:g}) is greater than its max ({high:g})")


def passes(mean: float | None, threshold: Threshold) -> bool:
    """Mastra's `checkThresholdPassed`: a mean within the bounds (no mean: not passed)."""
    if mean is None or not math.isfinite(mean):
        return False
    if isinstance(threshold, Mapping):
        return bool(threshold.get("min", -math.inf) <= mean <= threshold.get("max", math.inf))
    return mean >= threshold


def mean(values: Sequence[float]) -> float | None:
    """Unrounded, as Mastra's; None for no values."""
    return sum(values) / len(values) if values else None


def gate_score(result: ScoreResult) -> float | None:
    """What a gate run counts: its score, 0 for a failure, None (left out) when not scorable."""
    if result.not_scorable:
        return None
    return 0.0 if result.score is None else result.score


def gate_results(gates: Sequence[Scorer], runs: Mapping[str, Sequence[ScoreResult]]) -> dict[str, GateResult]:
    """Each gate's mean over its runs (`runs` by gate id); a gate whose every run was not
    scorable has no evidence either way and is left out, as in Mastra."""
    found = {}
    for gate in gates:
        results = runs.get(gate.id, ())
        counted = [s for s in map(gate_score, results) if s is not None]
        if counted:
            score = sum(counted) / len(counted)
            failed = sum(r.failed for r in results)
            found[gate.id] = GateResult(score, score >= gate.scale and not failed, failed)
    return found


def threshold_results(entries: Iterable[tuple[Scorer, Threshold | None]],
                      runs: Mapping[str, Sequence[ScoreResult]]) -> dict[str, ThresholdResult]:
    """Each thresholded scorer's mean over its scored runs against its threshold; a failed run
    fails it (Mastra aborts on one); a scorer whose every run was not scorable is left out."""
    found = {}
    for scorer, threshold in entries:
        results = runs.get(scorer.id, ())
        scored = [r.score for r in results if r.score is not None]
        failed = sum(r.failed for r in results)
        if threshold is None or (not scored and not failed and any(r.not_scorable for r in results)):
            continue
        average = mean(scored)
        found[scorer.id] = ThresholdResult(average, threshold, passes(average, threshold) and not failed, failed)
    return found


def verdict(gates: Iterable[GateResult], thresholds: Iterable[ThresholdResult]) -> str | None:
    """Mastra's verdict over every gate and threshold result (top level and per turn)."""
    gates, thresholds = list(gates), list(thresholds)
    if not gates and not thresholds:
        return None
    if not all(g.passed for g in gates):
        return "failed"
    return "passed" if all(t.passed for t in thresholds) else "scored"


__all__ = ["GateResult", "Threshold", "ThresholdResult", "TurnResult", "check_threshold", "gate_results",
           "gate_score", "mean", "passes", "threshold_results", "verdict"]
