"""`expect_evals` / `expect_eval`: `@mastra/evals/vitest`'s pass-rate assertion over `run_evals`.

Mastra's ``expectEvals(config).toPass(minPassRate = 1)`` (`packages/evals/src/vitest/expect-evals.ts`)
runs ``runEvals(config)`` and fails unless every gate's pass rate (its mean over the items: a gate
scores 1 or 0 per item) is at least `minPassRate`, and every scorer threshold passes (thresholds
compare the mean score and are not relaxed by the rate), per turn too. As `run_evals`' verdict,
a gate with a failed item (its target or the gate raised) never passes, whatever the rate:
Mastra's `runEvals` aborts the whole run on such an item. The error lists each
miss, one line each, in Mastra's words; it carries the result. This is the same over
`localjudge.run_evals`, for any test runner (the pytest plugin re-exports it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.evaluation.assertions import GateResult, ThresholdResult
from localjudge.evaluation.target_runs import RunEvalsResult, run_evals
from localjudge.scoring import js_number


class EvalPassRateError(AssertionError):
    """Mastra's `EvalPassRateError`: the pass rate was not met; `result` is the whole run."""

    def __init__(self, message: str, result: RunEvalsResult) -> None:
        super().__init__(message)
        self.result = result


def format_rate(rate: float) -> str:
    """Mastra's `formatRate`: ``Math.round(rate * 1000) / 10`` and a percent sign (66.7%)."""
    return f"{js_number(math.floor(rate * 1000 + 0.5) / 10)}%"


def _js_json(value: Any) -> str:
    """``JSON.stringify`` of a threshold (a number or ``{min, max}``): whole numbers without ``.0``."""
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{json.dumps(str(k))}:{_js_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return js_number(value) if math.isfinite(value) else "null"
    return json.dumps(value)


def _misses(gates: Mapping[str, GateResult] | None, thresholds: Mapping[str, ThresholdResult] | None,
            rate: float, where: str) -> list[str]:
    lines = [f"  ✗ {where}gate {gate_id}: pass rate {format_rate(gate.score)} < required {format_rate(rate)}"
             if gate.score < rate else
             f"  ✗ {where}gate {gate_id}: {gate.failed} item(s) failed (the target or the gate raised); a failed "
             "item never passes, whatever the rate"
             for gate_id, gate in (gates or {}).items() if gate.score < rate or gate.failed]
    lines += [f"  ✗ {where}threshold {scorer_id}: average score "
              f"{'null' if t.score is None else js_number(t.score)} (threshold: {_js_json(t.threshold)})"
              for scorer_id, t in (thresholds or {}).items() if not t.passed]
    return lines


def assert_pass_rate(result: RunEvalsResult, min_pass_rate: float = 1.0) -> RunEvalsResult:
    """Mastra's ``assertPassRate``: fail (`EvalPassRateError`) unless every gate's pass rate is at
    least `min_pass_rate` and every threshold passed, overall and per turn. Returns `result`."""
    __tracebackhide__ = True
    if (isinstance(min_pass_rate, bool) or not isinstance(min_pass_rate, (int, float))
            or not math.isfinite(min_pass_rate) or not 0 <= min_pass_rate <= 1):
        raise ValueError(f"to_pass(min_pass_rate): min_pass_rate must be within [0, 1], got {min_pass_rate!r}")
    lines = _misses(result.gate_results, result.threshold_results, min_pass_rate, "")
    for turn in result.turn_results or []:
        lines += _misses(turn.gate_results, turn.threshold_results, min_pass_rate, f"turn {turn.index} ")
    if lines:
        raise EvalPassRateError("\n".join([f"Eval did not pass (required pass rate: {format_rate(min_pass_rate)}).",
                                           *lines]), result)
    return result


@dataclass(frozen=True)
class EvalAssertion:
    """What `expect_evals` returns: call `to_pass` to run the eval and assert on it."""

    options: Mapping[str, Any]

    def to_pass(self, min_pass_rate: float = 1.0) -> RunEvalsResult:
        """Run `run_evals` with the options and fail unless every gate's pass rate (the share of
        items passing it) is at least `min_pass_rate` (default 1: every item) and every threshold
        passes. Returns the whole result for further checks."""
        __tracebackhide__ = True
        return assert_pass_rate(run_evals(**self.options), min_pass_rate)


def expect_evals(data: Sequence[Mapping[str, Any]], scorers: Sequence[Any] = (), target: Any = None,
                 **options: Any) -> EvalAssertion:
    """Mastra's ``expectEvals``: `run_evals`' arguments (data, scorers with thresholds, target,
    ``gates=``...), run when ``.to_pass(min_pass_rate)`` is called."""
    return EvalAssertion({"data": data, "scorers": scorers, "target": target, **options})


def expect_eval(data: Mapping[str, Any], scorers: Sequence[Any] = (), target: Any = None,
                **options: Any) -> EvalAssertion:
    """Mastra's ``expectEval``: `expect_evals` on one item (a parametrized test per item)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"expect_eval takes one item (a dict); got {type(data).__name__} (expect_evals takes a list)")
    return expect_evals([data], scorers, target, **options)


__all__ = ["EvalAssertion", "EvalPassRateError", "assert_pass_rate", "expect_eval", "expect_evals", "format_rate"]
