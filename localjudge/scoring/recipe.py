"""What running a scorer needs of it: the `Recipe` protocol.

The step runner (`step_runner.run_batch`) and the prompt hasher (`versioning.probe`) read a
scorer only through this protocol; `Scorer` satisfies it and calls both. So the runner and the
hasher never import `Scorer`, and the three form no cycle, at run time or for type checking.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scoring.compat import Compat, ScoreReturns
from localjudge.scoring.steps import JudgeStep, Results, Shortcut, Step


class Recipe(Protocol):
    """A scorer as the step runner reads it: its steps, score, reason and how it reads a run."""

    @property
    def name(self) -> str: ...
    @property
    def judge(self) -> Judge | None: ...
    @property
    def instructions(self) -> str: ...
    @property
    def preprocess_step(self) -> Step | None: ...
    @property
    def analyze_step(self) -> Step | None: ...
    @property
    def score_step(self) -> Callable[[Sample, Results], Any] | JudgeStep | None: ...
    @property
    def score_returns(self) -> ScoreReturns: ...
    @property
    def reason_step(self) -> Step | None: ...
    @property
    def shortcut(self) -> Callable[[Sample, Results], Shortcut | None]: ...
    @property
    def prob_score_fn(self) -> Callable[[Results, Mapping[str, Any]], float | None] | None: ...
    @property
    def scale(self) -> float: ...
    @property
    def compat(self) -> Compat: ...

    def sample(self, run: Mapping[str, Any]) -> Sample:
        """The run read for this scorer; raises `InvalidRunError` when it cannot be judged."""
        ...

    def probed(self, judge: Judge) -> Recipe:
        """The same recipe with `judge` answering every judge step, and no context hooks."""
        ...
