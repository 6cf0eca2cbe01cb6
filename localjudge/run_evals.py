"""`run_evals`: Mastra's shape. A target turns each input into an output, then scorers judge it.

A target that fails on an item, or a scorer that cannot judge it, is recorded on that item;
the run always goes on (Mastra aborts the whole batch on one failure).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.evaluate import ScorerSummary, score_runs
from localjudge.result import ScoreResult
from localjudge.runs import run_id_of
from localjudge.scorer import Scorer

log = logging.getLogger(__name__)

TARGET_METHODS = ("generate", "run", "invoke", "predict")


@dataclass(frozen=True)
class ItemResult:
    """One item of `run_evals`: its data, the target's output (or error) and each scorer's result."""

    item: Mapping[str, Any]
    output: Any
    target_error: str | None
    scores: dict[str, ScoreResult]


@dataclass(frozen=True)
class RunEvalsResult:
    """Mean score per scorer over scored items, per-scorer summaries and every item."""

    scores: dict[str, float | None]
    summary: dict[str, ScorerSummary]
    items: list[ItemResult]
    target_errors: int


def _target_function(target: Any) -> Callable[[Any], Any]:
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
    scorers: Sequence[Scorer],
    target: Any,
    *,
    on_item_complete: Callable[[ItemResult], None] | None = None,
    batch_size: int = 8,
) -> RunEvalsResult:
    """Run `target` on each item's `input`, then score its output with every scorer.

    Args:
        data: Items with `input` and optionally `context` and `run_id` (or `runId`); every other
            key (ground truth, ...) reaches the scorers' `get_context` with the run.
        scorers: Scorers to run on each output.
        target: A function of the input, or an object with a `generate`, `run`, `invoke` or
            `predict` method. Its return value is the output (a string or chat messages).
        on_item_complete: Called once per item, in input order, with its `ItemResult`.
        batch_size: Rows per judge call.
    """
    if not data:
        raise ValueError("run_evals needs at least one item")
    call = _target_function(target)  # an unusable target fails before any item runs
    outputs: list[Any] = []
    errors: list[str | None] = []
    for item in data:
        try:
            outputs.append(call(item.get("input")))
            errors.append(None)
        except Exception as error:  # noqa: BLE001 - one item's failure is recorded, not fatal
            log.warning("target failed on an item: %s", error)
            outputs.append(None)
            errors.append(f"target failed: {type(error).__name__}: {error}")
    rows = [  # the whole item rides along (ground truth, ...), for a scorer's get_context
        {**item, "output": out, "run_id": run_id_of(item) or str(i)}
        for i, (item, out) in enumerate(zip(data, outputs, strict=True))
    ]
    results, summary = score_runs(rows, scorers, batch_size=batch_size)
    items = []
    for i, item in enumerate(data):
        scores = {
            s.name: results[s.name][i] if errors[i] is None
            else ScoreResult(rows[i]["run_id"], s.name, None, None, error=errors[i])
            for s in scorers
        }
        result = ItemResult(item, outputs[i], errors[i], scores)
        items.append(result)
        if on_item_complete is not None:
            on_item_complete(result)
    means = {
        s.name: _mean([it.scores[s.name].score for it in items if it.scores[s.name].scored]) for s in scorers
    }
    return RunEvalsResult(means, summary, items, sum(e is not None for e in errors))


def _mean(values: list[Any]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
