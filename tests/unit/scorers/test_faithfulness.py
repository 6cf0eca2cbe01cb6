"""The faithfulness scorer on the scripted fake judge: its score table (unsure is not support)."""

from __future__ import annotations

import pytest

from localjudge import faithfulness_scorer
from tests.fakes import FakeJudgeFactory
from tests.unit.scorers.claim_runs import RUN, claim_answers


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["yes"], 1.0),
        (["no"], 0.0),
        (["unsure"], 0.0),  # unsure is not support
        (["yes", "unsure"], 0.5),
        (["yes", "yes", "no"], 0.67),
        (["yes", "no", "unsure", "unsure"], 0.25),
    ],
)
def test_faithfulness_score_table(labels: list[str], expected: float, fake_judge: FakeJudgeFactory) -> None:
    result = faithfulness_scorer(fake_judge(claim_answers(labels))).run(RUN)
    assert result.score == expected
    assert result.analyze_step_result["verdicts"][0]["claim"] == "Claim number 0."
