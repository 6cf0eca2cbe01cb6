"""The step runner: one scorer over a batch of runs, one judge call per judge step.

`Scorer.run_batch` calls `run_batch` here (it reads the scorer as a `Recipe`). For a batch it renders a judge step's
prompt for every item still in play, asks for exactly one judge call for the step (plus one retry
call for the items whose JSON was cut off), validates each answer against its schema
(`localjudge.scoring.answers`), and goes on to the next step. A function step runs per item. An item
whose answer is still bad, or whose step raised, is recorded as unscored with the error (and
raw text); the rest of the batch goes on. Then the score (a pure function of the step results)
and the reason, again one judge call for the batch.

The batch's work is a generator, `batch_steps`: it yields each judge call it needs (`Ask`: the
judge, prompts, schemas, token budget) and is sent the answers. `run_batch` answers each call
alone; `localjudge.scoring.schedule` answers several scorers' calls merged into one.

Every user hook (a function step, a judge step's prompt, schema, `finish` and `by_rule`, the score
function, `shortcut`, `prob_score`) is called through `_call`: one item's exception or bad value
costs that item only (``step_error``, naming the hook), never the batch. A step's result is kept
only if it is JSON data (`steps.json_problem`: no set, bytes or object, no dict that holds
itself), since every result is stored as JSON; else that item is a ``step_error`` naming the step
and the type. (`get_context`, `prepare_run` and `fallback_context` run when a run is read: a run
they fail on is ``invalid_run``, as any run that cannot be read.)
"""

from __future__ import annotations

import logging
import math
import reprlib
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from localjudge.judge import ChatPrompt, Generation, Judge
from localjudge.result import ScoreResult
from localjudge.samples import InvalidRunError, Sample, run_id_of
from localjudge.scoring.answers import Failure, failure_of, parse_answer, reason_text
from localjudge.scoring.compat import round_half_up
from localjudge.scoring.copying import copied_text
from localjudge.scoring.recipe import Recipe
from localjudge.scoring.schemas import ScoreAnswer, score_answer, token_budget
from localjudge.scoring.steps import JudgeStep, NotScorable, Results, Step, StepFunction, json_problem, resolve

log = logging.getLogger(__name__)

STEPS = ("preprocess", "analyze")  # the steps before the score, in order


@dataclass
class _Item:
    """Working state of one run inside `run_batch`."""

    sample: Sample
    results: Results = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    label_probs: dict[str, tuple[dict[str, float], ...]] = field(default_factory=dict)
    new_tokens: int = 0
    score: float | None = None
    result: ScoreResult | None = None


Answer = tuple[_Item, "dict[str, Any] | Failure", Generation]  # an item, its parsed answer, the raw output


@dataclass(frozen=True)
class Ask:
    """One judge call a batch needs: `judge.generate(prompts, schemas, max_new_tokens=...)`."""

    judge: Judge
    prompts: list[ChatPrompt]
    schemas: list[type[BaseModel]]
    max_new_tokens: int


Steps = Generator[Ask, list[Generation], Any]  # yields the calls it needs, is sent their answers
BatchSteps = Generator[Ask, list[Generation], list[ScoreResult]]  # `batch_steps`: ends with the results
_FAILED = object()  # what `_call` returns when the hook failed (the item is then unscored)


def run_batch(
    scorer: Recipe,
    runs: Sequence[Mapping[str, Any] | Sample],
    on_invalid: Literal["raise", "record"],
    on_step: Callable[[str], Any] | None = None,
) -> list[ScoreResult]:
    """`scorer` on `runs`: one result per run, in input order (see `Scorer.run_batch`); each
    judge call the batch needs made as it comes (a judge's exception ends the batch)."""
    return answered_alone(batch_steps(scorer, runs, on_invalid, on_step))


Answered = TypeVar("Answered")


def answered_alone(calls: Generator[Ask, list[Generation], Answered]) -> Answered:
    """A generator of judge calls (a batch's `batch_steps`, a merged call's `schedule.merged`) run to
    what it returns, each call it asks for made on its judge as it comes."""
    try:
        ask = next(calls)
        while True:
            ask = calls.send(ask.judge.generate(ask.prompts, ask.schemas, max_new_tokens=ask.max_new_tokens))
    except StopIteration as end:
        return end.value


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
    items: list[_Item] = []
    for index, run in enumerate(runs):
        try:
            items.append(_Item(run if isinstance(run, Sample) else scorer.sample(run)))
        except (Exception, SystemExit) as error:  # noqa: BLE001 - get_context is user code (sys.exit too)
            if on_invalid == "raise":
                raise InvalidRunError(f"run {index}: {error}") from error
            blank = _Item(Sample(run_id_of(run) if isinstance(run, Mapping) else None, "", ""))
            blank.result = ScoreResult.unscored(blank.sample.run_id, scorer.name, "invalid_run",
                                                f"invalid run: {error}")
            items.append(blank)

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


