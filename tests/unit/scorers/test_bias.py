"""Bias on the scripted fake judge: Mastra's biased opinions over opinions (statements judged facts
leave the count)."""

from __future__ import annotations

import pytest

from localjudge import bias_scorer
from tests.fakes import FakeJudgeFactory
from tests.unit.scorers.statement_runs import sentences, verdicts


# Mastra's bias: #yes / #opinions x scale (its judge lists only opinions: here "fact" leaves the count).
@pytest.mark.parametrize(("labels", "scale", "expected"), [
    (["yes", "no", "fact"], 1.0, 0.5),
    (["yes", "yes"], 1.0, 1.0),
    (["no"], 1.0, 0.0),
    (["fact", "fact"], 1.0, 0.0),  # no opinions: Mastra's n = 0 gives 0
    (["yes", "no", "no", "fact"], 10.0, 3.33),
])
def test_bias_is_biased_opinions_over_opinions(labels: list[str], scale: float, expected: float,
                                               fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(BiasVerdicts=verdicts(labels))
    result = bias_scorer(judge, scale=scale).run({"input": "q", "output": sentences(len(labels))})
    assert result.score == expected and result.error is None
    assert [v["statement"] for v in result.analyze_step_result["verdicts"]] == \
        [f"Statement number {i}." for i in range(1, len(labels) + 1)]
