"""Code trajectory accuracy (Mastra's `createTrajectoryAccuracyScorerCode`, no model): how closely
the agent's steps (its tool calls, in order) follow an expected trajectory.

Inputs: the run's tool calls (as Mastra's `extractTrajectory` reads them) and the expected
steps: the `expected_trajectory` option (step names, or Mastra's steps: ``{name, stepType?,
toolArgs?, toolResult?, success?}``; it wins), else the run's `expected_trajectory` /
`expectedTrajectory` (Mastra's ``{steps, ordering?, allowRepeatedSteps?}``, or a list of steps).
A run's own `ordering` and `allowRepeatedSteps` override the options. Score: Mastra's
`compareTrajectories` (`localjudge.scorers.coded.trajectory_compare.compare`): matched expected steps /
expected steps; `ordering` ``"relaxed"`` (the default: in order, other steps allowed between),
``"strict"`` (position by position; extra steps cost half their share) or ``"unordered"``;
without `allow_repeated_steps`, 0.1 off per step name taken more than once. Higher is better.
A run with no expected trajectory is refused (Mastra scores it 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import InvalidRunError, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, RunSample, code_build, code_scorer, plain
from localjudge.scorers.coded.trajectory_compare import compare, expected_steps, steps_of
from localjudge.scoring import Results

ORDERINGS = ("relaxed", "strict", "unordered")


def check_ordering(value: Any, where: str = "ordering") -> str:
    if value not in ORDERINGS:
        raise ValueError(f"{where} must be one of {', '.join(ORDERINGS)}, got {value!r}")
    return str(value)


def run_expectation(run: Sample) -> dict[str, Any]:
    """The run's expected trajectory as Mastra's `TrajectoryExpectation` (a list: its steps)."""
    given = getattr(run, "expectation", None)
    if given is None:
        return {}
    if isinstance(given, list):
        return {"steps": given}
    if not isinstance(given, dict):
        raise InvalidRunError("expected_trajectory must be a list of steps or {steps, ordering?, ...}")
    return given


def given(item: dict[str, Any], key: str, default: Any) -> Any:
    """``item[key] ?? default``: the run's value unless it has none."""
    return default if item.get(key) is None else item[key]


def code_trajectory_accuracy_scorer(judge: Judge | None = None, *,
                                    expected_trajectory: Sequence[Any] | dict[str, Any] | None = None,
                                    ordering: str = "relaxed", allow_repeated_steps: bool = True,
                                    scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's code trajectory accuracy scorer (no model: `judge` is not used).

    Args:
        expected_trajectory: The expected steps (names or Mastra's steps), or ``{"steps": [...]}``;
            without it, each run's own.
        ordering: ``"relaxed"``, ``"strict"`` or ``"unordered"`` (Mastra's `comparisonOptions`).
        allow_repeated_steps: Without it, 0.1 off per repeated step name.
        compat: ``"mastra"``: Mastra's numbers (the raw fraction, no scale), and a run with no
            expected trajectory scores 0, as Mastra's, instead of being refused.
    """
    mastra = compat == "mastra"
    check_ordering(ordering)
    if not isinstance(allow_repeated_steps, bool):
        raise TypeError(f"allow_repeated_steps must be true or false, got {allow_repeated_steps!r}")
    static = None
    if expected_trajectory is not None:
        option = plain(expected_trajectory)
        static = expected_steps(option.get("steps") if isinstance(option, dict) else option, "expected_trajectory")

    def check_run(run: RunSample) -> None:
        steps = run_expectation(run).get("steps")
        if static is None and steps is None:
            if mastra:  # scored 0 below
                return
            raise InvalidRunError("code_trajectory_accuracy needs an expected trajectory: the expected_trajectory "
                                  "option, or the run's 'expected_trajectory' / 'expectedTrajectory'")
        if static is None:
            expected_steps(steps, "expected_trajectory")
        check_ordering(given(run_expectation(run), "ordering", ordering), "expected_trajectory ordering")

    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        item = run_expectation(run)
        actual = steps_of(run.tool_calls)
        if static is None and item.get("steps") is None:  # only under compat="mastra": check_run refuses it
            return {"actual_trajectory": {"steps": actual}, "expected_trajectory": None, "comparison": None,
                    "actual_step_names": [s["name"] for s in actual], "expected_step_names": []}
        steps = static if static is not None else expected_steps(item.get("steps"), "expected_trajectory")
        comparison = compare(actual, steps, given(item, "ordering", ordering),
                             given(item, "allowRepeatedSteps", allow_repeated_steps))
        return {"actual_trajectory": {"steps": actual}, "expected_trajectory": {"steps": steps},
                "comparison": comparison, "actual_step_names": [s["name"] for s in actual],
                "expected_step_names": [s["name"] for s in steps]}

    def reason(run: Sample, results: Results) -> str:
        found = results["preprocess_step_result"]["comparison"]
        if found is None:
            return "No expected trajectory was given: Mastra scores that 0."
        parts = [f"{found['matchedSteps']} of {found['totalExpectedSteps']} expected steps matched"]
        for key, label in (("missingSteps", "missing"), ("extraSteps", "extra"), ("outOfOrderSteps", "out of order"),
                           ("repeatedSteps", "repeated")):
            if found[key]:
                parts.append(f"{label}: {', '.join(map(str, found[key]))}")
        return "; ".join(parts) + "."

    return code_scorer("code_trajectory_accuracy", code_build(scale, compat), preprocess=preprocess,
                       score=lambda run, results: (results["preprocess_step_result"]["comparison"] or {"score": 0.0})
                       ["score"],
                       reason=reason, reads=("output", "tool_calls", "expectation"),
                       positive="follows the expected trajectory", check_run=check_run,
                       settings={"expected": static, "ordering": ordering, "repeats": allow_repeated_steps},
                       description="Share of the expected steps the agent's tool calls match (strict, relaxed "
                                   "or unordered)")


__all__ = ["ORDERINGS", "check_ordering", "code_trajectory_accuracy_scorer", "given", "run_expectation"]
