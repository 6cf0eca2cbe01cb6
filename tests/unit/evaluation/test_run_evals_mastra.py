"""`run_evals` as Mastra's `runEvals` (@mastra/core 1.71.0, evals/run/index.ts): gates and the
``"failed"`` verdict, multi-turn `inputs` and `turns` items, per-turn gate, threshold and score
results, `summary.not_scorable`, and Mastra's checks of items and thresholds before any target
runs. Scorers here are function scorers (no judge), so each expectation is worked by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import create_scorer, not_scorable, run_evals
from localjudge.evaluation import GateResult, ThresholdResult, TurnResult

HAS_X = create_scorer("has_x").generate_score(lambda run, results: float("x" in run.output))
POLITE = create_scorer("polite").generate_score(lambda run, results: float("please" in run.output))
LONG = (create_scorer("long")
        .preprocess(lambda run, results: not_scorable("too short") if len(run.output) < 4 else {})
        .generate_score(lambda run, results: 1.0))
BROKEN = create_scorer("broken").generate_score(lambda run, results: 1 / 0)


def echo(question: str) -> str:
    return question


def test_a_gate_below_its_maximum_fails_the_run_before_thresholds() -> None:
    items = [{"input": "x please"}, {"input": "no"}]
    result = run_evals(items, [{"scorer": POLITE, "threshold": 0.1}], echo, gates=[HAS_X])
    assert result.gate_results == {"has-x-scorer": GateResult(0.5, False)}
    assert result.threshold_results == {"polite-scorer": ThresholdResult(0.5, 0.1, True)}
    assert result.verdict == "failed" and "has-x-scorer" not in result.scores  # gates are not scores
    assert result.items[0].gate_results["has-x-scorer"].score == 1.0
    passed = run_evals([{"input": "x please"}], [{"scorer": POLITE, "threshold": 0.1}], echo, gates=[HAS_X])
    assert passed.verdict == "passed" and passed.gate_results == {"has-x-scorer": GateResult(1.0, True)}
    scored = run_evals([{"input": "x"}], [{"scorer": POLITE, "threshold": 0.5}], echo, gates=[HAS_X])
    assert scored.verdict == "scored"  # the gate holds, a threshold does not


def test_a_failed_gate_run_counts_zero_and_a_gate_only_run_is_allowed() -> None:
    result = run_evals([{"input": "x"}], [], echo, gates=[BROKEN])
    assert result.gate_results == {"broken-scorer": GateResult(0.0, False, failed=1)} and result.verdict == "failed"
    assert result.items[0].gate_results["broken-scorer"].failed


def test_not_scorable_runs_are_left_out_of_means_gates_thresholds_and_the_verdict() -> None:
    items = [{"input": "a long answer"}, {"input": "no"}, {"input": "hi"}]
    result = run_evals(items, [{"scorer": LONG, "threshold": 1.0}], echo, gates=[LONG])
    assert result.summary.not_scorable == {"long-scorer": 4}  # two runs as a scorer, two as a gate
    assert result.scores == {"long-scorer": 1.0}
    assert result.verdict == "passed" and result.gate_results == {"long-scorer": GateResult(1.0, True)}
    summary = result.scorer_summaries["long-scorer"]
    assert (summary.scored, summary.unscored, summary.not_scorable) == (1, 0, 2)
    none = run_evals([{"input": "no"}], [{"scorer": LONG, "threshold": 0.5}], echo, gates=[LONG])
    assert none.verdict is None and none.gate_results is None and none.threshold_results is None  # no evidence
    assert none.scores == {"long-scorer": None} and none.summary.not_scorable == {"long-scorer": 2}


def test_inputs_run_in_turn_on_one_thread_and_are_judged_together() -> None:
    seen: list[tuple[str, str]] = []

    def agent(message: str, thread_id: str) -> str:
        seen.append((message, thread_id))
        return f"re: {message}"

    judged: list[Any] = []
    scorer = create_scorer("all").preprocess(lambda run, results: judged.append((run.input, run.raw["output"]))
                                             ).generate_score(lambda run, results: 1.0)
    result = run_evals([{"inputs": ["hello", "more x"]}, {"input": "single"}], [scorer], agent)
    assert [m for m, _ in seen] == ["hello", "more x", "single"]
    assert seen[0][1] == seen[1][1] != seen[2][1]  # one thread per item, shared by its turns
    judged = [j for j in judged if not str(j[0]).startswith("Probe")]  # the prompt hash's probe runs aside
    assert judged[0] == ("hello", [{"role": "assistant", "content": "re: hello"},
                                   {"role": "assistant", "content": "re: more x"}])  # the first input, every output
    assert judged[1] == ("single", "re: single") and result.summary.total_items == 2


def test_turns_are_judged_alone_and_aggregated_by_turn_index() -> None:
    items = [
        {"turns": [{"input": "x one", "gates": [HAS_X]}, {"input": "please x", "scorers": [POLITE]}]},
        {"turns": [{"input": "none", "gates": [HAS_X]},
                   {"input": "two", "scorers": [{"scorer": POLITE, "threshold": 0.5}]}]},
    ]
    result = run_evals(items, [HAS_X], echo)
    first, second = result.turn_results or []
    assert first == TurnResult(0, {"has-x-scorer": GateResult(0.5, False)}, None, None)
    assert second.index == 1 and second.scores == {"polite-scorer": 0.5}  # each turn's own output
    assert second.threshold_results == {"polite-scorer": ThresholdResult(0.0, 0.5, False)}  # item 2's only
    assert result.verdict == "failed"  # a turn's gate fails the run
    assert result.scores == {"has-x-scorer": 0.5}  # the whole conversation: its last reply
    assert [sorted(t) for t in result.items[0].turn_results] == [["has-x-scorer"], ["polite-scorer"]]
    assert result.items[0].turn_results[0]["has-x-scorer"].run_id.endswith("/turn-0")


def test_a_target_failing_mid_conversation_fails_the_item_only() -> None:
    def agent(message: str) -> str:
        if message == "boom":
            raise RuntimeError("down")
        return message

    result = run_evals([{"inputs": ["ok", "boom"]}, {"input": "x"}], [HAS_X], agent)
    assert result.summary.target_errors == 1 and result.items[0].target_error == "target failed: RuntimeError: down"
    assert result.items[0].scorer_results["has-x-scorer"].error_kind == "target_failed"
    assert result.scores == {"has-x-scorer": 1.0}


def test_the_target_gets_the_items_request_context_when_it_takes_one() -> None:
    got: list[Any] = []
    run_evals([{"input": "q", "requestContext": {"tier": "gold"}}], [HAS_X],
              lambda q, request_context: got.append(request_context) or "x")
    assert got == [{"tier": "gold"}]


@pytest.mark.parametrize(("threshold", "match"), [
    ({"min": 0.8, "max": 0.2}, r"min \(0.8\) is greater than its max \(0.2\)"),
    ({"min": 1.5}, r"a number in \[0, 1\]"), (-0.1, r"a number in \[0, 1\]"), (float("nan"), r"a number in \[0, 1\]"),
    ({}, "takes 'min' and/or 'max'"), ({"min": 0.2, "high": 0.9}, "takes 'min' and/or 'max'"),
])
def test_bad_thresholds_are_refused_before_any_target_runs(threshold: Any, match: str) -> None:
    ran: list[str] = []
    with pytest.raises(ValueError, match=match):
        run_evals([{"input": "q"}], [{"scorer": HAS_X, "threshold": threshold}], ran.append)
    with pytest.raises(ValueError, match=match):  # a turn's thresholds too, before anything runs
        run_evals([{"turns": [{"input": "q", "scorers": [{"scorer": HAS_X, "threshold": threshold}]}]}], [HAS_X],
                  ran.append)
    assert ran == []


@pytest.mark.parametrize(("item", "match"), [
    ({"output": "no input"}, "must be a dict with 'input', 'inputs' or 'turns'"),
    ({"inputs": []}, "'inputs' must be a non-empty list"),
    ({"input": "q", "turns": [{"input": "q"}]}, "'turns' cannot be combined"),
    ({"turns": []}, "'turns' must be a non-empty list"),
    ({"turns": [{"gates": []}]}, "turn 0 must be a dict with an 'input'"),
    ({"turns": [{"input": "q", "gates": ["not a scorer"]}]}, "each gate must be a Scorer"),
])
def test_bad_items_are_refused_before_any_target_runs(item: Any, match: str) -> None:
    ran: list[str] = []
    with pytest.raises((ValueError, TypeError), match=match):
        run_evals([{"input": "fine"}, item], [HAS_X], ran.append)
    assert ran == []


def test_no_scorer_and_no_gate_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one scorer or gate"):
        run_evals([{"input": "q"}], [], echo)
    with pytest.raises(ValueError, match="each once"):
        run_evals([{"input": "q"}], [], echo, gates=[HAS_X, HAS_X])
