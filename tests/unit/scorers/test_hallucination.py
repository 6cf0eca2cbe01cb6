"""The hallucination scorer on the scripted fake judge: its score table, its judge's words mapped to
Mastra's labels, the steps and prompts a result keeps, where its context comes from."""

from __future__ import annotations

import json

import pytest

from localjudge import hallucination_scorer
from localjudge.judge import Generation
from localjudge.scorers.judged.hallucination import HallucinationVerdict
from tests.fakes import FakeJudgeFactory
from tests.unit.scorers.claim_runs import CONTEXT, OUTPUT, RUN, claim_answers, in_words


@pytest.mark.parametrize(
    ("labels", "scale", "expected"),
    [
        (["no"], 1.0, 0.0),
        (["yes"], 1.0, 1.0),
        (["yes", "no"], 1.0, 0.5),
        (["yes", "no", "no"], 1.0, 0.33),
        (["yes", "yes", "no"], 1.0, 0.67),
        (["yes", "no", "no", "no", "no", "no", "no", "no"], 1.0, 0.13),  # 0.125 rounds half up
        (["yes", "no"], 10.0, 5.0),
        (["yes", "no", "no"], 5.0, 1.67),
    ],
)
def test_hallucination_score_table(labels: list[str], scale: float, expected: float,
                                   fake_judge: FakeJudgeFactory) -> None:
    result = hallucination_scorer(fake_judge(claim_answers(labels)), scale=scale).run(RUN)
    assert result.score == expected
    assert result.reason == "Explained."
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]] == labels
    assert result.analyze_step_result["verdicts"][0]["statement"] == "Claim number 0."


def test_the_hallucination_judge_answers_in_words_and_the_result_keeps_mastras_labels(
        fake_judge: FakeJudgeFactory) -> None:
    """Asked for "yes" = hallucinated, a 1.5B judge wrote "yes" with the reason "The answer matches
    the context" on half of HaluEval's rows: it answers supported / unsupported instead."""
    answer = Generation(json.dumps(in_words("yes", "no")), label_probs=(
        {"supported": 0.2, "unsupported": 0.8}, {"supported": 0.9, "unsupported": 0.1}))
    judge = fake_judge(Claims={"claims": ["It was built in 1925.", "It is in Paris."]}, HallucinationVerdicts=answer)
    result = hallucination_scorer(judge).run(RUN)
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]] == ["yes", "no"]  # Mastra's polarity
    assert result.score == 0.5 and result.prob_score == pytest.approx((0.8 + 0.1) / 2)
    assert HallucinationVerdict.model_json_schema()["properties"]["verdict"]["enum"] == ["supported", "unsupported"]
    assert "- unsupported: It was built in 1925." in (result.generate_reason_prompt or "")


def test_result_keeps_every_step_and_prompt(fake_judge: FakeJudgeFactory) -> None:
    result = hallucination_scorer(fake_judge(claim_answers(["yes", "no"]))).run({**RUN, "run_id": "r1"})
    assert result.run_id == "r1"
    assert result.preprocess_step_result == {"claims": ["Claim number 0.", "Claim number 1."]}
    assert OUTPUT in (result.preprocess_prompt or "")
    assert CONTEXT in (result.analyze_prompt or "") and "2. Claim number 1." in (result.analyze_prompt or "")
    assert "0.5" in (result.generate_reason_prompt or "")


def test_get_context_takes_precedence(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(claim_answers(["no"]))
    scorer = hallucination_scorer(judge, context="static context", get_context=lambda run: ["from get_context"])
    result = scorer.run(RUN)
    assert "from get_context" in (result.analyze_prompt or "")
    assert "static context" not in (result.analyze_prompt or "")


def test_static_context_used_when_run_has_none(fake_judge: FakeJudgeFactory) -> None:
    scorer = hallucination_scorer(fake_judge(claim_answers(["no"])), context=["one", "two"])
    result = scorer.run({"input": "q", "output": "a b"})
    assert "one\ntwo" in (result.analyze_prompt or "")


def test_chat_messages_judge_last_assistant_message(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(claim_answers(["no"]))
    run = {
        "input": [{"role": "system", "content": "sys"}, {"role": "user", "content": "first question"},
                  {"role": "user", "content": "second"}],
        "output": [{"role": "assistant", "content": "old answer"}, {"role": "user", "content": "more?"},
                   {"role": "assistant", "content": [{"type": "text", "text": "the final answer of the chat"}]}],
        "context": CONTEXT,
    }
    result = hallucination_scorer(judge).run(run)
    assert "final answer" in (result.preprocess_prompt or "") and "old answer" not in (result.preprocess_prompt or "")
