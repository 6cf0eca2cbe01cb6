"""Ensemble mode: a scorer's pipeline and its direct mode on every row, in one schedule.

``build_scorer(name, judge, mode="ensemble")`` (CLI: ``--mode ensemble``) runs both modes of the
scorer together (`localjudge.scoring.rounds`, in lock step): the direct verdict rides in the same judge
call as the pipeline's first step, so it costs one more prompt per row in that call, not one more
call. The row's result:

- `score`, `reason`, the prompts and the preprocess result: the pipeline's (Mastra's meaning).
- `prob_score`: the mean of the two modes' probabilities, a plain mean (not a learned
  combination: that is calibration's, fitted on labels). A mode's probability is its
  `prob_score`; for a mode that decided the row without the judge (a shortcut: empty output, no
  claims) it is its hard score, as `localjudge bench` reads such rows. When either mode has none
  (it failed, or the engine gives no label probabilities) the ensemble's `prob_score` is None:
  never one mode's probability passed off as the mean.
- `analyze_step_result`: both modes side by side, ``{"pipeline": {...}, "direct": {...}}``, each
  with its `score`, `prob_score`, the `probability` it put in the mean and its own analyze result
  (the pipeline's verdicts, the direct ``{"verdict", "reason"}``); the direct one with its prompt,
  a failed one with its `error`, `error_kind` and `raw_output`; so a user sees where they disagree.

A row the pipeline cannot score is unscored as the pipeline says (the direct mode's part still
kept); a row only the direct mode fails keeps the pipeline's score, with no `prob_score`. Results
are keyed apart from either mode's (`ENSEMBLE_RULE` and both modes' prompt hashes), so a resumed
run never mixes them, and a calibration map fitted on one mode is refused for the ensemble.
Mastra has no such mode: under ``compat="mastra"`` it is refused (`build_scorer`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.result import ScoreResult
from localjudge.samples import Sample
from localjudge.scoring import BatchSteps, Scorer, answered_alone, read_samples, round_half_up, rounds

ENSEMBLE_RULE = "mean-of-probabilities-v1"  # the combination: part of the prompt hash; change it with the rule
ENSEMBLE = "ensemble"


def mode_probability(result: ScoreResult) -> float | None:
    """What one mode puts in the mean, on its scale: its prob score; its hard score when it decided
    the row without the judge's analyze step (a shortcut); None when it has neither."""
    if not result.scored:
        return None
    if result.analyze_step_result is None:
        return result.score
    return result.prob_score


def mean_probability(pipeline: ScoreResult, direct: ScoreResult) -> float | None:
    """The ensemble's prob score: the mean of both modes' probabilities (4 decimals), None unless both have one."""
    both = [mode_probability(pipeline), mode_probability(direct)]
    if any(p is None for p in both):
        return None
    return round_half_up(sum(both) / 2, 4)  # type: ignore[arg-type]  # (none is None)


def mode_part(result: ScoreResult, *, prompt: bool = False) -> dict[str, Any]:
    """One mode's side of an ensemble row (see the module docstring)."""
    part: dict[str, Any] = {"score": result.score, "prob_score": result.prob_score,
                            "probability": mode_probability(result), "analyze": result.analyze_step_result}
    if prompt:
        part["prompt"] = result.analyze_prompt
    if not result.scored:
        part.update(error=result.error, error_kind=result.error_kind, raw_output=result.raw_output)
    return part


def combine(pipeline: ScoreResult, direct: ScoreResult) -> ScoreResult:
    """One row's ensemble result from its two modes' results."""
    both = {"pipeline": mode_part(pipeline), "direct": mode_part(direct, prompt=True)}
    return replace(pipeline, analyze_step_result=both, new_tokens=pipeline.new_tokens + direct.new_tokens,
                   prob_score=mean_probability(pipeline, direct) if pipeline.scored else None)


