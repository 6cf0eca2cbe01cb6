"""The step engine: a scorer declares its LLM steps; the engine runs them a batch at a time.

For a batch of runs the engine renders each step's prompt for every item still in play, makes
exactly one judge call per step (plus one retry call for the items whose JSON was cut off or
did not parse), validates each answer against its schema, computes the score with the
scorer's pure function, and asks for a reason. An item whose answer is still bad after the
retry is recorded as unscored with the error and raw text; the rest of the batch goes on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal, Union

from pydantic import BaseModel, ValidationError

from localjudge.judge import ChatPrompt, Generation, Judge
from localjudge.result import ScoreResult
from localjudge.runs import InvalidRunError, Sample, context_of, run_id_of, to_sample
from localjudge.schemas import Reason, token_budget
from localjudge.versioning import prompt_hash

log = logging.getLogger(__name__)

State = dict[str, Any]  # step name -> that step's output as plain data
Shortcut = tuple[float, str]  # (fraction of scale, reason): decided without the judge
ContextArg = Union[str, Sequence[str], None]

REASON_SYSTEM = (
    "You explain an evaluation score in one or two plain sentences. Base the explanation only "
    "on the score and the verdicts given. Do not repeat the instructions."
)


class UnscorableError(ValueError):
    """The judge's answers are inconsistent (for example a verdict count that does not match)."""


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


@dataclass(frozen=True)
class LLMStep:
    """One judge prompt of a scorer.

    Attributes:
        system: The system message: the instructions.
        examples: Worked examples as earlier chat turns (user message, assistant JSON), so
            they stay apart from the text to judge.
        render: Builds the user message from the sample and the earlier steps' outputs.
        schema: The answer's schema, or a function choosing it per item (exact verdict counts).
        finish: Turns the parsed answer into the step result kept in the state; may raise
            `UnscorableError` when the answer is inconsistent with earlier steps.
    """

    system: str
    render: Callable[[Sample, State], str]
    schema: Union[type[BaseModel], Callable[[Sample, State], type[BaseModel]]]
    examples: tuple[tuple[str, str], ...] = ()
    finish: Callable[[Sample, State, dict[str, Any]], Any] = lambda s, st, parsed: parsed

    def schema_for(self, sample: Sample, state: State) -> type[BaseModel]:
        if isinstance(self.schema, type) and issubclass(self.schema, BaseModel):
            return self.schema
        return self.schema(sample, state)  # type: ignore[call-arg,operator]


@dataclass
class _Item:
    """Working state of one run inside `Scorer.run_batch`."""

    sample: Sample
    state: State = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    label_probs: dict[str, tuple[dict[str, float], ...]] = field(default_factory=dict)
    new_tokens: int = 0
    result: ScoreResult | None = None


