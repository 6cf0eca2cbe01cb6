"""`expect_evals(...).to_pass(rate)`: `@mastra/evals/vitest`'s `expectEvals` (vitest/expect-evals.ts)
over `run_evals`: gates against the pass rate, thresholds not relaxed by it, per-turn lines, and
Mastra's failure message line for line. Function scorers (no judge): each number worked by hand."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import create_scorer
from localjudge.cli.pytest_plugin import EvalPassRateError, expect_eval, expect_evals
from localjudge.evaluation.pass_rate import format_rate

HAS_X = create_scorer("has_x").generate_score(lambda run, results: float("x" in run.output))
POLITE = create_scorer("polite").generate_score(lambda run, results: float("please" in run.output))
ITEMS = [{"input": "x please"}, {"input": "x"}, {"input": "no"}]  # has_x passes 2 of 3


def echo(question: str) -> str:
    return question


def test_the_gate_pass_rate_is_the_share_of_items_passing() -> None:
    result = expect_evals(ITEMS, [], echo, gates=[HAS_X]).to_pass(0.6)  # 66.7% >= 60%
    assert result.gate_results is not None and result.gate_results["has-x-scorer"].score == pytest.approx(2 / 3)
    with pytest.raises(EvalPassRateError) as failed:
        expect_evals(ITEMS, [], echo, gates=[HAS_X]).to_pass()  # the default: every item
    assert str(failed.value).splitlines() == [
        "Eval did not pass (required pass rate: 100%).",
        "  ✗ gate has-x-scorer: pass rate 66.7% < required 100%",
    ]
    assert failed.value.result.verdict == "failed"  # the whole result rides on the error


def test_thresholds_are_not_relaxed_by_the_rate() -> None:
    eval_ = expect_evals(ITEMS, [{"scorer": POLITE, "threshold": 0.5}, {"scorer": HAS_X, "threshold": {"min": 0.5}}],
                         echo)
    with pytest.raises(EvalPassRateError) as failed:
        eval_.to_pass(0.0)
    assert str(failed.value).splitlines() == [
        "Eval did not pass (required pass rate: 0%).",
        "  ✗ threshold polite-scorer: average score 0.3333333333333333 (threshold: 0.5)",
    ]
    with pytest.raises(EvalPassRateError, match=r'threshold has-x-scorer: average score 0\.6666666666666666 '
                                                r'\(threshold: \{"max":0\.5\}\)'):
        expect_evals(ITEMS, [{"scorer": HAS_X, "threshold": {"max": 0.5}}], echo).to_pass(0.0)


def test_turn_gates_and_thresholds_are_listed_by_turn_index() -> None:
    items = [{"turns": [{"input": "x one", "gates": [HAS_X]}, {"input": "two", "scorers": [
        {"scorer": POLITE, "threshold": 1}]}]}, {"turns": [{"input": "none", "gates": [HAS_X]}]}]
    with pytest.raises(EvalPassRateError) as failed:
        expect_evals(items, [], echo).to_pass(0.75)
    assert str(failed.value).splitlines() == [
        "Eval did not pass (required pass rate: 75%).",
        "  ✗ turn 0 gate has-x-scorer: pass rate 50% < required 75%",
        "  ✗ turn 1 threshold polite-scorer: average score 0 (threshold: 1)",
    ]


def test_expect_eval_is_one_item_and_a_pass_returns_the_result() -> None:
    result = expect_eval({"input": "x please"}, [{"scorer": POLITE, "threshold": 1.0}], echo, gates=[HAS_X]).to_pass()
    assert result.verdict == "passed" and result.scores == {"polite-scorer": 1.0}
    with pytest.raises(ValueError, match="expect_eval takes one item"):
        expect_eval(ITEMS, [HAS_X], echo)  # type: ignore[arg-type]


@pytest.mark.parametrize("rate", [1.5, -0.1, float("nan"), "0.5"])
def test_a_rate_outside_zero_one_is_refused_in_mastras_words(rate: Any) -> None:
    with pytest.raises(ValueError, match=r"to_pass\(min_pass_rate\): min_pass_rate must be within \[0, 1\]"):
        expect_evals(ITEMS, [], echo, gates=[HAS_X]).to_pass(rate)


def test_the_error_is_an_assertion_error_so_pytest_reports_a_failure() -> None:
    assert issubclass(EvalPassRateError, AssertionError)


@pytest.mark.parametrize("rate, text", [(2 / 3, "66.7%"), (1, "100%"), (0.0005, "0.1%"), (0.123449, "12.3%"),
                                        (0.8, "80%")])
def test_rates_print_as_mastras_format_rate(rate: float, text: str) -> None:
    assert format_rate(rate) == text


def test_a_failed_item_fails_the_gate_whatever_the_rate() -> None:
    """Issue 57 N2: 2 of 10 targets raising passed `to_pass(0.8)` (the gate's rate 80%) while
    `run_evals` called the same run failed: a failed item never passes."""
    items = [{"input": f"x {i}"} for i in range(10)]

    def flaky(question: str) -> str:
        if question in ("x 3", "x 7"):
            raise RuntimeError("the agent crashed")
        return question

    with pytest.raises(EvalPassRateError) as failed:
        expect_evals(items, [], flaky, gates=[HAS_X]).to_pass(0.8)
    assert str(failed.value).splitlines() == [
        "Eval did not pass (required pass rate: 80%).",
        "  ✗ gate has-x-scorer: 2 item(s) failed (the target or the gate raised); a failed item never passes, "
        "whatever the rate",
    ]
    assert failed.value.result.verdict == "failed"
    with pytest.raises(EvalPassRateError, match="1 item"):
        expect_evals(items[:4], [], flaky, gates=[HAS_X]).to_pass(0.0)
    assert expect_evals(items[:3], [], flaky, gates=[HAS_X]).to_pass(0.8).verdict == "passed"
