"""Model-free scorers: Mastra's code scorers and checks, scored by a formula with no judge.

A code scorer is a `Scorer` whose steps are plain functions, so it runs with no model: built
with `judge=None` (the registry passes whatever judge it is given, and they ignore it), it never
calls one, and a CLI run with only such scorers loads none. `CodeScorer` adds what the
judge-step machinery cannot see by itself:

- `reads`: the run fields its formula reads. They are its `shown_fields`, so a result is keyed
  by them (a changed tool call is scored again, not resumed).
- `settings`: its options (the expected text, the tool order...), hashed into `prompt_hash`, so
  results of `includes("sunny")` are never resumed as those of `includes("rain")`.
- `check_run`: refuses a run it cannot score before any step, as `invalid_run`.
- `mastra_reading`: under ``compat="mastra"``, the input and output texts as Mastra's own
  scorer reads them (several messages joined: `localjudge.samples.mastra_reading`) instead of the
  first user message and the last assistant message with text; results are keyed by those texts.
- the run's expected trajectory as given (`RunSample.expectation`: Mastra's
  ``TrajectoryExpectation`` with its ordering, budgets and blacklists), for the trajectory
  scorers; the judge scorers' `Sample` keeps only its step lines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Any

from localjudge.samples import InvalidRunError, Joined, Sample, is_missing, mastra_text
from localjudge.scoring import Build, MastraNumbers, Results, Scorer, create_scorer

TRAJECTORY_KEYS = ("expected_trajectory", "expectedTrajectory")
# Mastra's code scorers and checks return their raw fraction and take no scale option.
MASTRA_NUMBERS = MastraNumbers(rounded=False, scale="none")


@dataclass(frozen=True)
class RunSample(Sample):
    """A `Sample` with the run's expected trajectory as given (plain JSON data), or None."""

    expectation: Any = None


@dataclass(frozen=True)
class CodeScorer(Scorer):
    """A scorer with no judge step (see the module docstring).

    Attributes:
        reads: The `Sample` fields its formula reads (``"expectation"``: `RunSample`'s).
        settings: Its options as JSON text: part of `prompt_hash`.
        check_run: Raises `InvalidRunError` for a run it cannot score.
        mastra_reading: (field, how Mastra joins its messages) for each text field Mastra's
            scorer reads otherwise than localjudge: applied under ``compat="mastra"`` only.
    """

    reads: tuple[str, ...] = ("output",)
    settings: str = "{}"
    check_run: Callable[[RunSample], None] | None = None
    mastra_reading: tuple[tuple[str, Joined], ...] = ()

    @cached_property
    def shown_fields(self) -> frozenset[str]:
        """The fields it reads (no judge prompt shows any: `Scorer.shown_fields` would be empty)."""
        return frozenset(self.reads)

    @cached_property
    def prompt_hash(self) -> str:
        """The probe's hash (`Scorer.prompt_hash`: its formula on the probe runs) and its settings."""
        probed = Scorer.prompt_hash.func(self)  # type: ignore[attr-defined]
        return hashlib.sha256(f"{probed}\n{self.settings}".encode()).hexdigest()[:12]

    def sample(self, run: Mapping[str, Any]) -> RunSample:
        """The run read as every scorer reads it, with its expected trajectory kept as given
        when the scorer reads ``expectation``; `check_run` may refuse it."""
        expectation = None
        if "expectation" in self.reads:
            given = next((run[k] for k in TRAJECTORY_KEYS if not is_missing(run.get(k))), None)
            expectation = plain(given)
            run = {k: v for k, v in run.items() if k not in TRAJECTORY_KEYS}  # read here, not as step lines
        base = super().sample(run)
        made = RunSample(**{f.name: getattr(base, f.name) for f in fields(Sample)}, expectation=expectation)
        if self.compat.name == "mastra" and self.mastra_reading:
            texts = {name: mastra_text(base.raw.get(name), name, joined) for name, joined in self.mastra_reading}
            made = replace(made, **texts)  # type: ignore[arg-type]  # (only text fields are read so)
        if self.check_run is not None:
            self.check_run(made)
        return made


def plain(value: Any) -> Any:
    """`value` as plain JSON data (dict, list, str, number, bool, None): a dataset cell may hold
    tuples or other mappings. Raises `InvalidRunError` for anything JSON cannot hold."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, default=_refuse))
    except (TypeError, ValueError) as error:
        raise InvalidRunError(f"expected_trajectory must be JSON data: {error}") from None


def _refuse(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")


def code_build(scale: float = 1.0, compat: str = "localjudge") -> Build:
    """A code scorer's build: its `scale` and `compat` checked, with Mastra's numbers for the code
    scorers and checks (`MASTRA_NUMBERS`: the raw fraction, no scale)."""
    return Build.of(MASTRA_NUMBERS, scale=scale, compat=compat)


def code_scorer(
    name: str,
    build: Build,
    *,
    score: Callable[[Sample, Results], float],
    preprocess: Callable[[Sample, Results], Any],
    reason: Callable[[Sample, Results], str],
    description: str,
    positive: str,
    id: str = "",
    reads: Sequence[str] = ("output",),
    settings: Mapping[str, Any] | None = None,
    check_run: Callable[[RunSample], None] | None = None,
    version: str = "v1",
    mastra_reading: Mapping[str, Joined] | None = None,
) -> CodeScorer:
    """A `CodeScorer`: Mastra's shape (a preprocess function that measures, a score read off its
    result) with a reason by rule; higher is better for every one of them. `build` holds its scale
    and setting (`code_build`): under ``compat="mastra"``, Mastra's numbers (`MASTRA_NUMBERS`): the
    raw fraction, no scale; and the texts of `mastra_reading`'s fields as Mastra's scorer reads them."""
    base = (create_scorer(name, description=description, id=id, version=version, positive=positive,
                          higher_is_better=True, **build.create_keywords())
            .preprocess(preprocess).generate_score(score).generate_reason(reason))
    values = {f.name: getattr(base, f.name) for f in fields(Scorer)}
    return CodeScorer(**values, reads=tuple(reads), settings=json.dumps(settings or {}, sort_keys=True, default=str),
                      check_run=check_run, mastra_reading=tuple((mastra_reading or {}).items()))


def measured(key: str) -> Callable[[Sample, Results], float]:
    """A score function reading `key` of the preprocess step's result (Mastra's code scorers
    measure in preprocess and score the measure)."""
    def score(run: Sample, results: Results) -> float:
        return float(results["preprocess_step_result"][key])

    return score


def passed(run: Sample, results: Results) -> float:
    """A check's score: 1 when its preprocess step found it passed, else 0."""
    return 1.0 if results["preprocess_step_result"]["passed"] else 0.0


__all__ = ["CodeScorer", "RunSample", "code_build", "code_scorer", "measured", "passed", "plain"]