def _call(scorer: Recipe, item: _Item, where: str, hook: Any, *args: Any, raw: str | None = None) -> Any:
    """A user's hook on one item (awaited, if async): its value; or, if it raised, `_FAILED` with
    the item unscored (``step_error``; ``unscorable`` for `UnscorableError`) naming `where`."""
    try:
        return resolve(hook(*args))
    except (Exception, SystemExit) as error:  # noqa: BLE001 - user code: this item only, never the batch (sys.exit too)
        item.result = _unscored(scorer, item, failure_of(error), raw, where)
        return _FAILED


def _shortcuts(scorer: Recipe, items: list[_Item]) -> None:
    for item in items:
        if item.result is not None:
            continue
        decided = _call(scorer, item, "shortcut", scorer.shortcut, item.sample, item.results)
        if decided is _FAILED or decided is None:
            continue
        if (not isinstance(decided, (tuple, list)) or len(decided) != 2
                or not scorer.compat.accepts(decided[0], "fraction") or not isinstance(decided[1], (str, type(None)))):
            why = Failure("step_error", f"gave {_shown(decided)}, not None or (fraction in [0, 1], reason text)")
            item.result = _unscored(scorer, item, why, None, "shortcut")
            continue
        fraction, reason = decided  # decided by rule: certain, so prob_score = score
        score = scorer.compat.score(fraction, scorer.scale)
        item.result = replace(
            _result(scorer, item, score, reason, prob=False),
            prob_score=score if scorer.compat.mastra else round_half_up(fraction * scorer.scale, 4),
        )


def _shown(value: Any) -> str:
    """A user's bad value in an error message: its type and the start of its repr, on one line."""
    text = " ".join(reprlib.repr(value).split())
    return f"{type(value).__name__} {text}"


def _run_step(scorer: Recipe, name: str, step: Step, items: list[_Item]) -> Steps:
    """One step for `items`: one judge call (plus retry) or the function per item."""
    if not isinstance(step, JudgeStep):
        for item in items:
            if (value := _call(scorer, item, f"{name} step", step, item.sample, item.results)) is not _FAILED:
                _keep(scorer, item, name, value)
        return
    if step.by_rule is not None:
        items = _by_rule(scorer, name, step.by_rule, items)
    answered, failed = yield from _ask(scorer, name, step, items)
    for item, why in failed:
        item.result = _unscored(scorer, item, why, None, f"{name} step")
    for item, answer, out in answered:
        if isinstance(answer, Failure):
            item.result = _unscored(scorer, item, answer, out.text, f"{name} step")
            continue
        if (copied := copied_text(answer, step.examples, item.sample)) is not None:
            why = Failure("copied_example", f"the judge copied the worked example: {copied!r}")
            item.result = _unscored(scorer, item, why, out.text, f"{name} step")
            continue
        value = _call(scorer, item, f"{name} step", step.finish, item.sample, item.results, answer, raw=out.text)
        if value is not _FAILED:  # UnscorableError, or a user's finish, fails this item only
            _keep(scorer, item, name, value, out.text)


def _keep(scorer: Recipe, item: _Item, name: str, value: Any, raw: str | None = None) -> None:
    """A step's result kept for the next steps, if JSON can hold it (else the item is a
    ``step_error`` naming the step and the type); or, for Mastra's `not_scorable(reason)`, the
    run ended: not scorable, no later step (no judge call) for it."""
    if isinstance(value, NotScorable):
        why = Failure("not_scorable", "not scorable" + (f": {value.reason}" if value.reason else ""))
        item.result = _unscored(scorer, item, why, raw, f"{name} step")
    elif (problem := json_problem(value)) is not None:
        why = Failure("step_error", f"gave {problem}, which JSON cannot hold (step results are stored as JSON)")
        item.result = _unscored(scorer, item, why, raw, f"{name} step")
    else:
        item.results[f"{name}_step_result"] = value


def _by_rule(scorer: Recipe, name: str, rule: StepFunction, items: list[_Item]) -> list[_Item]:
    """Give the items the step's rule decides their result; return the rest (for the judge)."""
    rest = []
    for item in items:
        decided = _call(scorer, item, f"{name} step", rule, item.sample, item.results)
        if decided is None:
            rest.append(item)
        elif decided is not _FAILED:
            _keep(scorer, item, name, decided)
    return rest