@dataclass(frozen=True)
class EnsembleScorer(Scorer):
    """A scorer's pipeline and direct mode as one scorer (see the module docstring). Its own
    fields are the pipeline's (name, judge, scale, context hooks, direction), with the
    requirements of both; build it with `ensemble_scorer`.

    Attributes:
        pipeline, direct: The two modes of the same scorer, on the same judge.
    """

    pipeline: Scorer | None = None
    direct: Scorer | None = None

    @property
    def parts(self) -> tuple[Scorer, Scorer]:
        """The two modes (pipeline, direct)."""
        assert self.pipeline is not None and self.direct is not None  # ensemble_scorer sets both
        return self.pipeline, self.direct

    @cached_property
    def prompt_hash(self) -> str:
        """Both modes' prompt hashes and the combination rule, hashed."""
        pipeline, direct = self.parts
        text = f"{ENSEMBLE_RULE}\n{pipeline.prompt_hash}\n{direct.prompt_hash}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @cached_property
    def shown_fields(self) -> frozenset[str]:
        """What either mode shows the judge."""
        pipeline, direct = self.parts
        return pipeline.shown_fields | direct.shown_fields

    def _steps(self) -> list[Any]:
        pipeline, direct = self.parts
        return pipeline._steps() + direct._steps()

    def with_judge(self, judge: Judge) -> EnsembleScorer:
        """The same ensemble with both modes on another judge."""
        pipeline, direct = self.parts
        return replace(self, judge=judge, pipeline=pipeline.with_judge(judge), direct=direct.with_judge(judge))

    def run_batch(self, runs: Sequence[Mapping[str, Any] | Sample], *,
                  on_invalid: Literal["raise", "record"] = "raise",
                  on_step: Callable[[str], Any] | None = None) -> list[ScoreResult]:
        """Both modes on `runs`, each round's judge calls made as one (see `Scorer.run_batch`)."""
        return answered_alone(self.batch_steps(runs, on_invalid=on_invalid, on_step=on_step))

    def batch_steps(self, runs: Sequence[Mapping[str, Any] | Sample], *,
                    on_invalid: Literal["raise", "record"] = "raise",
                    on_step: Callable[[str], Any] | None = None) -> BatchSteps:
        """`run_batch` as a generator of judge calls (`Scorer.batch_steps`); `on_step` hears the
        pipeline's steps."""
        return self._both(list(runs), on_invalid, on_step)

    def _both(self, runs: list[Mapping[str, Any] | Sample], on_invalid: Literal["raise", "record"],
              on_step: Callable[[str], Any] | None) -> BatchSteps:
        read = read_samples(self, runs, on_invalid)  # read once, for both modes (their context hooks run once)
        samples = [s for s in read if isinstance(s, Sample)]
        pipeline, direct = self.parts
        by_mode: list[list[ScoreResult]] = [[], []]
        if samples:
            by_mode = yield from rounds([pipeline.batch_steps(samples, on_invalid="record", on_step=on_step),
                                         direct.batch_steps(samples, on_invalid="record")], isolate=False)
        combined = iter([combine(p, d) for p, d in zip(*by_mode, strict=True)])
        return [next(combined) if isinstance(s, Sample) else s for s in read]


def ensemble_scorer(pipeline: Scorer, direct: Scorer) -> EnsembleScorer:
    """The ensemble of a scorer's two modes, built on the same judge (`build_scorer` makes them);
    they must be the same scorer (name, scale, direction), else a `ValueError`."""
    for fact in ("name", "scale", "positive", "higher_is_better"):
        if getattr(pipeline, fact) != getattr(direct, fact):
            raise ValueError(f"an ensemble needs two modes of one scorer: {fact} {getattr(pipeline, fact)!r} "
                             f"is not {getattr(direct, fact)!r}")
    values = {f.name: getattr(pipeline, f.name) for f in fields(Scorer)}
    values.update(version=f"{pipeline.version}+{direct.version}",
                  needs_context=pipeline.needs_context or direct.needs_context,
                  requires=tuple(dict.fromkeys((*pipeline.requires, *direct.requires))))
    return EnsembleScorer(**values, pipeline=pipeline, direct=direct)


__all__ = ["ENSEMBLE", "ENSEMBLE_RULE", "EnsembleScorer", "combine", "ensemble_scorer", "mean_probability",
           "mode_probability"]
