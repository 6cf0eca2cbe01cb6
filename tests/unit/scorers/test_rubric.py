"""The rubric scorer on the scripted fake judge: Mastra's pass/fail rule (every required
criterion met; none marked required means all are; no rubric passes), its checks, its reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge import rubric_scorer
from localjudge.judge import Generation
from tests.fakes import FakeJudgeFactory

RUN = {"input": "Write a greeting.", "output": "Hello and welcome to the shop!"}


def answers(labels: list[str]) -> dict[str, Any]:
    return {"verdicts": [{"verdict": label, "reason": f"r{i}"} for i, label in enumerate(labels)]}


@pytest.mark.parametrize(("criteria", "labels", "scale", "expected"), [
    (["Greets.", "Names the shop."], ["yes", "yes"], 1.0, 1.0),
    (["Greets.", "Names the shop."], ["yes", "no"], 1.0, 0.0),  # none marked: all required
    ([{"criterion": "Greets.", "required": True}, {"criterion": "Is short.", "required": False}],
     ["yes", "no"], 1.0, 1.0),  # an optional criterion missed: still a pass
    ([{"criterion": "Greets.", "required": True}, {"criterion": "Is short.", "required": False}],
     ["no", "yes"], 10.0, 0.0),
    ([{"criterion": "Greets.", "required": False}, "Names the shop."], ["no", "yes"], 5.0, 5.0),
])
def test_the_rubric_passes_only_when_every_required_criterion_is_met(
        criteria: list[Any], labels: list[str], scale: float, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(CriterionVerdicts=answers(labels))
    result = rubric_scorer(judge, criteria=criteria, scale=scale).run(RUN)
    assert result.score == expected
    verdicts = result.analyze_step_result["verdicts"]
    assert [v["verdict"] for v in verdicts] == labels and len(verdicts) == len(criteria)
    assert result.reason.startswith("Passed" if expected else "Failed")
    assert all(v["criterion"] in result.reason for v in verdicts)


def test_no_criteria_pass_without_the_judge(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    assert rubric_scorer(judge, criteria=[]).run(RUN).score == 1 and not judge.calls


@pytest.mark.parametrize(("criteria", "error"), [
    (7, TypeError), ([""], ValueError), ([{"criterion": "x", "required": "yes"}], ValueError),
    ([{"required": True}], ValueError), (["c"] * 21, ValueError),
])
def test_bad_criteria_are_refused_when_the_scorer_is_built(criteria: Any, error: type[Exception],
                                                           fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(error):
        rubric_scorer(fake_judge(), criteria=criteria)


def test_the_judge_sees_the_request_the_response_and_the_numbered_criteria(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(CriterionVerdicts=answers(["yes", "yes"]))
    rubric_scorer(judge, criteria=["Greets.", "Names the shop."]).run(RUN)
    (call,) = judge.calls
    text = str(call.prompts[0][-1]["content"])
    assert "Write a greeting." in text and "Hello and welcome" in text and "1. Greets.\n2. Names the shop." in text


def test_prob_score_is_the_probability_that_every_required_criterion_is_met(fake_judge: FakeJudgeFactory) -> None:
    answer = Generation(text=json.dumps(answers(["yes", "yes", "no"])), finished=True, new_tokens=9,
                        label_probs=({"yes": 0.9, "no": 0.1}, {"yes": 0.5, "no": 0.5}, {"yes": 0.2, "no": 0.8}))
    criteria = ["A.", {"criterion": "B.", "required": True}, {"criterion": "C.", "required": False}]
    result = rubric_scorer(fake_judge(CriterionVerdicts=answer), criteria=criteria).run(RUN)
    assert result.prob_score == round(0.9 * 0.5, 4), "A and B are required, C is not"


def test_mastras_spellings_are_read_as_mastra_reads_them(fake_judge: FakeJudgeFactory) -> None:
    """createRubricScorer's `{description, required}` and one string, a criterion a line (list
    markers dropped, blank lines skipped, every one required)."""
    judge = fake_judge(CriterionVerdicts=answers(["yes", "no"]))
    described = [{"description": "Greets.", "required": True}, {"description": "Is short.", "required": False}]
    assert rubric_scorer(judge, criteria=described).run(RUN).score == 1.0  # the missed one is optional
    judge = fake_judge(CriterionVerdicts=answers(["yes", "no"]))
    assert rubric_scorer(judge, criteria="- Greets.\n\n2) Names the shop.\n").run(RUN).score == 0.0
    assert "1. Greets.\n2. Names the shop." in str(judge.calls[0].prompts[0][-1]["content"])