def _ask(scorer: Recipe, name: str, step: JudgeStep,
         items: list[_Item]) -> Generator[Ask, list[Generation], tuple[list[Answer], list[tuple[_Item, Failure]]]]:
    """Render, one judge call for all items (one retry call for cut-off answers), parse; a split
    step's parts (`JudgeStep.split`) all in that call, their answers joined per item.
    Returns the answers (parsed data, or a `Failure`) and the items whose prompt or schema
    could not be made, with why."""
    asked: list[tuple[_Item, list[tuple[type[BaseModel], ChatPrompt]]]] = []
    failed: list[tuple[_Item, Failure]] = []
    budgets: list[int] = []
    for item in items:
        rendered = _render(scorer, step, item)
        if isinstance(rendered, Failure):
            failed.append((item, rendered))
            continue
        budgets += [token_budget(schema) for schema, _ in rendered]
        item.prompts[name] = _shown_parts([text for _, text in rendered])
        asked.append((item, [(schema, chat(step.instructions or scorer.instructions, text, step.examples))
                             for schema, text in rendered]))
    if not asked:
        return [], failed
    judge = step.judge or scorer.judge
    assert judge is not None  # batch_steps checked it
    prompts = [prompt for _, parts in asked for _, prompt in parts]
    schemas = [schema for _, parts in asked for schema, _ in parts]
    budget = max(budgets)
    outputs = list((yield Ask(judge, prompts, schemas, budget)))
    parsed = [parse_answer(out, schema) for out, schema in zip(outputs, schemas, strict=True)]
    # A constrained answer fails only by being cut off: retry those once, with more room.
    retry = [i for i, p in enumerate(parsed) if isinstance(p, Failure) and not outputs[i].finished]
    if retry:
        log.info("%s/%s: retrying %d cut-off item(s) with twice the budget", scorer.name, name, len(retry))
        again = yield Ask(judge, [prompts[i] for i in retry], [schemas[i] for i in retry], 2 * budget)
        for i, out in zip(retry, again, strict=True):
            outputs[i] = replace(out, new_tokens=outputs[i].new_tokens + out.new_tokens)
            parsed[i] = parse_answer(out, schemas[i])
    answers: list[Answer] = []
    start = 0
    for item, parts in asked:
        end = start + len(parts)
        answer, out = _joined(scorer, step, item, parsed[start:end], outputs[start:end])
        start = end
        item.new_tokens += out.new_tokens
        item.label_probs[name] = out.label_probs
        answers.append((item, answer, out))
    return answers, failed


def _render(scorer: Recipe, step: JudgeStep, item: _Item) -> list[tuple[type[BaseModel], str]] | Failure:
    """The (schema, user message) of each of the item's prompts for `step`: one, or one per part
    of a split step; or why they could not be made (a user's hook failed or gave a bad value)."""
    try:  # UnscorableError, or a user's split, prompt or schema function: this item only
        parts = [item.results] if step.split is None else step.split(item.sample, item.results)
        if not isinstance(parts, (list, tuple)) or not parts:
            return Failure("step_error", f"the split function gave {_shown(parts)}, not a non-empty list of parts")
        if len(parts) > step.max_parts:
            return Failure("unscorable", f"this run needs {len(parts)} prompts (its items asked in parts), over the "
                                         f"step's max_parts of {step.max_parts}: too long to judge")
        if step.split is not None:
            parts = [{**item.results, "part": part} for part in parts]
        made = [(step.schema_for(item.sample, results), step.prompt(item.sample, results)) for results in parts]
    except (Exception, SystemExit) as error:  # noqa: BLE001 - user code (sys.exit too)
        return failure_of(error)
    for schema, text in made:
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):  # else the whole call would fail
            return Failure("step_error", f"the schema function gave {_shown(schema)}, not a pydantic model class")
        try:
            token_budget(schema)
        except ValueError as error:  # an unbounded string or list: no budget, so no call for it
            return Failure("step_error", f"schema {schema.__name__}: {error}")
        if not isinstance(text, str):
            return Failure("step_error", f"the prompt function gave {_shown(text)}, not text")
    return made


def _shown_parts(texts: list[str]) -> str:
    """The prompt kept in the result: the one text, or each part's under a ``[part k of n]`` line."""
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(f"[part {k} of {len(texts)}]\n{text}" for k, text in enumerate(texts, 1))


