"""A batch's items and their results: each run read once (`read_samples`), its working state
(`Item`), a user's hook called on it (`call_hook`), a step's result kept (`keep`), and the
`ScoreResult` it ends with, scored (`scored_result`) or not (`unscored`).

Every user hook (a function step, a judge step's prompt, schema, `finish` and `by_rule`, the score
function, `shortcut`, `prob_score`) is called through `call_hook`: one item's exception or bad
value costs that item only (``step_error``, naming the hook), never the batch. A step's result is
kept only if it is JSON data (`steps.json_problem`: no set, bytes or object, no dict that holds
itself), since every result is stored as JSON; else that item is a ``step_error`` naming the step
and the type. (`get_context`, `prepare_run` and `fallback_context` run when a run is read: a run
they fail on is ``invalid_run``, as any run that cannot be read.)
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from localjudge.result import ScoreResult
from localjudge.samples import InvalidRunError, Sample, run_id_of
from localjudge.scoring.answers import Failure, failure_of
from localjudge.scoring.compat import round_half_up
from localjudge.scoring.recipe import Recipe
from localjudge.scoring.steps import NotScorable, Results, json_problem, resolve

FAILED = object()  # what `call_hook` returns when the hook failed (the item is then unscored)


class Reader(Protocol):
    """What reading a run needs of a scorer: its name and its `sample`."""

    @property
    def name(self) -> str: ...

    def sample(self, run: Mapping[str, Any]) -> Sample:
        """The run read for this scorer; raises `InvalidRunError` when it cannot be judged."""
        ...


def read_samples(scorer: Reader, runs: Sequence[Mapping[str, Any] | Sample],
                 on_invalid: Literal["raise", "record"]) -> list[Sample | ScoreResult]:
    """Each run read for `scorer` once (a `Sample` is taken as it is): its sample; or, for a run
    that cannot be read (a user's `prepare_run` or `get_context` that raised, or called
    `sys.exit`, too), its unscored result (``invalid_run``: why) with ``"record"``, an
    `InvalidRunError` naming the run's index with ``"raise"``. `Scorer.run_batch`, the ensemble and
    the planner all read runs here."""
    read: list[Sample | ScoreResult] = []
    for index, run in enumerate(runs):
        try:
            read.append(run if isinstance(run, Sample) else scorer.sample(run))
        except (Exception, SystemExit) as error:  # noqa: BLE001 - user hooks (sys.exit too) and bad runs
            if on_invalid == "raise":
                raise InvalidRunError(f"run {index}: {error}") from error
            run_id = run_id_of(run) if isinstance(run, Mapping) else None
            read.append(ScoreResult.unscored(run_id, scorer.name, "invalid_run", f"invalid run: {error}"))
    return read


@dataclass
class Item:
    """Working state of one run inside a batch (`step_runner.batch_steps`)."""

    sample: Sample
    results: Results = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    label_probs: dict[str, tuple[dict[str, float], ...]] = field(default_factory=dict)
    new_tokens: int = 0
    score: float | None = None
    result: ScoreResult | None = None


def items_of(read: Sequence[Sample | ScoreResult]) -> list[Item]:
    """A batch's items from its runs as read: an unreadable run's item is done (its result set)."""
    items = []
    for one in read:
        if isinstance(one, Sample):
            items.append(Item(one))
        else:
            items.append(Item(Sample(one.run_id, "", ""), result=one))
    return items


def call_hook(scorer: Recipe, item: Item, where: str, hook: Any, *args: Any, raw: str | None = None) -> Any:
    """A user's hook on one item (awaited, if async): its value; or, if it raised, `FAILED` with
    the item unscored (``step_error``; ``unscorable`` for `UnscorableError`) naming `where`."""
    try:
        return resolve(hook(*args))
    except (Exception, SystemExit) as error:  # noqa: BLE001 - user code: this item only, never the batch (sys.exit too)
        item.result = unscored(scorer, item, failure_of(error), raw, where)
        return FAILED


def shown(value: Any) -> str:
    """A user's bad value in an error message: its type and the start of its repr, on one line."""
    text = " ".join(reprlib.repr(value).split())
    return f"{type(value).__name__} {text}"


def keep(scorer: Recipe, item: Item, name: str, value: Any, raw: str | None = None) -> None:
    """A step's result kept for the next steps, if JSON can hold it (else the item is a
    ``step_error`` naming the step and the type); or, for Mastra's `not_scorable(reason)`, the
    run ended: not scorable, no later step (no judge call) for it."""
    if isinstance(value, NotScorable):
        why = Failure("not_scorable", "not scorable" + (f": {value.reason}" if value.reason else ""))
        item.result = unscored(scorer, item, why, raw, f"{name} step")
    elif (problem := json_problem(value)) is not None:
        why = Failure("step_error", f"gave {problem}, which JSON cannot hold (step results are stored as JSON)")
        item.result = unscored(scorer, item, why, raw, f"{name} step")
    else:
        item.results[f"{name}_step_result"] = value


def _prob_score(scorer: Recipe, item: Item) -> Any:
    """The score from label probabilities, read as `score_returns` says (a fraction times the
    scale, or the score itself): None without a `prob_score` function or probabilities; `FAILED`
    (the item unscored) when the user's function raised or gave no finite number."""
    if scorer.prob_score_fn is None or not item.label_probs.get("analyze"):
        return None
    value = call_hook(scorer, item, "prob_score", scorer.prob_score_fn, item.results, item.label_probs)
    if value is None or value is FAILED:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        item.result = unscored(scorer, item, Failure("step_error", f"gave {shown(value)}, not a number or None"),
                               None, "prob_score")
        return FAILED
    return round_half_up(value * scorer.scale if scorer.score_returns == "fraction" else value, 4)


def scored_result(scorer: Recipe, item: Item, score: float, reason: str | None, raw: str | None = None,
                  prob: bool = True) -> ScoreResult:
    """The scored result (without `prob`, no prob_score: the caller sets it); the item's unscored
    one if its `prob_score` function failed."""
    prob_score = _prob_score(scorer, item) if prob and "analyze_step_result" in item.results else None
    if prob_score is FAILED:
        return item.result  # type: ignore[return-value]
    return ScoreResult(
        run_id=item.sample.run_id,
        scorer=scorer.name,
        score=score,
        reason=reason,
        preprocess_step_result=item.results.get("preprocess_step_result"),
        preprocess_prompt=item.prompts.get("preprocess"),
        analyze_step_result=item.results.get("analyze_step_result"),
        analyze_prompt=item.prompts.get("analyze"),
        generate_reason_prompt=item.prompts.get("reason"),
        prob_score=prob_score,
        raw_output=raw,
        new_tokens=item.new_tokens,
    )


def unscored(scorer: Recipe, item: Item, why: Failure, raw: str | None, where: str) -> ScoreResult:
    """The item's unscored result: why (naming `where`), with what its steps had made so far."""
    return ScoreResult.unscored(
        item.sample.run_id, scorer.name, why.kind, f"{where}: {why.message}",
        preprocess_step_result=item.results.get("preprocess_step_result"),
        preprocess_prompt=item.prompts.get("preprocess"),
        analyze_step_result=item.results.get("analyze_step_result"),
        analyze_prompt=item.prompts.get("analyze"),
        raw_output=raw,
        new_tokens=item.new_tokens,
    )


__all__ = ["FAILED", "Item", "Reader", "call_hook", "items_of", "keep", "read_samples", "scored_result", "shown",
           "unscored"]
