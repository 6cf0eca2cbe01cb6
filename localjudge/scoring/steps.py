"""The pieces a scorer is built from: judge steps, function steps, and calling users' hooks.

A step is either a `JudgeStep` (instructions, a prompt built from the run and the results so
far, and the schema its answer must follow: answered by the judge, a whole batch in one call,
constrained to the schema) or a plain function ``step(run, results) -> value``. `run` is the
`Sample` (the texts judged); `results` holds the earlier steps' results under Mastra's names,
``"preprocess_step_result"`` and ``"analyze_step_result"`` (and ``"score"`` for the reason step).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union, cast

from pydantic import BaseModel

from localjudge.samples import Sample
from localjudge.scoring.schemas import ScoreAnswer

if TYPE_CHECKING:
    from localjudge.judge import Judge

Results = dict[str, Any]  # "preprocess_step_result", "analyze_step_result", ("score")
Shortcut = tuple[float, str]  # (fraction of scale, reason): decided without the judge
ContextArg = Union[str, "list[str]", "tuple[str, ...]", None]


class UnscorableError(ValueError):
    """The judge's answers are inconsistent (for example a verdict count that does not match)."""


@dataclass(frozen=True)
class NotScorable:
    """What `not_scorable(reason)` returns: the run has nothing for this scorer to judge."""

    reason: str | None = None


def not_scorable(reason: str | None = None) -> NotScorable:
    """Mastra's `notScorable()`: return it from a function step (usually `preprocess`) when the run
    has nothing for this scorer to judge (the tool it checks was never called). The remaining
    steps are skipped (no judge call) and the result is *not scorable*: no score, and not a
    failure (`ScoreResult.not_scorable`); left out of means and counted apart everywhere."""
    return NotScorable(None if reason is None else str(reason))


def _keep(run: Sample, results: Results, parsed: dict[str, Any]) -> Any:
    return parsed


def join_lists(run: Sample, results: Results, answers: list[dict[str, Any]]) -> dict[str, Any]:
    """A split step's answers as one (the default `JudgeStep.join`): each list field the parts'
    lists one after another, in part order; any other field must be the same in every part
    (else `UnscorableError`, naming it)."""
    joined: dict[str, Any] = {}
    for answer in answers:
        for key, value in answer.items():
            if key not in joined:
                joined[key] = list(value) if isinstance(value, list) else value
            elif isinstance(value, list) and isinstance(joined[key], list):
                joined[key] += value
            elif value != joined[key]:
                raise UnscorableError(f"the parts' answers differ in {key!r}, which is not a list to join")
    return joined


MAX_PARTS = 8  # a split run's prompts in one step: 80 sentences, 160 context pieces or tool calls


def spans(count: int, size: int) -> list[tuple[int, int]]:
    """`count` items in parts of at most `size`, as (start, end) index pairs, for a `split`:
    ``spans(25, 20)`` is ``[(0, 20), (20, 25)]``; one part (``(0, 0)``) for no items."""
    return [(start, min(start + size, count)) for start in range(0, count, size)] or [(0, 0)]


def part_of(results: Results, count: int) -> tuple[int, int]:
    """The (start, end) span a split step's prompt or schema is asked for (``results["part"]``),
    or all `count` items for a step asked whole."""
    start, end = results.get("part", (0, count))
    return start, end