def _joined(scorer: Recipe, step: JudgeStep, item: _Item, parsed: list[dict[str, Any] | Failure],
            outputs: list[Generation]) -> tuple[dict[str, Any] | Failure, Generation]:
    """One item's answer and raw output from its parts': the one part's as they are; else the
    first bad part's (naming it), or the answers joined by `step.join` with the outputs as one
    (texts a line each, tokens added, label probabilities in part order)."""
    if len(parsed) == 1:
        return parsed[0], outputs[0]
    answers = []
    for k, (answer, out) in enumerate(zip(parsed, outputs, strict=True), 1):
        if isinstance(answer, Failure):
            return Failure(answer.kind, f"part {k} of {len(parsed)}: {answer.message}"), out
        answers.append(answer)
    out = Generation("\n".join(o.text for o in outputs), finished=all(o.finished for o in outputs),
                     new_tokens=sum(o.new_tokens for o in outputs),
                     label_probs=tuple(p for o in outputs for p in o.label_probs))
    try:  # UnscorableError (parts that contradict each other), or a user's join: this item only
        joined = resolve(step.join(item.sample, item.results, answers))
    except (Exception, SystemExit) as error:  # noqa: BLE001 - user code (sys.exit too)
        return failure_of(error), out
    if not isinstance(joined, dict):
        return Failure("step_error", f"the join function gave {_shown(joined)}, not a dict"), out
    return joined, out


def chat(system: str, user: str, examples: Sequence[tuple[str, str]] = ()) -> ChatPrompt:
    """The chat a judge step sends: system message, worked examples as turns, the rendered prompt."""
    messages = [{"role": "system", "content": system}]
    for example_user, example_answer in examples:
        messages += [{"role": "user", "content": example_user}, {"role": "assistant", "content": example_answer}]
    return messages + [{"role": "user", "content": user}]


def _score(scorer: Recipe, items: list[_Item]) -> Steps:
    step = scorer.score_step
    if isinstance(step, JudgeStep):  # Mastra's prompt object: the judge writes {"score": x}, one call a batch
        yield from _run_step(scorer, "score", _bounded(scorer, step), items)
    for item in items:
        if item.result is not None:
            continue
        value = (_call(scorer, item, "score", _judged, item.results["score_step_result"]) if isinstance(step, JudgeStep)
                 else _call(scorer, item, "score", step, item.sample, item.results))  # UnscorableError, or a formula
        if value is _FAILED:
            continue
        if isinstance(value, NotScorable):
            _keep(scorer, item, "score", value)
            continue
        if not scorer.compat.accepts(value, scorer.score_returns):
            want = "a fraction in [0, 1]" if scorer.score_returns == "fraction" else "a finite number (the score)"
            why = Failure("step_error", f"generate_score gave {_shown(value)}, not {want}")
            item.result = _unscored(scorer, item, why, None, "score")
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


def _reason(scorer: Recipe, items: list[_Item]) -> Steps:
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
                    _keep(scorer, item, "reason", value)
                reasons[id(item)] = (reason_text(value), None)
            except (Exception, SystemExit) as error:  # noqa: BLE001 - user code: no reason, still scored (sys.exit too)
                reasons[id(item)] = (f"[no reason: {type(error).__name__}: {error}]", None)
    else:
        answered, failed = yield from _ask(scorer, "reason", step, items)
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
            item.result = _result(scorer, item, item.score, reason, raw=raw)  # type: ignore[arg-type]


def _prob_score(scorer: Recipe, item: _Item) -> Any:
    """The score from label probabilities, read as `score_returns` says (a fraction times the
    scale, or the score itself): None without a `prob_score` function or probabilities; `_FAILED`
    (the item unscored) when the user's function raised or gave no finite number."""
    if scorer.prob_score_fn is None or not item.label_probs.get("analyze"):
        return None
    value = _call(scorer, item, "prob_score", scorer.prob_score_fn, item.results, item.label_probs)
    if value is None or value is _FAILED:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        item.result = _unscored(scorer, item, Failure("step_error", f"gave {_shown(value)}, not a number or None"),
                                None, "prob_score")
        return _FAILED
    return round_half_up(value * scorer.scale if scorer.score_returns == "fraction" else value, 4)


def _result(scorer: Recipe, item: _Item, score: float, reason: str | None, raw: str | None = None,
            prob: bool = True) -> ScoreResult:
    """The scored result (without `prob`, no prob_score: the caller sets it); the item's unscored
    one if its `prob_score` function failed."""
    prob_score = _prob_score(scorer, item) if prob and "analyze_step_result" in item.results else None
    if prob_score is _FAILED:
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


def _unscored(scorer: Recipe, item: _Item, why: Failure, raw: str | None, where: str) -> ScoreResult:
    return ScoreResult.unscored(
        item.sample.run_id, scorer.name, why.kind, f"{where}: {why.message}",
        preprocess_step_result=item.results.get("preprocess_step_result"),
        preprocess_prompt=item.prompts.get("preprocess"),
        analyze_step_result=item.results.get("analyze_step_result"),
        analyze_prompt=item.prompts.get("analyze"),
        raw_output=raw,
        new_tokens=item.new_tokens,
    )
