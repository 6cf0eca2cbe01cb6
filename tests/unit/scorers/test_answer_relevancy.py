"""Answer relevancy on the scripted fake judge: unsure statements counted at their weight (Mastra's
formula), the weight checked, no input unscored."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import answer_relevancy_scorer
from tests.fakes import FakeJudgeFactory
from tests.unit.scorers.statement_runs import sentences, verdicts


# Mastra's answer relevancy: (#yes + uncertaintyWeight x #unsure) / n x scale.
@pytest.mark.parametrize(("labels", "weight", "scale", "expected"), [
    (["yes", "unsure", "no"], 0.3, 1.0, 0.43),
    (["yes", "yes"], 0.3, 1.0, 1.0),
    (["unsure"], 0.5, 1.0, 0.5),
    (["no", "no"], 0.3, 10.0, 0.0),
    (["unsure", "unsure", "yes", "no"], 0.3, 10.0, 4.0),
    (["unsure"], 0.0, 1.0, 0.0),
])
def test_answer_relevancy_counts_unsure_statements_at_their_weight(
        labels: list[str], weight: float, scale: float, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(RelevancyVerdicts=verdicts(labels))
    scorer = answer_relevancy_scorer(judge, scale=scale, uncertainty_weight=weight)
    assert scorer.run({"input": "What?", "output": sentences(len(labels))}).score == expected


def test_answer_relevancy_without_an_input_is_unscored(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = answer_relevancy_scorer(judge).run({"input": "", "output": "An answer."})
    assert result.score is None and result.error_kind == "unscorable" and "needs an input" in (result.error or "")
    assert not judge.calls


@pytest.mark.parametrize("bad", [-0.1, 1.5, True, "0.3"])
def test_the_uncertainty_weight_is_checked(bad: Any, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="uncertainty_weight must be a number from 0 to 1"):
        answer_relevancy_scorer(fake_judge(), uncertainty_weight=bad)
