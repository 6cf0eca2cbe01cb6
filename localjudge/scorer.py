"""The step engine: a scorer declares its steps; the engine runs them a batch at a time.

A scorer is Mastra's pipeline: optional `preprocess` and `analyze` steps, `generate_score`, and
an optional `generate_reason`, each a `JudgeStep` or a plain function (see `localjudge.steps`).
Build one with `create_scorer(...).preprocess(...).analyze(...).generate_score(...)`; the
built-in scorers are written that way.

For a batch of runs the engine renders a judge step's prompt for every item still in play,
makes exactly one judge call for the step (plus one retry call for the items whose JSON was cut
off), validates each answer against its schema, and goes on to the next step. A function step
runs per item. An item whose answer is still bad, or whose step raised, is recorded as unscored
with the error (and raw text); the rest of the batch goes on.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

from localjudge.copying import copied_text
from localjudge.judge import ChatPrompt, Generation, Judge
from localjudge.repetition import drop_repeats
from localjudge.result import ErrorKind, ScoreResult
from localjudge.runs import InvalidRunError, Sample, context_of, run_id_of, to_sample
from localjudge.schemas import token_budget
from localjudge.steps import (
    ContextArg,
    JudgeStep,
    Results,
    Shortcut,
    Step,
    StepFunction,
    UnscorableError,
    call_get_context,
)
from localjudge.versioning import probe, prompt_hash, shown_fields

log = logging.getLogger(__name__)



class Failure(NamedTuple):
    """Why an item got no usable answer from a step: kind and message."""

    kind: ErrorKind
    message: str


Answer = tuple["_Item", "dict[str, Any] | Failure", Generation]  # an item, its parsed answer, the raw output
STEPS = ("preprocess", "analyze")  # the steps before the score, in order


def round_half_up(value: float, places: int = 2) -> float:
    """Round to `places` decimals, halves away from zero (0.125 -> 0.13, unlike `round`)."""
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def check_scale(scale: float) -> float:
    """Return `scale` as a float, or raise if it is not a finite positive number."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite positive number, got {scale!r}")
    return float(scale)


@dataclass
class _Item:
    """Working state of one run inside `Scorer.run_batch`."""

    sample: Sample
    results: Results = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    label_probs: dict[str, tuple[dict[str, float], ...]] = field(default_factory=dict)
    new_tokens: int = 0
    score: float | None = None
    result: ScoreResult | None = None


def _no_shortcut(run: Sample, results: Results) -> Shortcut | None:
    return None