@dataclass(frozen=True)
class Scorer:
    """A judge scorer: preprocess and analyze LLM steps, a pure score, and a reason step.

    Build one with a factory such as `localjudge.hallucination_scorer`; call `run` or
    `run_batch`. Results are values; the scorer keeps no state between calls.

    Attributes:
        name: Registry name, e.g. ``"hallucination"``.
        version: A readable label for the prompts (``"toxicity-v1"``), shown in reports. Result
            keys do not rely on it: they hold `prompt_hash`, which changes by itself with any
            edit to a prompt, example, schema or the score formula.
        judge: The model that answers the prompts.
        analyze: The step that produces verdicts.
        score_fn: Pure function of the state giving a fraction in [0, 1].
        reason_prompt: Renders the reason step's user message from sample, state and score.
        preprocess: Optional step before analyze (claim extraction).
        shortcut: Decides an item without the judge (empty output, no claims); called before
            each LLM step with the state so far.
        prob_score_fn: Optional score from label probabilities (same range as `score_fn`).
        scale: Scores lie in [0, scale].
        needs_context: Runs without context are rejected before any model call.
        context: Static context for every run; it replaces the run's own `context` field.
        get_context: Called once per run, before any judge call, as Mastra's hook is:
            ``get_context(run=run, results={}, step="analyze")`` (only the keywords it accepts;
            a one-argument function gets the run positionally); may be async. Its result takes
            precedence over `context` and the run's field.
        fallback_context: Where context comes from when none of the above gives any (the
            faithfulness scorer: the tool results in the run's output, as Mastra's).
        id: Mastra's scorer id, the key of `run_evals` results (default ``"<name>-scorer"``,
            as Mastra names its prebuilt scorers).
    """

    name: str
    version: str
    judge: Judge
    analyze: LLMStep
    score_fn: Callable[[State], float]
    reason_prompt: Callable[[Sample, State, float, float], str]
    preprocess: LLMStep | None = None
    shortcut: Callable[[Sample, State], Shortcut | None] = lambda sample, state: None
    prob_score_fn: Callable[[State, Mapping[str, Any]], float | None] | None = None
    scale: float = 1.0
    needs_context: bool = False
    context: ContextArg = None
    get_context: Callable[..., Any] | None = None
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None
    id: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_scale(self.scale))
        if not self.id:
            object.__setattr__(self, "id", f"{self.name}-scorer")

    @cached_property
    def prompt_hash(self) -> str:
        """Hash of what this scorer sends its judge and scores (see `localjudge.versioning`)."""
        return prompt_hash(self)

    @property
    def key(self) -> str:
        """Identity of this scorer's judgments: name, prompts (hashed), scale and judge."""
        return f"{self.name}/{self.version}@{self.prompt_hash}/scale={self.scale:g}/{self.judge.identity}"

    def with_judge(self, judge: Judge) -> "Scorer":
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
        """Score many runs with one judge call per step for the whole batch.

        Args:
            runs: The runs to score (or `Sample`s already made by `sample`, used as they are).
            on_invalid: ``"raise"`` rejects the batch (before any model call) if a run is
                structurally wrong; ``"record"`` records such runs as unscored instead.

        Returns:
            One result per run, in input order.
        """
        items: list[_Item] = []
        for index, run in enumerate(runs):
            try:
                items.append(_Item(run if isinstance(run, Sample) else self.sample(run)))
            except Exception as error:  # noqa: BLE001 - get_context is user code
                message = f"invalid run: {error}"
                if on_invalid == "raise":
                    raise InvalidRunError(f"run {index}: {error}") from error
                blank = _Item(Sample(run_id_of(run) if isinstance(run, Mapping) else None, "", ""))
                blank.result = ScoreResult(blank.sample.run_id, self.name, None, None, error=message)
                items.append(blank)

        for name, step in (("preprocess", self.preprocess), ("analyze", self.analyze)):
            if step is not None:
                self._shortcuts(items)
                self._step(name, step, [it for it in items if it.result is None])
        self._finish(items)
        return [item.result for item in items]  # type: ignore[misc]

    def _shortcuts(self, items: list[_Item]) -> None:
        for item in items:
            if item.result is None and (decided := self.shortcut(item.sample, item.state)):
                fraction, reason = decided  # decided by rule: certain, so prob_score = score
                item.result = replace(
                    self._result(item, fraction * self.scale, reason),
                    prob_score=round_half_up(fraction * self.scale, 4),
                )

    def _step(self, name: str, step: LLMStep, items: list[_Item]) -> None:
        """One judge call for `items` (plus one retry call for failures), parse, finish."""
        if not items:
            return
        schemas = [step.schema_for(it.sample, it.state) for it in items]
        prompts = []
        for item in items:
            item.prompts[name] = step.render(item.sample, item.state)
            prompts.append(_chat(step.system, item.prompts[name], step.examples))
        budget = max(token_budget(s) for s in schemas)
        outputs = self.judge.generate(prompts, schemas, max_new_tokens=budget)
        parsed = [_parse(out, schema) for out, schema in zip(outputs, schemas)]

        # A constrained answer fails only by being cut off: retry those once, with more room.
        retry = [i for i, p in enumerate(parsed) if isinstance(p, str) and not outputs[i].finished]
        if retry:
            log.info("%s/%s: retrying %d cut-off item(s) with twice the budget", self.name, name, len(retry))
            again = self.judge.generate(
                [prompts[i] for i in retry], [schemas[i] for i in retry], max_new_tokens=2 * budget
            )
            for i, out in zip(retry, again):
                outputs[i] = replace(out, new_tokens=outputs[i].new_tokens + out.new_tokens)
                parsed[i] = _parse(out, schemas[i])

        for item, out, answer in zip(items, outputs, parsed):
            item.new_tokens += out.new_tokens
            item.label_probs[name] = out.label_probs
            if isinstance(answer, str):
                item.result = self._unscored(item, f"{name} step: {answer}", out.text)
                continue
            try:
                item.state[name] = step.finish(item.sample, item.state, answer)
            except UnscorableError as error:
                item.result = self._unscored(item, f"{name} step: {error}", out.text)

    def _finish(self, items: list[_Item]) -> None:
        """Score every item still in play, then one reason call for all of them."""
        todo: list[tuple[_Item, float]] = []
        for item in items:
            if item.result is not None:
                continue
            try:
                fraction = self.score_fn(item.state)
            except UnscorableError as error:
                item.result = self._unscored(item, f"score: {error}", None)
                continue
            todo.append((item, round_half_up(fraction * self.scale)))
        if not todo:
            return
        prompts = []
        for item, score in todo:
            item.prompts["reason"] = self.reason_prompt(item.sample, item.state, score, self.scale)
            prompts.append(_chat(REASON_SYSTEM, item.prompts["reason"]))
        budget = token_budget(Reason)
        outputs = self.judge.generate(prompts, [Reason] * len(prompts), max_new_tokens=budget)
        for (item, score), out in zip(todo, outputs):
            item.new_tokens += out.new_tokens
            answer = _parse(out, Reason)
            reason = answer["reason"] if isinstance(answer, dict) else f"[no reason: {answer}]"
            item.result = self._result(item, score, reason, raw=None if isinstance(answer, dict) else out.text)

    def _prob_score(self, item: _Item) -> float | None:
        if self.prob_score_fn is None or not item.label_probs.get("analyze"):
            return None
        fraction = self.prob_score_fn(item.state, item.label_probs)
        return None if fraction is None else round_half_up(fraction * self.scale, 4)

    def _result(self, item: _Item, score: float, reason: str, raw: str | None = None) -> ScoreResult:
        return ScoreResult(
            run_id=item.sample.run_id,
            scorer=self.name,
            score=round_half_up(score),
            reason=reason,
            preprocess_step_result=item.state.get("preprocess"),
            preprocess_prompt=item.prompts.get("preprocess"),
            analyze_step_result=item.state.get("analyze"),
            analyze_prompt=item.prompts.get("analyze"),
            generate_reason_prompt=item.prompts.get("reason"),
            prob_score=self._prob_score(item) if "analyze" in item.state else None,
            raw_output=raw,
            new_tokens=item.new_tokens,
        )

    def _unscored(self, item: _Item, error: str, raw: str | None) -> ScoreResult:
        return ScoreResult(
            run_id=item.sample.run_id,
            scorer=self.name,
            score=None,
            reason=None,
            preprocess_step_result=item.state.get("preprocess"),
            preprocess_prompt=item.prompts.get("preprocess"),
            analyze_step_result=item.state.get("analyze"),
            analyze_prompt=item.prompts.get("analyze"),
            error=error,
            raw_output=raw,
            new_tokens=item.new_tokens,
        )


