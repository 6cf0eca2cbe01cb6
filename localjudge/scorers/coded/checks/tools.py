"""What the tool-call checks share: the tools called, read as Mastra's `extractToolCalls` reads
them (every call made: with a result, still pending, or failed), and one builder for a
pass/fail check on them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from localjudge.samples import Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, code_scorer, passed
from localjudge.scoring import Build, Results


def called(run: Sample) -> list[str]:
    """The names of the tools the run called, in order, a name once per call."""
    return [call.name for call in run.tool_calls]


def tool_name_option(name: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a tool name, got {value!r}")


def count_option(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{name} must be a whole number, 0 or more, got {value!r}")


def tool_check(name: str, build: Build, *, measure: Callable[[Sample], dict[str, Any]], said: tuple[str, str],
               positive: str,
               settings: Mapping[str, Any] | None = None) -> CodeScorer:
    """A check scoring 1 when ``measure(run)["passed"]``, else 0. `said`: what the agent did when
    it passes and when not (``("called search", "did not call search")``), for the reason."""
    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        return measure(run)

    def reason(run: Sample, results: Results) -> str:
        tools = ", ".join(called(run)) or "none"
        ok = results["preprocess_step_result"]["passed"]
        return f"{'Passed' if ok else 'Failed'}: the agent {said[0] if ok else said[1]} (tools called: {tools})."

    return code_scorer(name, build, id=name.replace("_", "-"), preprocess=preprocess, score=passed, reason=reason,
                       reads=("output", "tool_calls"), positive=positive,
                       description=f"Whether the agent {said[0]}", settings=settings)


__all__ = ["called", "count_option", "tool_check", "tool_name_option"]