@dataclass(frozen=True)
class Scorer:
    """A judge scorer: steps, a score, a reason. Build it with `create_scorer`; call `run` or
    `run_batch`. Results are values; the scorer keeps no state between calls.

    Attributes:
        name: Registry name and column prefix, e.g. ``"hallucination"``.
        judge: The model that answers judge steps (a step may carry its own).
        version: A readable label for the prompts (``"toxicity-v3"``), shown in reports. Result
            keys do not rely on it: they hold `prompt_hash`, which changes by itself with any
            edit to a prompt, example, schema or the score formula.
        instructions: System message of judge steps that give none of their own.
        preprocess_step, analyze_step: Optional steps, run in that order.
        score_step: ``(run, results) -> fraction in [0, 1]``; the score is fraction x scale.
        reason_step: Optional: ``(run, results) -> str``, or a judge step whose result (or its
            ``"reason"`` field) is the reason; `results` then also holds ``"score"``.
        shortcut: Decides an item without the judge (empty output, no claims): called before
            each step with the results so far, returns (fraction, reason) or None.
        prob_score_fn: Optional score from label probabilities (same range as the score).
        scale: Scores lie in [0, scale].
        needs_context: Runs without context are rejected before any model call.
        context: Static context for every run; it replaces the run's own `context` field.
        get_context: Called once per run, before any judge call, as Mastra's hook is:
            ``get_context(run=run, results={}, step="analyze")`` (only the keywords it accepts;
            a one-argument function gets the run positionally); may be async. Its result takes
            precedence over `context` and the run's field.
        fallback_context: Where context comes from when none of the above gives any (the
            faithfulness scorer: the tool results in the run's output, as Mastra's).
        id: Mastra's scorer id, the key of `run_evals` results (default ``"<name>-scorer"``).
        description: What it measures, for people.
        positive: What a high score (label 1 in a benchmark) means: ``"hallucinated"``.
        higher_is_better: The score's direction (None: neither, a neutral measure). Benchmarks
            read `positive`; baselines and "steered" checks read the direction.
    """

    name: str
    judge: Judge | None = None
    version: str = "v1"
    instructions: str = ""
    preprocess_step: Step | None = None
    analyze_step: Step | None = None
    score_step: Callable[[Sample, Results], float] | None = None
    reason_step: Step | None = None
    shortcut: Callable[[Sample, Results], Shortcut | None] = _no_shortcut
    prob_score_fn: Callable[[Results, Mapping[str, Any]], float | None] | None = None
    scale: float = 1.0
    needs_context: bool = False
    context: ContextArg = None
    get_context: Callable[..., Any] | None = None
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None
    id: str = ""
    description: str = ""
    positive: str = "positive"
    higher_is_better: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_scale(self.scale))
        if not self.id:
            object.__setattr__(self, "id", f"{self.name}-scorer")

    # Mastra's builder: each returns a new scorer with that step set.
    def preprocess(self, step: Step) -> Scorer:
        """The step before analyze (claim extraction, say)."""
        return replace(self, preprocess_step=step)

    def analyze(self, step: Step) -> Scorer:
        """The step that produces verdicts."""
        return replace(self, analyze_step=step)

    def generate_score(self, step: Callable[[Sample, Results], float]) -> Scorer:
        """The score: a function of (run, results) giving a fraction in [0, 1]."""
        return replace(self, score_step=step)

    def generate_reason(self, step: Step) -> Scorer:
        """The reason: a function of (run, results) or a judge step; results hold ``score``."""
        return replace(self, reason_step=step)

    @cached_property
    def prompt_hash(self) -> str:
        """Hash of what this scorer sends its judge and scores (see `localjudge.versioning`)."""
        return prompt_hash(self._probe)

    @cached_property
    def shown_fields(self) -> frozenset[str]:
        """The run fields (of input, output, context) its prompts show the judge, read off the
        probe run (see `localjudge.versioning`), so it cannot go stale."""
        return shown_fields(self._probe)

    @cached_property
    def _probe(self) -> tuple[list[Any], Any]:
        """This scorer run once on the probe run: read by `prompt_hash` and `shown_fields`."""
        return probe(self)

    @property
    def key(self) -> str:
        """Identity of this scorer's judgments: name, prompts (hashed), scale and judge(s)."""
        judges = [self.judge] + [getattr(s, "judge", None) for s in self._steps()]
        names = sorted({j.identity for j in judges if j is not None})
        return f"{self.name}/{self.version}@{self.prompt_hash}/scale={self.scale:g}/{'+'.join(names)}"

    def _steps(self) -> list[Step]:
        return [s for s in (self.preprocess_step, self.analyze_step, self.reason_step) if s is not None]

    def with_judge(self, judge: Judge) -> Scorer:
        """The same scorer on another judge."""
        return replace(self, judge=judge)

    def run(self, run: Mapping[str, Any]) -> ScoreResult:
        """Score one run (`input`, `output`, optional `context`, `run_id`)."""
        return self.run_batch([run])[0]

    def sample(self, run: Mapping[str, Any]) -> Sample:
        """Normalise a run for this scorer; raises `InvalidRunError` when it cannot be judged."""
        context = call_get_context(self.get_context, run) if self.get_context is not None else None
        if context is None:
            context = self.context
        sample = to_sample(run, context=context)
        if not sample.context and self.fallback_context is not None:
            sample = replace(sample, context=context_of(self.fallback_context(run)) or None)
        if self.needs_context and not sample.context:
            also = " (or tool results in its output)" if self.fallback_context is not None else ""
            raise InvalidRunError(
                f"{self.name} needs context: give the run a non-empty 'context'{also}, "
                "or build the scorer with context= or get_context="
            )
        return sample

    def run_batch(
        self,
        runs: Sequence[Mapping[str, Any] | Sample],
        *,
        on_invalid: Literal["raise", "record"] = "raise",
    ) -> list[ScoreResult]:
        """Score many runs with one judge call per judge step for the whole batch.

        Args:
            runs: The runs to score (or `Sample`s already made by `sample`, used as they are).
            on_invalid: ``"raise"`` rejects the batch (before any model call) if a run is
                structurally wrong; ``"record"`` records such runs as unscored instead.

        Returns:
            One result per run, in input order.
        """
        if self.score_step is None:
            raise ValueError(f"scorer {self.name!r} has no generate_score step")
        missing = [s for s in self._steps() if isinstance(s, JudgeStep) and s.judge is None and self.judge is None]
        if missing:
            raise ValueError(f"scorer {self.name!r} has judge steps but no judge: create_scorer(..., judge=...)")
        items: list[_Item] = []
        for index, run in enumerate(runs):
            try:
                items.append(_Item(run if isinstance(run, Sample) else self.sample(run)))
            except Exception as error:  # noqa: BLE001 - get_context is user code
                if on_invalid == "raise":
                    raise InvalidRunError(f"run {index}: {error}") from error
                blank = _Item(Sample(run_id_of(run) if isinstance(run, Mapping) else None, "", ""))
                blank.result = ScoreResult(blank.sample.run_id, self.name, None, None, error=f"invalid run: {error}",
                                           error_kind="invalid_run")
                items.append(blank)

        for name in STEPS:
            step = getattr(self, f"{name}_step")
            if step is not None:
                self._shortcuts(items)
                self._run_step(name, step, [it for it in items if it.result is None])
        self._shortcuts(items)
        self._score([it for it in items if it.result is None])
        self._reason([it for it in items if it.result is None])
        return [item.result for item in items]  # type: ignore[misc]

    def _shortcuts(self, items: list[_Item]) -> None:
        for item in items:
            if item.result is None and (decided := self.shortcut(item.sample, item.results)):
                fraction, reason = decided  # decided by rule: certain, so prob_score = score
                item.result = replace(
                    self._result(item, round_half_up(fraction * self.scale), reason),
                    prob_score=round_half_up(fraction * self.scale, 4),
                )

    def _run_step(self, name: str, step: Step, items: list[_Item]) -> None:
        """One step for `items`: one judge call (plus retry) or the function per item."""
        if not isinstance(step, JudgeStep):
            for item in items:
                try:
                    item.results[f"{name}_step_result"] = step(item.sample, item.results)
                except Exception as error:  # noqa: BLE001 - user code: this item only
                    item.result = self._unscored(item, _failure(error), None, f"{name} step")
            return
        if step.by_rule is not None:
            items = self._by_rule(name, step.by_rule, items)
        answered, failed = self._ask(name, step, items)
        for item, why in failed:
            item.result = self._unscored(item, why, None, f"{name} step")
        for item, answer, out in answered:
            if isinstance(answer, Failure):
                item.result = self._unscored(item, answer, out.text, f"{name} step")
                continue
            if (copied := copied_text(answer, step.examples, item.sample)) is not None:
                why = Failure("copied_example", f"the judge copied the worked example: {copied!r}")
                item.result = self._unscored(item, why, out.text, f"{name} step")
                continue
            try:
                item.results[f"{name}_step_result"] = step.finish(item.sample, item.results, answer)
            except Exception as error:  # noqa: BLE001 - UnscorableError, or a user's finish: this item only
                item.result = self._unscored(item, _failure(error), out.text, f"{name} step")

    def _by_rule(self, name: str, rule: StepFunction, items: list[_Item]) -> list[_Item]:
        """Give the items the step's rule decides their result; return the rest (for the judge)."""
        rest = []
        for item in items:
            try:
                decided = rule(item.sample, item.results)
            except Exception as error:  # noqa: BLE001 - a user's rule: this item only
                item.result = self._unscored(item, _failure(error), None, f"{name} step")
                continue
            if decided is None:
                rest.append(item)
            else:
                item.results[f"{name}_step_result"] = decided
        return rest

    def _ask(self, name: str, step: JudgeStep, items: list[_Item]) -> tuple[list[Answer], list[tuple[_Item, Failure]]]:
        """Render, one judge call for all items (one retry call for cut-off answers), parse.
        Returns the answers (parsed data, or a `Failure`) and the items whose prompt or schema
        could not be made, with why."""
        asked: list[tuple[_Item, type[BaseModel], ChatPrompt]] = []
        failed: list[tuple[_Item, Failure]] = []
        for item in items:
            try:
                schema = step.schema_for(item.sample, item.results)
                item.prompts[name] = step.prompt(item.sample, item.results)
            except Exception as error:  # noqa: BLE001 - UnscorableError, or a user's prompt function
                failed.append((item, _failure(error)))
                continue
            chat = _chat(step.instructions or self.instructions, item.prompts[name], step.examples)
            asked.append((item, schema, chat))
        if not asked:
            return [], failed
        judge = step.judge or self.judge
        prompts, schemas = [p for _, _, p in asked], [s for _, s, _ in asked]
        budget = max(token_budget(s) for s in schemas)
        outputs = judge.generate(prompts, schemas, max_new_tokens=budget)  # type: ignore[union-attr]
        parsed = [_parse(out, schema) for out, schema in zip(outputs, schemas, strict=True)]
        # A constrained answer fails only by being cut off: retry those once, with more room.
        retry = [i for i, p in enumerate(parsed) if isinstance(p, Failure) and not outputs[i].finished]
        if retry:
            log.info("%s/%s: retrying %d cut-off item(s) with twice the budget", self.name, name, len(retry))
            again = judge.generate(  # type: ignore[union-attr]
                [prompts[i] for i in retry], [schemas[i] for i in retry], max_new_tokens=2 * budget
            )
            for i, out in zip(retry, again, strict=True):
                outputs[i] = replace(out, new_tokens=outputs[i].new_tokens + out.new_tokens)
                parsed[i] = _parse(out, schemas[i])
        for (item, _, _), out in zip(asked, outputs, strict=True):
            item.new_tokens += out.new_tokens
            item.label_probs[name] = out.label_probs
        return [(item, answer, out) for (item, _, _), answer, out in zip(asked, parsed, outputs, strict=True)], failed

    def _score(self, items: list[_Item]) -> None:
        for item in items:
            try:
                fraction = self.score_step(item.sample, item.results)  # type: ignore[misc]
            except Exception as error:  # noqa: BLE001 - UnscorableError, or a user's formula
                item.result = self._unscored(item, _failure(error), None, "score")
                continue
            if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 <= fraction <= 1:
                why = Failure("step_error", f"generate_score gave {fraction!r}, not a fraction in [0, 1]")
                item.result = self._unscored(item, why, None, "score")
                continue
            item.score = round_half_up(fraction * self.scale)

    def _reason(self, items: list[_Item]) -> None:
        """The reason for every scored item (one judge call for all, for a judge step)."""
        for item in items:
            item.results["score"] = item.score
        step = self.reason_step
        if step is None:
            reasons: dict[int, tuple[str | None, str | None]] = {id(it): (None, None) for it in items}
        elif not isinstance(step, JudgeStep):
            reasons = {}
            for item in items:
                try:
                    reasons[id(item)] = (_reason_text(step(item.sample, item.results)), None)
                except Exception as error:  # noqa: BLE001 - user code: no reason, still scored
                    reasons[id(item)] = (f"[no reason: {type(error).__name__}: {error}]", None)
        else:
            answered, failed = self._ask("reason", step, items)
            reasons = {id(item): (f"[no reason: {why.message}]", None) for item, why in failed}  # still scored
            for item, answer, out in answered:
                if isinstance(answer, Failure):
                    reasons[id(item)] = (f"[no reason: {answer.message}]", out.text)
                    continue
                if (copied := copied_text(answer, step.examples, item.sample)) is not None:
                    reasons[id(item)] = (f"[no reason: the judge copied the worked example: {copied!r}]", out.text)
                    continue
                try:
                    reasons[id(item)] = (_reason_text(step.finish(item.sample, item.results, answer)), None)
                except Exception as error:  # noqa: BLE001 - user code: no reason, still scored
                    reasons[id(item)] = (f"[no reason: {type(error).__name__}: {error}]", out.text)
        for item in items:
            del item.results["score"]
            reason, raw = reasons[id(item)]
            item.result = self._result(item, item.score, reason, raw=raw)  # type: ignore[arg-type]

    def _prob_score(self, item: _Item) -> float | None:
        if self.prob_score_fn is None or not item.label_probs.get("analyze"):
            return None
        fraction = self.prob_score_fn(item.results, item.label_probs)
        return None if fraction is None else round_half_up(fraction * self.scale, 4)

    def _result(self, item: _Item, score: float, reason: str | None, raw: str | None = None) -> ScoreResult:
        return ScoreResult(
            run_id=item.sample.run_id,
            scorer=self.name,
            score=score,
            reason=reason,
            preprocess_step_result=item.results.get("preprocess_step_result"),
            preprocess_prompt=item.prompts.get("preprocess"),
            analyze_step_result=item.results.get("analyze_step_result"),
            analyze_prompt=item.prompts.get("analyze"),
            generate_reason_prompt=item.prompts.get("reason"),
            prob_score=self._prob_score(item) if "analyze_step_result" in item.results else None,
            raw_output=raw,
            new_tokens=item.new_tokens,
        )

    def _unscored(self, item: _Item, why: Failure, raw: str | None, where: str) -> ScoreResult:
        return ScoreResult(
            run_id=item.sample.run_id,
            scorer=self.name,
            score=None,
            reason=None,
            preprocess_step_result=item.results.get("preprocess_step_result"),
            preprocess_prompt=item.prompts.get("preprocess"),
            analyze_step_result=item.results.get("analyze_step_result"),
            analyze_prompt=item.prompts.get("analyze"),
            error=f"{where}: {why.message}",
            error_kind=why.kind,
            raw_output=raw,
            new_tokens=item.new_tokens,
        )


