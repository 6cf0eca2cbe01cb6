"""`run_evals` never passes a run whose target or scorer failed on an item.

Mastra's `runEvals` (@mastra/core 1.71.0, `runEvals` in evals/run/index.ts) aborts the whole run
when a target or a scorer throws (`RUN_EXPERIMENT_TARGET_FAILED_TO_GENERATE_RESULT`,
`RUN_EXPERIMENT_SCORER_FAILED_TO_SCORE_RESULT`), so no verdict can pass with a failed item; a gate
that throws counts 0. localjudge records the failure on the item and goes on, so the same rule
reads: a threshold (top level or a turn's) with a failed run does not pass, and a gate's failed
run counts 0. A CI gate on `verdict == "passed"` then fails on a broken agent.
"""

from __future__ import annotations

import pytest

from localjudge import create_scorer, not_scorable, run_evals
from localjudge.evaluation import GateResult, ThresholdResult

PERFECT = create_scorer("perfect").generate_score(lambda run, results: 1.0)
ITEMS = [{"input": f"q{i}"} for i in range(10)]


def broken_but_one(question: str) -> str:
    if question != "q0":
        raise RuntimeError("agent down")
    return "fine"


def test_nine_of_ten_targets_failing_do_not_pass_a_threshold() -> None:
    result = run_evals(ITEMS, [{"scorer": PERFECT, "threshold": 0.9}], broken_but_one)
    assert result.summary.target_errors == 9 and result.scores == {"perfect-scorer": 1.0}  # the one good item
    assert result.threshold_results == {"perfect-scorer": ThresholdResult(1.0, 0.9, False, failed=9)}
    assert result.verdict == "scored"


def test_nine_of_ten_scorer_calls_failing_do_not_pass_a_threshold() -> None:
    flaky = create_scorer("flaky").generate_score(lambda run, results: 1.0 if run.output == "q0" else 1 / 0)
    result = run_evals(ITEMS, [{"scorer": flaky, "threshold": 0.9}], lambda q: q)
    assert result.summary.target_errors == 0 and result.scorer_summaries["flaky-scorer"].unscored == 9
    assert result.threshold_results == {"flaky-scorer": ThresholdResult(1.0, 0.9, False, failed=9)}
    assert result.verdict == "scored"


def test_one_failed_item_is_enough_as_mastra_aborts_on_it() -> None:
    def one_broken(question: str) -> str:
        if question == "q9":
            raise RuntimeError("agent down")
        return "fine"

    result = run_evals(ITEMS, [{"scorer": PERFECT, "threshold": {"min": 0.5}}], one_broken)
    assert result.threshold_results == {"perfect-scorer": ThresholdResult(1.0, {"min": 0.5}, False, failed=1)}
    assert result.verdict == "scored"
    gated = run_evals(ITEMS, [], one_broken, gates=[PERFECT])
    assert gated.gate_results == {"perfect-scorer": GateResult(0.9, False, failed=1)} and gated.verdict == "failed"


def test_failed_runs_beside_not_scorable_ones_still_fail_the_threshold() -> None:
    none_to_judge = (create_scorer("none").preprocess(lambda run, results: not_scorable("nothing"))
                     .generate_score(lambda run, results: 1.0))
    items = [{"input": "q0"}, {"input": "q1"}]
    result = run_evals(items, [{"scorer": none_to_judge, "threshold": 0.5}], broken_but_one)
    assert result.summary.not_scorable == {"none-scorer": 1}
    assert result.threshold_results == {"none-scorer": ThresholdResult(None, 0.5, False, failed=1)}
    assert result.verdict == "scored"
    only_not_scorable = run_evals(items[:1], [{"scorer": none_to_judge, "threshold": 0.5}], broken_but_one)
    assert only_not_scorable.threshold_results is None and only_not_scorable.verdict is None  # no evidence


@pytest.mark.parametrize("broken", ["target", "scorer"])
def test_a_turns_items_failure_reaches_its_turns_gates_and_thresholds(broken: str) -> None:
    def agent(message: str) -> str:
        if broken == "target" and message == "boom":
            raise RuntimeError("agent down")
        return message

    scorer = PERFECT if broken == "target" else create_scorer("perfect").generate_score(
        lambda run, results: 1 / 0 if run.output == "boom" else 1.0)
    items = [{"turns": [{"input": "ok", "gates": [scorer]}, {"input": q, "scorers": [
        {"scorer": scorer, "threshold": 0.9}]}]} for q in ("fine", *["boom"] * 9)]
    result = run_evals(items, [], agent)
    first, second = result.turn_results or []
    if broken == "target":  # the whole item failed: every turn's gates and scorers too
        assert first.gate_results == {"perfect-scorer": GateResult(0.1, False, failed=9)} and result.verdict == "failed"
        assert result.items[1].turn_results[0]["perfect-scorer"].error_kind == "target_failed"
    else:
        assert first.gate_results == {"perfect-scorer": GateResult(1.0, True)} and result.verdict == "scored"
    assert second.threshold_results == {"perfect-scorer": ThresholdResult(1.0, 0.9, False, failed=9)}
