"""Trajectory accuracy on the scripted fake judge: Mastra's weighted score (0.6 necessary, 0.3
in order, less 0.1 for missing steps, clamped), its no-step rules, the expected trajectory's
precedence, the grammar's fixed evaluation count and missing-step names, and the probability
twin."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge.judge import Generation
from localjudge.scorers.judged.trajectory_accuracy import (
    part_schema,
    trajectory_accuracy,
    trajectory_accuracy_scorer,
    verdicts_schema,
)
from tests.fakes import FakeJudgeFactory

EXPECTED = ["search_flights", "book_flight", "send_confirmation"]


def answer(necessary: str, in_order: str, missing: list[str] | None = None) -> dict[str, Any]:
    """One evaluation per character pair: ``y``/``n`` for necessary and for in order."""
    return {"step_evaluations": [{"necessary": "yes" if n == "y" else "no", "in_order": "yes" if o == "y" else "no",
                                  "reason": f"r{i}"} for i, (n, o) in enumerate(zip(necessary, in_order, strict=True))],
            "missing_steps": missing or []}


def run(steps: int, **more: Any) -> dict[str, Any]:
    names = ["search_flights", "book_flight", "send_confirmation", "search_flights"]
    return {"input": "Book me the cheapest flight to Oslo.", "output": "Booked: flight SK 123.",
            "tool_calls": [{"tool_name": names[i % 4], "args": {"to": "OSL"}, "result": "ok"} for i in range(steps)],
            **more}


# Mastra: 0.6 x necessary/total + 0.3 x ordered/total - 0.1 x missing/(total + missing), clamped to [0, 1].
@pytest.mark.parametrize(("necessary", "in_order", "missing", "scale", "expected"), [
    ("yy", "yy", [], 1.0, 0.9),  # flawless: 0.9, as in Mastra
    ("yyy", "yyy", [], 10.0, 9.0),
    ("yn", "yy", ["send_confirmation"], 1.0, 0.57),  # 0.3 + 0.3 - 0.1/3
    ("yyn", "yny", ["send_confirmation"], 1.0, 0.58),  # 0.4 + 0.2 - 0.1/4 = 0.575, half up
    ("y", "n", [], 1.0, 0.6),
    ("n", "y", [], 1.0, 0.3),
    ("yyn", "nyn", [], 1.0, 0.5),  # 0.4 + 0.1
    ("nn", "nn", EXPECTED, 1.0, 0.0),  # -0.06 clamped to 0
    ("ynn", "ynn", ["book_flight", "send_confirmation"], 1.0, 0.26),  # 0.2 + 0.1 - 0.1 x 2/5
    ("ynn", "yyn", ["book_flight", "send_confirmation"], 1.0, 0.36),  # 0.2 + 0.2 - 0.04
    ("ynn", "ynn", ["book_flight", "send_confirmation"], 5.0, 1.3),
])
def test_the_score_weighs_necessary_and_ordered_steps_less_missing_ones(
        necessary: str, in_order: str, missing: list[str], scale: float, expected: float,
        fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(TrajectoryVerdicts=answer(necessary, in_order, missing))
    result = trajectory_accuracy_scorer(judge, scale=scale).run(run(len(necessary), expected_trajectory=EXPECTED))
    assert result.score == expected, result
    found = result.analyze_step_result
    assert [e["step_name"] for e in found["step_evaluations"]] == [c["tool_name"] for c in run(len(necessary))[
        "tool_calls"]]
    assert found["missing_steps"] == missing
    assert found["extra_steps"] == [e["step_name"] for e, n in zip(found["step_evaluations"], necessary, strict=True)
                                    if n == "n"], "the extra steps are those judged unnecessary"


@pytest.mark.parametrize(("necessary", "in_order", "missing", "extra", "expected"), [
    ([], [], 0, 0, 1.0), ([], [], 2, 0, 0.0), ([], [], 0, 1, 0.5), ([], [], 1, 1, 0.0),  # Mastra 1.10.2's no-step rules
    ([0.5, 1.0], [1.0, 1.0], 0, 0, 0.75),  # probabilities too: 0.6 x 0.75 + 0.3
])
def test_the_pure_formula_and_its_no_step_rules(necessary: list[float], in_order: list[float], missing: int,
                                                extra: int, expected: float) -> None:
    assert trajectory_accuracy(necessary, in_order, missing, extra) == pytest.approx(expected)


@pytest.mark.parametrize(("missing", "scale", "expected"), [([], 1.0, 1.0), (["search_flights"], 1.0, 0.0),
                                                            ([], 4.0, 4.0)])
def test_no_steps_and_no_expected_trajectory_ask_the_judge_for_missing_steps(
        missing: list[str], scale: float, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(TrajectoryVerdicts=answer("", "", missing))
    result = trajectory_accuracy_scorer(judge, scale=scale).run(run(0))
    assert result.score == expected and result.analyze_step_result["extra_steps"] == []
    assert "The agent took no steps." in str(judge.calls[0].prompts[0][-1]["content"])


def test_no_steps_against_an_expected_trajectory_score_0_without_the_judge(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = trajectory_accuracy_scorer(judge, scale=3.0).run(run(0, expectedTrajectory=EXPECTED))
    assert (result.score, result.prob_score) == (0.0, 0.0) and "(3) is missing" in (result.reason or "")
    assert not judge.calls


def test_the_static_expected_trajectory_takes_precedence(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(TrajectoryVerdicts=answer("y", "y"))
    static = {"steps": [{"name": "search_flights", "stepType": "tool_call"}, {"name": "pay"}]}
    trajectory_accuracy_scorer(judge, expected_trajectory=static).run(run(1, expected_trajectory=EXPECTED))
    text = str(judge.calls[0].prompts[0][-1]["content"])
    assert "<<<EXPECTED\n1. [tool_call] search_flights\n2. pay\nEXPECTED>>>" in text and "book_flight" not in text
    judge = fake_judge(TrajectoryVerdicts=answer("y", "y"))
    trajectory_accuracy_scorer(judge, expected_trajectory=[]).run(run(1, expected_trajectory=EXPECTED))
    assert "<<<EXPECTED" not in str(judge.calls[0].prompts[0][-1]["content"]), "given empty: no expected steps"
    judge = fake_judge(TrajectoryVerdicts=answer("y", "y"))
    trajectory_accuracy_scorer(judge).run(run(1, expected_trajectory=EXPECTED))
    assert "<<<EXPECTED\n1. search_flights\n2. book_flight" in str(judge.calls[0].prompts[0][-1]["content"])


def test_the_judge_sees_the_numbered_steps_with_args_and_results(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(TrajectoryVerdicts=answer("yy", "yy"))
    result = trajectory_accuracy_scorer(judge).run(run(2))
    text = str(judge.calls[0].prompts[0][-1]["content"])
    assert "Book me the cheapest flight to Oslo." in text and "Booked: flight SK 123." in text
    assert ('1. [tool_call] search_flights (args: {"to":"OSL"}, result: ok)\n'
            '2. [tool_call] book_flight (args: {"to":"OSL"}, result: ok)') in text
    assert "Give exactly 2 evaluations" in text and "<<<EXPECTED" not in text
    assert "search_flights: necessary yes, in order yes (r0)" in (result.generate_reason_prompt or "")
    calls = [{"tool_name": "search_flights", "args": {"note": "x" * 400}, "result": "two\nlines"},
             {"tool_name": "book_flight", "state": "output-error"}]
    judge = fake_judge(TrajectoryVerdicts=answer("yy", "yy"))
    trajectory_accuracy_scorer(judge).run({"input": "Book.", "output": "", "tool_calls": calls})
    steps = str(judge.calls[0].prompts[0][-1]["content"]).split("<<<STEPS\n", 1)[1].split("\nSTEPS>>>")[0]
    first, second = steps.split("\n")
    assert first.endswith("…, result: two lines)") and len(first) < 360, "one line, long args cut"
    assert second == "2. [tool_call] book_flight (args: {}, failed)"


def test_the_grammar_fixes_the_count_and_the_missing_steps(fake_judge: FakeJudgeFactory) -> None:
    fields = verdicts_schema(2, tuple(EXPECTED)).model_json_schema()["properties"]
    assert (fields["step_evaluations"]["minItems"], fields["step_evaluations"]["maxItems"]) == (2, 2)
    assert fields["missing_steps"]["items"]["enum"] == EXPECTED and fields["missing_steps"]["maxItems"] == 3
    result = trajectory_accuracy_scorer(fake_judge(TrajectoryVerdicts=answer("y", "y"))).run(run(2))
    assert result.score is None and result.error_kind == "invalid_output", "one evaluation for two steps"
    result = trajectory_accuracy_scorer(fake_judge(TrajectoryVerdicts=answer("y", "y", ["pay"]))).run(
        run(1, expected_trajectory=EXPECTED))
    assert result.score is None and result.error_kind == "invalid_output", "not an expected step"
    free = trajectory_accuracy_scorer(fake_judge(TrajectoryVerdicts=answer("y", "y", ["pay", "pay"]))).run(run(1))
    assert free.analyze_step_result["missing_steps"] == ["pay"] and free.score == 0.85, "0.9 - 0.1 x 1/2; once"


def test_steps_are_read_from_mastra_output_messages(fake_judge: FakeJudgeFactory) -> None:
    invocations = [{"toolCallId": f"c{i}", "toolName": name, "args": {}, "result": "ok", "state": "result"}
                   for i, name in enumerate(["search_flights", "book_flight"])]
    output = [{"role": "assistant", "content": {"format": 2, "toolInvocations": invocations,
                                                "parts": [{"type": "text", "text": "Booked."}]}}]
    result = trajectory_accuracy_scorer(fake_judge(TrajectoryVerdicts=answer("yy", "yy"))).run(
        {"input": "Book a flight.", "output": output})
    assert result.score == 0.9
    assert [e["step_name"] for e in result.analyze_step_result["step_evaluations"]] == ["search_flights", "book_flight"]


def test_a_60_step_trajectory_is_scored_in_parts(fake_judge: FakeJudgeFactory) -> None:
    """Issue 60: over 20 steps are asked in parts of 20 in one judge call, each part showing the
    earlier steps by name and its own in full; the last part names the missing steps."""
    parts = [answer("y" * 20, "y" * 20), answer("y" * 9 + "n" + "y" * 10, "y" * 20),
             answer("y" * 20, "y" * 20, ["send_receipt"])]
    judge = fake_judge(TrajectoryVerdicts=parts, Reason={"reason": "r"})
    result = trajectory_accuracy_scorer(judge).run(run(60))
    assert result.error is None, result.error
    found = result.analyze_step_result
    assert len(found["step_evaluations"]) == 60 and found["missing_steps"] == ["send_receipt"]
    assert [e["necessary"] for e in found["step_evaluations"]].index("no") == 29  # the 30th step, in order
    assert result.score == 0.89  # 0.6 x 59/60 + 0.3 - 0.1 x 1/61
    (call,) = judge.calls[:1]
    assert len(call.prompts) == 3
    first, last = call.prompts[0][-1]["content"], call.prompts[2][-1]["content"]
    assert "Steps 1 to 20 of the 60" in first and "EARLIER" not in first and "no missing steps" in first
    assert "39. send_confirmation\n40. search_flights" in last and "41. [tool_call] search_flights" in last
    assert "then the missing steps of the whole trajectory" in last
    assert part_schema(20).model_json_schema()["properties"]["missing_steps"]["maxItems"] == 0


def test_a_run_of_20_steps_is_asked_whole_as_before(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(TrajectoryVerdicts=answer("y" * 20, "y" * 20), Reason={"reason": "r"})
    result = trajectory_accuracy_scorer(judge).run(run(20))
    assert result.score == 0.9 and len(judge.calls[0].prompts) == 1
    assert "Give exactly 20 evaluations, one per step, in order" in (result.analyze_prompt or "")


def test_past_the_parts_is_unscored_and_too_many_expected_refused(fake_judge: FakeJudgeFactory) -> None:
    result = trajectory_accuracy_scorer(fake_judge()).run(run(161))  # 9 parts of 20: over max_parts (8)
    assert result.score is None and result.error_kind == "unscorable" and "max_parts of 8" in (result.error or "")
    result = trajectory_accuracy_scorer(fake_judge()).run(run(1, expected_trajectory=[f"s{i}" for i in range(61)]))
    assert result.score is None and result.error_kind == "unscorable"
    with pytest.raises(ValueError, match="at most 60"):
        trajectory_accuracy_scorer(fake_judge(), expected_trajectory=[f"s{i}" for i in range(61)])
    with pytest.raises(ValueError):
        trajectory_accuracy_scorer(fake_judge(), expected_trajectory="search_flights")


def test_prob_score_uses_both_readings_of_each_step(fake_judge: FakeJudgeFactory) -> None:
    out = Generation(text=json.dumps(answer("yn", "yy", ["send_confirmation"])), finished=True, new_tokens=20,
                     label_probs=({"yes": 0.9, "no": 0.1}, {"yes": 0.8, "no": 0.2},
                                  {"yes": 0.3, "no": 0.7}, {"yes": 0.6, "no": 0.4}))
    result = trajectory_accuracy_scorer(fake_judge(TrajectoryVerdicts=out), scale=2.0).run(
        run(2, expected_trajectory=EXPECTED))
    soft = (0.9 + 0.3) / 2 * 0.6 + (0.8 + 0.6) / 2 * 0.3 - 1 / 3 * 0.1
    assert result.prob_score == round(soft * 2, 4)
    short = Generation(text=out.text, finished=True, new_tokens=20, label_probs=out.label_probs[:3])
    assert trajectory_accuracy_scorer(fake_judge(TrajectoryVerdicts=short)).run(
        run(2, expected_trajectory=EXPECTED)).prob_score is None, "a reading missing: no probability score"
