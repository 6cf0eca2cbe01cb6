"""`run_evals`: Mastra's `runEvals`. A target turns each input into an output; scorers judge it.

As Mastra's: the target runs on every item (`concurrency` at a time); an item is one `input`,
or several sent in turn on one thread (`inputs`), or `turns`, each with its own `gates` and
`scorers` judged on that turn alone; every scorer judges the item's output (all turns' output
together, with the first input) with the whole item in the run (ground truth, request
context...); `gates` must reach their maximum; `on_item_complete` fires as each item's scores
are done with results keyed by scorer id; `scores` holds the unrounded mean per scorer id;
`summary` counts the items and, per scorer or gate id, the runs declared not scorable (left out
of every mean); thresholds and gates give the verdict (`localjudge.evaluation.assertions`).
Scorers may be Mastra's agent or workflow config, results nested as it is (`scorer_configs`).
Unlike Mastra's: items are scored a batch at a time, every scorer, gate and turn check of the
batch as one schedule (each round of steps of all of them in one judge call, not one per item),
and a target or scorer that fails on one item is recorded on that item; the run always goes on
(Mastra aborts the whole run). So that such a run still never passes, a threshold with a failed
run fails and a gate's failed run counts 0 (`assertions`).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing, nullcontext
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
from localjudge.evaluation.dataset_runs import ScorerSummary
from localjudge.evaluation.eval_items import Entry, Turn, check_items, gates_of, row_of, run_target, turns_of
from localjudge.evaluation.eval_scoring import score_items
from localjudge.evaluation.eval_store import EvalScoreSink, eval_sink, save_batch
from localjudge.evaluation.scorer_configs import (
    Path,
    ScorerPlan,
    TargetType,
    check_workflow_items,
    nested,
    plan_of,
    workflow_checked,
    workflow_row,
)
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer, resolve

TARGET_METHODS = ("generate", "run", "invoke", "predict")
ScorerEntry = Scorer | Mapping[str, Any]  # a scorer, or {"scorer": s, "threshold": t}


@dataclass(frozen=True)
class ItemResult:
    """One item, as Mastra's `onItemComplete` gets it: the item, the target's output (a workflow's
    result whole; or its error) and each scorer's result keyed by scorer id (nested as a scorer
    config is: ``{"agent": {id: result}}``, ``{"steps": {step_id: {id: result}}}``); here also
    each gate's, and each turn's gates and scorers (``turns`` items) keyed by id."""

    item: Mapping[str, Any]
    target_result: Any
    target_error: str | None
    scorer_results: dict[str, Any]  # ScoreResult by id, or nested dicts of them
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
        scores: Unrounded mean score per scorer id over the items it scored (None if none);
            nested as a scorer config is (``scores["agent"][id]``, ``scores["steps"][step][id]``).
        summary: `total_items`, `not_scorable` (and `target_errors`).
        items: Every item's `ItemResult`, in input order.
        scorer_summaries: Per scorer id (nested as `scores`): scored, unscored (failures), not
            scorable, seconds...
        verdict: ``"failed"`` when a gate fails, else ``"scored"`` when a threshold fails, else
            ``"passed"`` (Mastra's words); None when no gate or threshold gave a number.
        threshold_results: Per scorer id that has a threshold.
        gate_results: Per gate id.
        turn_results: Per turn index of ``turns`` items with gates or scorers.
    """

    scores: dict[str, Any]  # float | None by id, or nested dicts of them
    summary: RunSummary
    items: list[ItemResult]
    scorer_summaries: dict[str, Any]  # ScorerSummary by id, or nested dicts of them
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
    scorers: Sequence[ScorerEntry] | Mapping[str, Any] = (),
    target: Any = None,
    *,
    gates: Sequence[Scorer] = (),
    target_type: TargetType = "agent",
    on_item_complete: Callable[[ItemResult], Any] | None = None,
    concurrency: int = 1,
    batch_size: int = 8,
    mastra_store: EvalScoreSink | None = None,
    target_id: str | None = None,
) -> RunEvalsResult:
    """Run `target` on each item, then score its output with every scorer and gate.

    Args:
        data: Items with `input` (or `inputs`: several sent in turn on one thread; or `turns`:
            ``{"input", "gates"?, "scorers"?}`` each, judged on its own output) and optionally
            `context`, `run_id` (or `runId`), ground truth and request context; every key
            reaches the scorers (`Sample.raw`, `get_context`).
        scorers: Scorers, or ``{"scorer": s, "threshold": t}`` where `t` is the least passing
            mean, or ``{"min": a, "max": b}`` (for lower-is-better scorers, ``{"max": 0.2}``).
            Or Mastra's scorer config: ``{"agent": [...], "trajectory": [...]}`` for an agent,
            ``{"workflow": [...], "steps": {step_id: [...]}}`` for a workflow (scorers only;
            `localjudge.evaluation.scorer_configs`); results are then nested the same way.
        target: A function of the input (sync or async), or an object with a `generate`, `run`,
            `invoke` or `predict` method. Its return value is the output (a string, chat
            messages, or Mastra's agent messages with tool invocations); a workflow's is Mastra's
            workflow result. If it takes a `thread_id` or `request_context` keyword, it gets the
            item's (a thread per item, shared by its turns).
        gates: Scorers that must score their maximum (1) on every item: a mean below it fails
            the run (verdict ``"failed"``).
        target_type: ``"agent"`` (default) or ``"workflow"``: the target returns Mastra's
            workflow result, whose `result` the scorers and gates judge (Mastra decides by the
            target object).
        on_item_complete: Called with each item's `ItemResult` as soon as its batch is scored,
            in input order; may be async.
        concurrency: Targets running at once (threads).
        batch_size: Items per judge call.
        mastra_store: A Mastra store to save each scored result in as Mastra's `runEvals` does,
            after each batch: ``localjudge.live.MastraScores("file:PATH")`` (or a
            ``postgresql://`` URL), which refuses a store that cannot be written when made
            (`localjudge.evaluation.eval_store`).
        target_id: The target's id in those rows (Mastra's ``target.id``); default its `id`
            attribute, else its name.
    """
    if not data:
        raise ValueError("run_evals needs at least one item")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    plan = plan_of(scorers, target_type)  # bad scorers, items and an unusable target fail before any item runs
    gate_slots: list[tuple[Path, Scorer]] = [((g.id,), g) for g in gates_of(gates)]
    has_turn_checks = check_items(data)
    if plan.target_type == "workflow":
        check_workflow_items(data)
    if not plan.slots and not gate_slots and not has_turn_checks:
        raise ValueError("give at least one scorer or gate")
    call = _target_function(target)
    sink, named = eval_sink(mastra_store, target, target_id)
    items: list[ItemResult] = []
    runs: list[dict[Path, ScoreResult]] = []  # each item's scorer results by path
    totals: dict[Path, list[ScorerSummary]] = {path: [] for path, _ in plan.slots}
    stored = closing(sink) if sink is not None else nullcontext()  # closed however the run ends
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool, stored:
        for start in range(0, len(data), batch_size):
            chunk = list(data[start:start + batch_size])
            ran = list(pool.map(lambda item: run_target(call, item), chunk))
            if plan.target_type == "workflow":
                ran = [workflow_checked(r) for r in ran]
            rows = [_row(plan, item, outputs, error, str(start + i))
                    for i, (item, (outputs, error)) in enumerate(zip(chunk, ran, strict=True))]
            judged, gated, turns = score_items(plan, gate_slots, chunk, rows, ran, batch_size, totals)
            if sink is not None:
                save_batch(sink, named, plan, chunk, rows, ran, judged, turns)
            for i, (item, (outputs, error)) in enumerate(zip(chunk, ran, strict=True)):
                shown = None if error is not None else (outputs[0] if plan.target_type == "workflow"
                                                        else rows[i]["output"])
                runs.append(judged[i])
                items.append(ItemResult(item, shown, error, nested(judged[i]), nested(gated[i]), turns[i]))
                if on_item_complete is not None:
                    resolve(on_item_complete(items[-1]))
    return _result(items, runs, plan, [g for _, g in gate_slots], totals)


