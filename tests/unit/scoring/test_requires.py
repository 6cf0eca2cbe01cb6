"""`Scorer(requires=...)`: a run without a required field (ground truth, system, conversation, tool
calls, expected trajectory, baseline) is refused, or recorded unscored, before any judge call."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from localjudge import FakeJudge, JudgeStep, create_scorer
from localjudge.samples.runs import InvalidRunError
from localjudge.scoring.schemas import ReasonText, Strict
from localjudge.scoring.scorer import REQUIRED_HINTS
from tests.unit.samples.test_run_fields import BASE, assistant, user


class Verdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


def requiring(judge: FakeJudge, *fields: str, shows: str = "ground_truth") -> Any:
    """A one-step scorer that requires `fields` and shows the sample's `shows` field to its judge."""
    step = JudgeStep(instructions="Does the answer match?", schema=Verdict,
                     prompt=lambda run, results: f"<<<ANSWER\n{run.output}\nANSWER>>>\n"
                                                 f"<<<FIELD\n{getattr(run, shows)}\nFIELD>>>")
    return (create_scorer("needy", judge=judge, requires=fields).analyze(step)
            .generate_score(lambda run, results: float(results["analyze_step_result"]["verdict"] == "yes")))


def verdict_judge() -> FakeJudge:
    return FakeJudge({"Verdict": lambda prompt: {"verdict": "yes", "reason": "r"}})


RUN_WITH_EVERYTHING = {**BASE, "ground_truth": "Paris is in France.", "system": "Be brief.",
                       "conversation": [user("Where is Paris?"), assistant("In France.")],
                       "tool_calls": ["search"], "expected_trajectory": ["search"],
                       "baseline_response": "France."}
FIELD_KEYS = {"input": ("input",), "ground_truth": ("ground_truth",), "system": ("system",),
              "conversation": ("conversation",), "tool_calls": ("tool_calls",),
              "expected_trajectory": ("expected_trajectory",), "baseline_response": ("baseline_response",)}


@pytest.mark.parametrize("field", sorted(REQUIRED_HINTS))
def test_requires_refuses_a_run_without_the_field(field: str) -> None:
    judge = verdict_judge()
    scorer = requiring(judge, field)
    lacking = {k: v for k, v in RUN_WITH_EVERYTHING.items() if k not in FIELD_KEYS[field]}
    with pytest.raises(InvalidRunError) as refused:
        scorer.run(lacking)
    assert str(refused.value) == f"run 0: needy needs {REQUIRED_HINTS[field]}"
    assert judge.calls == []  # refused before any model call
    assert scorer.run(RUN_WITH_EVERYTHING).score == 1.0


def test_a_refused_run_is_recorded_unscored_without_a_judge_call() -> None:
    judge = verdict_judge()
    scorer = requiring(judge, "ground_truth")
    lacking, given = {**BASE, "run_id": "lacking"}, {**BASE, "run_id": "given", "groundTruth": "Paris"}
    results = scorer.run_batch([lacking, given], on_invalid="record")
    assert (results[0].score, results[0].error_kind) == (None, "invalid_run")
    assert "needy needs a ground truth: the reference answer ('ground_truth' or 'groundTruth')" in (
        results[0].error or "")
    assert results[1].score == 1.0
    assert [len(c.prompts) for c in judge.calls] == [1]  # only the run with a ground truth was judged


def test_a_plain_string_run_has_no_conversation_to_require() -> None:
    scorer = requiring(verdict_judge(), "conversation", shows="turns")
    with pytest.raises(InvalidRunError, match="needs a conversation"):
        scorer.run(BASE)
    assert scorer.run({"input": [user("Hi")], "output": "Hello."}).score == 1.0


def test_requires_names_known_fields_only() -> None:
    with pytest.raises(ValueError, match=r"requires names unknown run fields \['groundTruth'\]; known: "):
        requiring(verdict_judge(), "groundTruth")