@dataclass(frozen=True)
class JudgeStep:
    """A step the judge answers, in JSON constrained to `schema`.

    Attributes:
        instructions: The system message (empty: the scorer's own `instructions`).
        prompt: Builds the user message from the run and the results so far. Put untrusted
            text in `localjudge.scoring.prompting.block(...)`, so it cannot pass for instructions.
        schema: The answer's pydantic model, or a function of (run, results) choosing it per
            item (exactly N verdicts for N claims). Bound every string and list.
        examples: Worked examples as earlier chat turns: (user message, assistant JSON).
        finish: Turns the validated answer (plain data) into the step's result; may raise
            `UnscorableError` when it contradicts earlier steps.
        judge: This step's own judge (default: the scorer's).
        by_rule: Answers some items without the judge: returns the step's result for the item,
            or None to ask the judge (a terse answer is one claim, with no claims step).
        split: Splits one run's work into several prompts of the same judge call (25 context
            pieces asked as 20 and 5, where the schema bounds a list): returns the parts, in
            order (a non-empty list; `spans` makes index ranges). `prompt` and `schema` are then
            called once per part, with the part in ``results["part"]``; the parts' validated
            answers are joined by `join` into the one answer `finish` gets. A part's bad
            answer leaves the run unscored, naming the part. None: one prompt per run.
        join: Joins a split step's answers, in part order, into one (default `join_lists`:
            list fields concatenated); may raise `UnscorableError`.
        max_parts: The most parts one run's split may ask (default `MAX_PARTS`): a run needing
            more is unscored (``unscorable``) saying so, before any call. Parts lift a schema's
            bound, not the judge's window: a text far past the window (2,500 sentences: 250 parts)
            would otherwise be judged piece by piece, for minutes, with no reason step that fits.
    """

    instructions: str
    prompt: Callable[[Sample, Results], str]
    schema: type[BaseModel] | Callable[[Sample, Results], type[BaseModel]]
    examples: tuple[tuple[str, str], ...] = ()
    finish: Callable[[Sample, Results, dict[str, Any]], Any] = _keep
    judge: Judge | None = None
    by_rule: Callable[[Sample, Results], Any] | None = None
    split: Callable[[Sample, Results], Any] | None = None
    join: Callable[[Sample, Results, list[dict[str, Any]]], dict[str, Any]] = join_lists
    max_parts: int = MAX_PARTS

    def schema_for(self, run: Sample, results: Results) -> type[BaseModel]:
        if isinstance(self.schema, type) and issubclass(self.schema, BaseModel):
            return self.schema
        make = cast(Callable[[Sample, Results], type[BaseModel]], self.schema)
        return make(run, results)


StepFunction = Callable[[Sample, Results], Any]
Step = JudgeStep | StepFunction

PROMPT_OBJECT_KEYS = ("description", "create_prompt", "createPrompt", "instructions", "judge")


def prompt_object(spec: Mapping[str, Any]) -> JudgeStep:
    """Mastra's prompt-object `generateScore` (``{description, createPrompt, judge?}``) as a judge
    step: ``create_prompt(run, results)`` is the user message, `ScoreAnswer` the answer's schema
    (``{"score": x}``), ``instructions`` the system message (default: the scorer's), ``judge`` its
    own judge. Anything else is refused, naming the keys it takes."""
    unknown = sorted(set(spec) - set(PROMPT_OBJECT_KEYS))
    make = spec.get("create_prompt", spec.get("createPrompt"))
    if unknown or not callable(make):
        raise ValueError(f"a prompt-object generate_score takes {', '.join(PROMPT_OBJECT_KEYS)} (create_prompt "
                         f"a function of (run, results)); got keys {sorted(spec)}")
    return JudgeStep(instructions=str(spec.get("instructions") or ""), prompt=make, schema=ScoreAnswer,
                     judge=spec.get("judge"))


def call_get_context(get_context: Callable[..., Any], run: Mapping[str, Any]) -> Any:
    """Call a user's context hook Mastra's way (keywords `run`, `results`, `step`, as many as it
    takes) or with the run alone; await it if it is async."""
    try:
        params = inspect.signature(get_context).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no signature to read
        params = {}  # type: ignore[assignment]
    offered = {"run": run, "results": {}, "step": "analyze"}
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    by_name = {k: v for k, v in offered.items() if k in params and params[k].kind in _KEYWORD}
    if takes_all:
        return resolve(get_context(**offered))
    return resolve(get_context(**by_name) if "run" in by_name else get_context(run))


_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)

MAX_DEPTH = 100  # far beyond any step result; deeper would overflow the JSON encoder's recursion


def json_problem(value: Any) -> str | None:
    """Why `value` cannot be stored as JSON data (None when it can): the first value JSON cannot
    hold (a set, bytes, an object) with its type and place, a dict or list that holds itself, a
    key that is not text, or nesting deeper than `MAX_DEPTH`. One line."""
    return _problem(value, "", set(), 0)


def _problem(value: Any, path: str, open_: set[int], depth: int) -> str | None:
    where = f" at {path[:120]}" if path else ""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return None
    if not isinstance(value, (dict, list, tuple)):
        return f"a {type(value).__name__}{where}"
    if depth >= MAX_DEPTH:
        return f"a value nested deeper than {MAX_DEPTH} levels{where}"
    if id(value) in open_:
        return f"a {type(value).__name__} that holds itself{where}"
    open_.add(id(value))
    try:
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    return f"a dict key {key!r:.40} ({type(key).__name__}, not text){where}"
                if found := _problem(item, f"{path}[{key!r:.40}]", open_, depth + 1):
                    return found
            return None
        for index, item in enumerate(value):
            if found := _problem(item, f"{path}[{index}]", open_, depth + 1):
                return found
        return None
    finally:
        open_.discard(id(value))


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