def create_scorer(
    name: str,
    *,
    judge: Judge | None = None,
    instructions: str = "",
    description: str = "",
    version: str = "v1",
    scale: float = 1.0,
    id: str = "",
    needs_context: bool = False,
    context: ContextArg = None,
    get_context: Callable[..., Any] | None = None,
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None,
    shortcut: Callable[[Sample, Results], Shortcut | None] | None = None,
    prob_score: Callable[[Results, Mapping[str, Any]], float | None] | None = None,
    positive: str = "positive",
    higher_is_better: bool | None = None,
) -> Scorer:
    """Start a scorer, Mastra's way: ``create_scorer(...).preprocess(...).analyze(...)
    .generate_score(...).generate_reason(...)``; each step a function of (run, results) or a
    `JudgeStep` (see `localjudge.steps`). Only `generate_score` is required.

    Args:
        name: Registry name and column prefix (``<name>_score``...).
        judge: The model for judge steps (a step may name its own).
        instructions: System message of judge steps that give none.
        description: What it measures.
        version: A readable label for reports (result keys use `prompt_hash`).
        scale: Scores lie in [0, scale].
        id: Mastra's id (default ``"<name>-scorer"``).
        needs_context: Reject runs without context before any model call.
        context, get_context, fallback_context: Where context comes from (see `Scorer`).
        shortcut: A rule deciding a run without the judge: ``shortcut(run, results)`` returns
            (fraction, reason) or None; called before each step (an empty output, no claims).
        prob_score: A score from the label probabilities the backend measured at the analyze
            step's verdicts (see `Scorer.prob_score_fn`).
        positive, higher_is_better: What a high score means, and its direction (see `Scorer`).
    """
    return Scorer(name=name, judge=judge, instructions=instructions, description=description, version=version,
                  scale=scale, id=id, needs_context=needs_context, context=context, get_context=get_context,
                  fallback_context=fallback_context, shortcut=shortcut or _no_shortcut, prob_score_fn=prob_score,
                  positive=positive, higher_is_better=higher_is_better)