def call_get_context(get_context: Callable[..., Any], run: Mapping[str, Any]) -> ContextArg:
    """Call a user's context hook Mastra's way (keywords `run`, `results`, `step`, as many as it
    takes) or with the run alone; await it if it is async."""
    try:
        params = inspect.signature(get_context).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no signature to read
        params = {}
    offered = {"run": run, "results": {}, "step": "analyze"}
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    by_name = {k: v for k, v in offered.items() if k in params and params[k].kind in _KEYWORD}
    value = get_context(**(offered if takes_all else by_name)) if takes_all or "run" in by_name else get_context(run)
    return resolve(value)  # type: ignore[no-any-return]


_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def resolve(value: Any) -> Any:
    """`value`, or its result if it is awaitable (a user's async hook called from sync code; in
    a worker thread when an event loop is already running in this one)."""
    if not inspect.isawaitable(value):
        return value

    async def wait() -> Any:
        return await value

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, wait()).result()


def _chat(system: str, user: str, examples: Sequence[tuple[str, str]] = ()) -> ChatPrompt:
    chat = [{"role": "system", "content": system}]
    for example_user, example_answer in examples:
        chat += [{"role": "user", "content": example_user}, {"role": "assistant", "content": example_answer}]
    return chat + [{"role": "user", "content": user}]


def _parse(output: Generation, schema: type[BaseModel]) -> dict[str, Any] | str:
    """The validated answer as plain data, or a one-line error message."""
    if output.error is not None:
        return output.error
    try:
        return schema.model_validate_json(output.text).model_dump()
    except ValidationError as error:
        cut = "" if output.finished else " (cut off at the token limit)"
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "document"
        return f"invalid JSON{cut}: {where}: {first.get('msg', 'invalid')}"
