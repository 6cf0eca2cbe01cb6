"""The step runner: one scorer over a batch of runs, one judge call per judge step.

`Scorer.run_batch` calls `run_batch` here (it reads the scorer as a `Recipe`). For a batch it reads
each run once (`items.read_samples`), renders a judge step's prompt for every item still in play
and asks for exactly one judge call for the step (plus one retry call for the items whose JSON
was cut off: `asking.ask`), validates each answer against its schema, and goes on to the next
step. A function step runs per item. An item whose answer is still bad, or whose step raised, is
recorded as unscored with the error (and raw text); the rest of the batch goes on
(`localjudge.scoring.items`). Then the score (a pure function of the step results) and the
reason, again one judge call for the batch.

The batch's work is a generator, `batch_steps`: it yields each judge call it needs (`Ask`) and is
sent the answers (`localjudge.scoring.calls`). `run_batch` answers each call alone;
`calls.run_together` answers several scorers' calls merged into one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from localjudge.result import ScoreResult
from localjudge.samples import Sample
from localjudge.scoring.answers import Failure, reason_text
from localjudge.scoring.asking import ask
from localjudge.scoring.calls import BatchSteps, Steps, answered_alone
from localjudge.scoring.compat import round_half_up
from localjudge.scoring.copying import copied_text
from localjudge.scoring.items import (
    FAILED,
    Item,
    call_hook,
    items_of,
    keep,
    read_samples,
    scored_result,
    shown,
    unscored,
)
from localjudge.scoring.recipe import Recipe
from localjudge.scoring.schemas import ScoreAnswer, score_answer
from localjudge.scoring.steps import JudgeStep, NotScorable, Step, StepFunction, resolve

STEPS = ("preprocess", "analyze")  # the steps before the score, in order


def run_batch(
    scorer: Recipe,
    runs: Sequence[Mapping[str, Any] | Sample],
    on_invalid: Literal["raise", "record"],
    on_step: Callable[[str], Any] | None = None,
) -> list[ScoreResult]:
    """`scorer` on `runs`: one result per run, in input order (see `Scorer.run_batch`); each
    judge call the batch needs made as it comes (a judge's exception ends the batch)."""
    return answered_alone(batch_steps(scorer, runs, on_invalid, on_step))


def batch_steps(
    scorer: Recipe,
    runs: Sequence[Mapping[str, Any] | Sample],
    on_invalid: Literal["raise", "record"],
    on_step: Callable[[str], Any] | None = None,
) -> BatchSteps:
    """`scorer` on `runs` as a generator: yields each judge call (`Ask`) the batch needs, in the
    order `run_batch` makes them, is sent each call's answers, and returns one result per run,
    in input order. Checking the scorer and reading the runs happen at the first `next`."""
    done = on_step or (lambda name: None)
    if scorer.score_step is None:
        raise ValueError(f"scorer {scorer.name!r} has no generate_score step")
    steps = [s for s in (scorer.preprocess_step, scorer.analyze_step, scorer.score_step, scorer.reason_step) if s]
    if any(isinstance(s, JudgeStep) and s.judge is None for s in steps) and scorer.judge is None:
        raise ValueError(f"scorer {scorer.name!r} has judge steps but no judge: create_scorer(..., judge=...)")
    items = items_of(read_samples(scorer, runs, on_invalid))
    for name in STEPS:
        step = getattr(scorer, f"{name}_step")
        if step is not None:
            _shortcuts(scorer, items)
            yield from _run_step(scorer, name, step, [it for it in items if it.result is None])
            done(name)
    _shortcuts(scorer, items)
    yield from _score(scorer, [it for it in items if it.result is None])
    done("score")
    yield from _reason(scorer, [it for it in items if it.result is None])
    if scorer.reason_step is not None:
        done("reason")
    return [item.result for item in items]  # type: ignore[misc]


def _shortcuts(scorer: Recipe, items: list[Item]) -> None:
    for item in items:
        if item.result is not None:
            continue
        decided = call_hook(scorer, item, "shortcut", scorer.shortcut, item.sample, item.results)
        if decided is FAILED or decided is None:
            continue
        if (not isinstance(decided, (tuple, list)) or len(decided) != 2
                or not scorer.compat.accepts(decided[0], "fraction") or not isinstance(decided[1], (str, type(None)))):
            why = Failure("step_error", f"gave {shown(decided)}, not None or (fraction in [0, 1], reason text)")
            item.result = unscored(scorer, item, why, None, "shortcut")
            continue
        fraction, reason = decided  # decided by rule: certain, so prob_score = score
        score = scorer.compat.score(fraction, scorer.scale)
        item.result = replace(
            scored_result(scorer, item, score, reason, prob=False),
            prob_score=score if scorer.compat.mastra else round_half_up(fraction * scorer.scale, 4),
        )


def _run_step(scorer: Recipe, name: str, step: Step, items: list[Item]) -> Steps:
    """One step for `items`: one judge call (plus retry) or the function per item."""
    if not isinstance(step, JudgeStep):
        for item in items:
            if (value := call_hook(scorer, item, f"{name} step", step, item.sample, item.results)) is not FAILED:
                keep(scorer, item, name, value)
        return
    if step.by_rule is not None:
        items = _by_rule(scorer, name, step.by_rule, items)
    answered, failed = yield from ask(scorer, name, step, items)
    for item, why in failed:
        item.result = unscored(scorer, item, why, None, f"{name} step")
    for item, answer, out in answered:
        if isinstance(answer, Failure):
            item.result = unscored(scorer, item, answer, out.text, f"{name} step")
            continue
        if (copied := copied_text(answer, step.examples, item.sample)) is not None:
            why = Failure("copied_example", f"the judge copied the worked example: {copied!r}")
            item.result = unscored(scorer, item, why, out.text, f"{name} step")
            continue
        value = call_hook(scorer, item, f"{name} step", step.finish, item.sample, item.results, answer, raw=out.text)
        if value is not FAILED:  # UnscorableError, or a user's finish, fails this item only
            keep(scorer, item, name, value, out.text)


def _by_rule(scorer: Recipe, name: str, rule: StepFunction, items: list[Item]) -> list[Item]:
    """Give the items the step's rule decides their result; return the rest (for the judge)."""
    rest = []
    for item in items:
        decided = call_hook(scorer, item, f"{name} step", rule, item.sample, item.results)
        if decided is None:
            rest.append(item)
        elif decided is not FAILED:
            keep(scorer, item, name, decided)
    return rest


def _score(scorer: Recipe, items: list[Item]) -> Steps:
    step = scorer.score_step
    if isinstance(step, JudgeStep):  # Mastra's prompt object: the judge writes {"score": x}, one call a batch
        yield from _run_step(scorer, "score", _bounded(scorer, step), items)
    for item in items:
        if item.result is not None:
            continue
        if isinstance(step, JudgeStep):
            value = call_hook(scorer, item, "score", _judged, item.results["score_step_result"])
        else:  # UnscorableError, or a formula
            value = call_hook(scorer, item, "score", step, item.sample, item.results)
        if value is FAILED:
            continue
        if isinstance(value, NotScorable):
            keep(scorer, item, "score", value)
            continue
        if not scorer.compat.accepts(value, scorer.score_returns):
            want = "a fraction in [0, 1]" if scorer.score_returns == "fraction" else "a finite number (the score)"
            why = Failure("step_error", f"generate_score gave {shown(value)}, not {want}")
            item.result = unscored(scorer, item, why, None, "score")
            continue
        item.score = scorer.compat.score(value, scorer.scale, scorer.score_returns)


def _bounded(scorer: Recipe, step: JudgeStep) -> JudgeStep:
    """A prompt-object score step with `ScoreAnswer` bounded as the scorer's contract reads it:
    [0, 1] for a fraction, [0, scale] for the score itself."""
    if step.schema is not ScoreAnswer or scorer.score_returns == "fraction" or scorer.scale == 1:
        return step
    return replace(step, schema=score_answer(scorer.scale))


def _judged(value: Any) -> Any:
    """The number a judge-step generate_score gave: its answer's ``score`` (or what `finish` made)."""
    if isinstance(value, Mapping) and "score" in value:
        return value["score"]
    if isinstance(value, (int, float, NotScorable)):
        return value
    raise ValueError(f"the generate_score judge step gave {type(value).__name__}, not a number or {{'score': ...}}")


def _reason(scorer: Recipe, items: list[Item]) -> Steps:
    """The reason for every scored item (one judge call for all, for a judge step)."""
    for item in items:
        item.results["score"] = item.score
    step = scorer.reason_step
    if step is None:
        reasons: dict[int, tuple[str | None, str | None]] = {id(it): (None, None) for it in items}
    elif not isinstance(step, JudgeStep):
        reasons = {}
        for item in items:
            try:
                value = resolve(step(item.sample, item.results))
                if isinstance(value, NotScorable):  # Mastra's generateReason may declare it too
                    keep(scorer, item, "reason", value)
                reasons[id(item)] = (reason_text(value), None)
            except (Exception, SystemExit) as error:  # noqa: BLE001 - user code: no reason, still scored (sys.exit too)
                reasons[id(item)] = (f"[no reason: {type(error).__name__}: {error}]", None)
    else:
        answered, failed = yield from ask(scorer, "reason", step, items)
        reasons = {id(item): (f"[no reason: {why.message}]", None) for item, why in failed}  # still scored
        for item, answer, out in answered:
            if isinstance(answer, Failure):
                reasons[id(item)] = (f"[no reason: {answer.message}]", out.text)
                continue
            if (copied := copied_text(answer, step.examples, item.sample)) is not None:
                reasons[id(item)] = (f"[no reason: the judge copied the worked example: {copied!r}]", out.text)
                continue
            try:
                reasons[id(item)] = (reason_text(step.finish(item.sample, item.results, answer)), None)
            except (Exception, SystemExit) as error:  # noqa: BLE001 - user code: no reason, still scored (sys.exit too)
                reasons[id(item)] = (f"[no reason: {type(error).__name__}: {error}]", out.text)
    for item in items:
        del item.results["score"]
        reason, raw = reasons[id(item)]
        if item.result is None:  # else declared not scorable by the reason step
            item.result = scored_result(scorer, item, item.score, reason, raw=raw)  # type: ignore[arg-type]