def _reason_text(value: Any) -> str:
    """A reason step's result as text: a string, or a mapping's ``"reason"`` string."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("reason"), str):
        return str(value["reason"])
    return f"[no reason: the reason step gave {type(value).__name__}, not text]"


def _chat(system: str, user: str, examples: Sequence[tuple[str, str]] = ()) -> ChatPrompt:
    chat = [{"role": "system", "content": system}]
    for example_user, example_answer in examples:
        chat += [{"role": "user", "content": example_user}, {"role": "assistant", "content": example_answer}]
    return chat + [{"role": "user", "content": user}]


def _failure(error: Exception) -> Failure:
    """A step's exception as a failure: `UnscorableError` says why in its own words; anything
    else is a bug in user code, named with its type."""
    if isinstance(error, UnscorableError):
        return Failure("unscorable", str(error))
    return Failure("step_error", f"{type(error).__name__}: {error}")


def _parse(output: Generation, schema: type[BaseModel]) -> dict[str, Any] | Failure:
    """The validated answer as plain data (a string's trailing repeats dropped: see
    `localjudge.repetition`), or why not."""
    if output.error is not None:
        return Failure(output.error_kind or "judge_failed", output.error)
    try:
        return drop_repeats(schema.model_validate_json(output.text).model_dump())
    except ValidationError as error:
        cut = "" if output.finished else " (cut off at the token limit)"
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "document"
        return Failure("invalid_output", f"invalid JSON{cut}: {where}: {first.get('msg', 'invalid')}")


__all__ = ["JudgeStep", "Scorer", "UnscorableError", "create_scorer", "round_half_up"]