def _row(plan: ScorerPlan, item: Mapping[str, Any], outputs: list[Any], error: str | None,
         index: str) -> dict[str, Any]:
    row = row_of(item, outputs, index)
    return workflow_row(row) if plan.target_type == "workflow" and error is None else row


def _result(items: list[ItemResult], runs: list[dict[Path, ScoreResult]], plan: ScorerPlan, gates: list[Scorer],
            totals: dict[Path, list[ScorerSummary]]) -> RunEvalsResult:
    by_path = {path: [run[path] for run in runs] for path, _ in plan.slots}
    by_gate = {g.id: [it.gate_results[g.id] for it in items] for g in gates}
    turns = _turn_results(items)
    not_scorable: dict[str, int] = {}  # by scorer or gate id, whatever its group (Mastra's)
    filed = [*((path[-1], v) for path, v in by_path.items()), *by_gate.items(),
             *((key, [r]) for it in items for turn in it.turn_results for key, r in turn.items())]
    for key, results in filed:
        for result in results:
            if result.not_scorable:
                not_scorable[key] = not_scorable.get(key, 0) + 1
    thresholds = threshold_results(plan.entries, {path[-1]: v for path, v in by_path.items() if len(path) == 1})
    gate_found = gate_results(gates, by_gate)
    every_gate = [*gate_found.values(), *(g for t in turns for g in (t.gate_results or {}).values())]
    every_threshold = [*thresholds.values(), *(r for t in turns for r in (t.threshold_results or {}).values())]
    return RunEvalsResult(
        scores=nested({k: mean([r.score for r in v if r.score is not None]) for k, v in by_path.items()}),
        summary=RunSummary(len(items), sum(it.target_error is not None for it in items), not_scorable),
        items=items,
        scorer_summaries=nested({k: _combine(totals[k], v) for k, v in by_path.items()}),
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
