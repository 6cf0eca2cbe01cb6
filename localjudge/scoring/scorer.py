"""A scorer: the steps it declares, its score and its reason (`create_scorer` starts one: `create`).

A scorer is Mastra's pipeline: optional `preprocess` and `analyze` steps, `generate_score`, and
an optional `generate_reason`, each a `JudgeStep` or a plain function (see `localjudge.scoring.steps`).
Build one with `create_scorer(...).preprocess(...).analyze(...).generate_score(...)`; the
built-in scorers are written that way. A `Scorer` is a frozen value: it declares, and the step
runner (`localjudge.scoring.step_runner`) runs it a batch at a time, one judge call per judge step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.result import ScoreResult
from localjudge.samples import InvalidRunError, Sample, context_of, to_sample
from localjudge.scoring import step_runner
from localjudge.scoring.calls import BatchSteps
from localjudge.scoring.compat import (
    LOCALJUDGE,
    Compat,
    ScoreReturns,
    round_half_up,
)
from localjudge.scoring.steps import (
    ContextArg,
    JudgeStep,
    Results,
    Shortcut,
    Step,
    UnscorableError,
    call_get_context,
    prompt_object,
    resolve,
)
from localjudge.scoring.versioning import probe, prompt_hash, shown_fields

REQUIRED_HINTS = {  # what a run lacks, in the words of its fields
    "input": "an input: the question or request the output answers ('input')",
    "ground_truth": "a ground truth: the reference answer ('ground_truth' or 'groundTruth')",
    "system": "a system prompt ('system', or system messages in the input)",
    "tool_calls": "tool calls ('tool_calls', or tool invocations in the output messages)",
    "expected_trajectory": "an expected trajectory ('expected_trajectory' or 'expectedTrajectory')",
    "baseline_response": "a baseline response: the answer to the clean query ('baseline_response')",
    "conversation": "a conversation ('conversation', or chat messages as input or output)",
}


def no_shortcut(run: Sample, results: Results) -> Shortcut | None:
    return None


def _without_judge(step: Step | None) -> Step | None:
    """A judge step without its own judge (so the scorer's judge answers it); others as they are."""
    return replace(step, judge=None) if isinstance(step, JudgeStep) and step.judge is not None else step


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
        score_step: ``(run, results) -> number``, or a judge step whose answer holds ``score``
            (Mastra's prompt object); `score_returns` says how the number is read.
        score_returns: ``"fraction"`` (the default; `create_scorer`'s under ``compat="mastra"`` is
            ``"score"``): the number is a fraction in [0, 1] and the
            score is fraction x scale; ``"score"`` (Mastra's contract): the number is the score
            itself, any finite number (87.5 and -1 too). Either way rounded to two decimals, but
            under ``compat="mastra"`` as the scorer's `MastraNumbers` say (a custom scorer's: as
            it is). NaN or infinity leaves the run unscored.
        prepare_run: Mastra's ``prepareRun``: rewrites each run (a mapping; may be async)
            before anything else reads it: its result is what is judged and keyed.
        reason_step: Optional: ``(run, results) -> str``, or a judge step whose result (or its
            ``"reason"`` field) is the reason; `results` then also holds ``"score"``.
        shortcut: Decides an item without the judge (empty output, no claims): called before
            each step with the results so far, returns (fraction, reason) or None.
        prob_score_fn: Optional score from label probabilities, read as `score_returns` says
            (a fraction times the scale, or the score itself).
        scale: Scores lie in [0, scale] (a custom score under ``score_returns="score"`` may lie
            outside: it is kept as returned).
        needs_context: Runs without context are rejected before any model call.
        requires: Other `Sample` fields a run must carry (``"ground_truth"``, ``"system"``...):
            a run without one is rejected before any model call, naming the field.
        context: Static context for every run; it replaces the run's own `context` field.
        get_context: Called once per run, before any judge call, as Mastra's hook is:
            ``get_context(run=run, results={}, step="analyze")`` (only the keywords it accepts;
            a one-argument function gets the run positionally); may be async. Its result takes
            precedence over `context` and the run's field.
        fallback_context: Where context comes from when none of the above gives any (the
            faithfulness scorer: the tool results in the run's output, as Mastra's).
        id: Mastra's scorer id, the key of `run_evals` results (default ``"<name>-scorer"`` with
            dashes for underscores, as Mastra's ``"answer-relevancy-scorer"``).
        description: What it measures, for people.
        positive: What a high score (label 1 in a benchmark) means: ``"hallucinated"``.
        higher_is_better: The score's direction (None: neither, a neutral measure). Benchmarks
            read `positive`; baselines and "steered" checks read the direction.
        compat: How the score is made from the number (`localjudge.scoring.compat`): the setting
            (the default, or Mastra 1.10.2's numbers) with the scorer's own `MastraNumbers`;
            ``create_scorer(..., compat=..., mastra_numbers=...)`` makes it. Part of `key`.
    """

    name: str
    judge: Judge | None = None
    version: str = "v1"
    instructions: str = ""
    preprocess_step: Step | None = None
    analyze_step: Step | None = None
    score_step: Callable[[Sample, Results], Any] | JudgeStep | None = None
    score_returns: ScoreReturns = "fraction"
    prepare_run: Callable[[Mapping[str, Any]], Any] | None = None
    reason_step: Step | None = None
    shortcut: Callable[[Sample, Results], Shortcut | None] = no_shortcut
    prob_score_fn: Callable[[Results, Mapping[str, Any]], float | None] | None = None
    scale: float = 1.0
    needs_context: bool = False
    requires: tuple[str, ...] = ()
    context: ContextArg = None
    get_context: Callable[..., Any] | None = None
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None
    id: str = ""
    description: str = ""
    positive: str = "positive"
    higher_is_better: bool | None = None
    compat: Compat = LOCALJUDGE

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", self.compat.kept_scale(self.scale))
        if not self.id:
            object.__setattr__(self, "id", f"{self.name.replace('_', '-')}-scorer")  # Mastra's: answer-relevancy-scorer
        if self.score_returns not in ("fraction", "score"):
            raise ValueError(f"score_returns must be 'fraction' or 'score', got {self.score_returns!r}")
        unknown = set(self.requires) - set(REQUIRED_HINTS)
        if unknown:
            raise ValueError(f"requires names unknown run fields {sorted(unknown)}; known: {sorted(REQUIRED_HINTS)}")

    # Mastra's builder: each returns a new scorer with that step set.
    def preprocess(self, step: Step) -> Scorer:
        """The step before analyze (claim extraction, say)."""
        return replace(self, preprocess_step=step)

    def analyze(self, step: Step) -> Scorer:
        """The step that produces verdicts."""
        return replace(self, analyze_step=step)

    def generate_score(self, step: Callable[[Sample, Results], Any] | JudgeStep | Mapping[str, Any]) -> Scorer:
        """The score: a function of (run, results) giving a number (a fraction in [0, 1], or the
        score itself: see `score_returns`), or `not_scorable(reason)`; or a judge step, or
        Mastra's prompt object ``{"description": ..., "create_prompt": (run, results) -> str}``
        (optionally ``"instructions"``, ``"judge"``): the judge writes ``{"score": x}`` under
        `ScoreAnswer` (two decimals, bounded as `score_returns` reads it), one call per batch."""
        return replace(self, score_step=prompt_object(step) if isinstance(step, Mapping) else step)

    def generate_reason(self, step: Step) -> Scorer:
        """The reason: a function of (run, results) or a judge step; results hold ``score``."""
        return replace(self, reason_step=step)

    @cached_property
    def prompt_hash(self) -> str:
        """Hash of what this scorer sends its judge and scores (see `localjudge.scoring.versioning`)."""
        return prompt_hash(self._probe)

    @cached_property
    def shown_fields(self) -> frozenset[str]:
        """The run fields (of input, output, context) its prompts show the judge, read off the
        probe run (see `localjudge.scoring.versioning`), so it cannot go stale."""
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
        return f"{self.name}/{self.version}@{self.prompt_hash}/scale={self.scale:g}{self.compat.key}/{'+'.join(names)}"

    def _steps(self) -> list[Step]:
        return [s for s in (self.preprocess_step, self.analyze_step, self.score_step, self.reason_step) if s]

    def with_judge(self, judge: Judge) -> Scorer:
        """The same scorer on another judge."""
        return replace(self, judge=judge)

    def probed(self, judge: Judge) -> Scorer:
        """The same scorer with `judge` answering every judge step (a step's own judge too) and
        no context hooks: what `versioning.probe` runs."""
        return replace(self, judge=judge, context=None, get_context=None,
                       preprocess_step=_without_judge(self.preprocess_step),
                       analyze_step=_without_judge(self.analyze_step), reason_step=_without_judge(self.reason_step),
                       score_step=_without_judge(self.score_step), prepare_run=None)

    def run(self, run: Mapping[str, Any]) -> ScoreResult:
        """Score one run (`input`, `output`, optional `context`, `run_id`)."""
        return self.run_batch([run])[0]

    def sample(self, run: Mapping[str, Any]) -> Sample:
        """Normalise a run for this scorer; raises `InvalidRunError` when it cannot be judged."""
        if self.prepare_run is not None:
            run = resolve(self.prepare_run(run))
            if not isinstance(run, Mapping):
                raise InvalidRunError(f"prepare_run gave {type(run).__name__}, not a run (a dict)")
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
        for name in self.requires:
            if not getattr(sample, name):
                raise InvalidRunError(f"{self.name} needs {REQUIRED_HINTS.get(name, repr(name))}")
        return sample

    def run_batch(
        self,
        runs: Sequence[Mapping[str, Any] | Sample],
        *,
        on_invalid: Literal["raise", "record"] = "raise",
        on_step: Callable[[str], Any] | None = None,
    ) -> list[ScoreResult]:
        """Score many runs with one judge call per judge step for the whole batch.

        Args:
            runs: The runs to score (or `Sample`s already made by `sample`, used as they are).
            on_invalid: ``"raise"`` rejects the batch (before any model call) if a run is
                structurally wrong; ``"record"`` records such runs as unscored instead.
            on_step: Called with each declared step's name (``"preprocess"``, ``"analyze"``,
                ``"score"``, ``"reason"``) once that step has run for the batch (progress).

        Returns:
            One result per run, in input order.
        """
        return step_runner.run_batch(self, runs, on_invalid, on_step)

    def batch_steps(
        self,
        runs: Sequence[Mapping[str, Any] | Sample],
        *,
        on_invalid: Literal["raise", "record"] = "raise",
        on_step: Callable[[str], Any] | None = None,
    ) -> BatchSteps:
        """`run_batch` as a generator: it yields each judge call the batch needs (`Ask`), is sent
        the answers, and returns the results; `localjudge.scoring.calls.run_together` runs
        several scorers' batches so, their calls merged."""
        return step_runner.batch_steps(self, runs, on_invalid, on_step)


__all__ = ["JudgeStep", "Scorer", "UnscorableError", "round_half_up"]
