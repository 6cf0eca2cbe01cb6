"""`create_classifier_scorer`, Mastra's `createClassifierScorer` (core's evals/classifier-scorer.ts):
the score of each question type, Mastra's reasons and configuration errors word for word, and
the one judge call per batch under a grammar of the question's options only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge import Classifier, JudgeStep, create_classifier_scorer
from localjudge.judge import Generation
from localjudge.scoring.compat import js_number
from tests.fakes import FakeJudgeFactory

QUESTIONS: dict[str, Any] = {
    "intent": {"type": "choice", "instructions": "What does the user want?",
               "criteria": {"refund": "Money back for an order", "status": "Where an order is", "other": None}},
    "politeness": {"type": "score", "criteria": ["rude", "neutral", "friendly"]},
    "resolved": {"type": "boolean", "criteria": {"true": "The reply solves the request"}},
}
SUPPORT = Classifier(id="support", questions=QUESTIONS)
RUNS = [{"input": "I want my money back for order 17.", "output": "Refund issued."},
        {"input": "Where is order 18?", "output": "It ships today."}]


def state(run: Any, results: Any) -> dict[str, str]:
    return {"user": run.input, "agent": run.output}


def test_choice_scores_through_the_mapping_in_one_judge_call(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ClassifierAnswer=[{"answer": "refund"}, {"answer": "status"}])
    scorer = create_classifier_scorer("intent", classifier=SUPPORT, question="intent", state=state, judge=judge,
                                      scores={"refund": 1, "status": 0.25, "other": 0})
    first, second = scorer.run_batch(RUNS)
    assert (first.score, second.score) == (1.0, 0.25)
    assert first.reason == "Classifier question 'intent' selected 'refund' (score: 1)."  # Mastra's words
    assert second.reason == "Classifier question 'intent' selected 'status' (score: 0.25)."
    assert len(judge.calls) == 1 and len(judge.calls[0].prompts) == 2  # one call for the batch
    prompt = judge.calls[0].prompts[0][-1]["content"]
    assert "What does the user want?" in prompt and "- refund: Money back for an order" in prompt
    assert "- other\n" in prompt and json.dumps({"agent": "Refund issued."})[1:-1] in prompt
    assert scorer.id == "intent-scorer" and "Scores question 'intent'" in scorer.description


def test_the_grammar_allows_only_the_question_options(fake_judge: FakeJudgeFactory) -> None:
    scorer = create_classifier_scorer("intent", classifier=SUPPORT, question="intent", state=state,
                                      judge=fake_judge(ClassifierAnswer={"answer": "spam"}),
                                      scores={"refund": 1, "status": 0, "other": 0})
    step = scorer.analyze_step
    assert isinstance(step, JudgeStep) and isinstance(step.schema, type)
    assert step.schema.model_json_schema()["properties"]["answer"]["enum"] == ["refund", "status", "other"]
    assert scorer.run(RUNS[0]).score is None  # an answer off the list does not validate


def test_score_question_is_level_over_levels_minus_one(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ClassifierAnswer=[{"answer": "1"}, {"answer": "2"}])
    scorer = create_classifier_scorer("polite", classifier=SUPPORT, question="politeness", state=state, judge=judge)
    first, second = scorer.run_batch(RUNS)
    assert (first.score, second.score) == (0.5, 1.0)
    assert first.reason == "Classifier question 'politeness' returned score 1."
    assert "- 0: rude\n- 1: neutral\n- 2: friendly" in judge.calls[0].prompts[0][-1]["content"]
    assert "Question: politeness\n" in judge.calls[0].prompts[0][-1]["content"]  # no instructions: the id


def test_boolean_question_scores_the_answer_and_prob_score_p_true(fake_judge: FakeJudgeFactory) -> None:
    measured = Generation('{"answer":"true"}', label_probs=({"true": 0.7, "false": 0.3},))
    judge = fake_judge(ClassifierAnswer=[measured, {"answer": "false"}])
    scorer = create_classifier_scorer("resolved", classifier=SUPPORT, question="resolved", state=state, judge=judge)
    first, second = scorer.run_batch(RUNS)
    assert (first.score, second.score) == (1.0, 0.0)
    assert first.prob_score == 0.7 and second.prob_score is None  # no probabilities measured
    assert first.reason == "Classifier question 'resolved' returned P(true)=1."


def test_prob_score_of_a_choice_is_the_expected_mapped_score(fake_judge: FakeJudgeFactory) -> None:
    measured = Generation('{"answer":"refund"}', label_probs=({"refund": 0.6, "status": 0.4, "other": 0.0},))
    scorer = create_classifier_scorer("intent", classifier=SUPPORT, question="intent", state=state,
                                      judge=fake_judge(ClassifierAnswer=measured),
                                      scores={"refund": 1, "status": 0.5, "other": 0})
    assert scorer.run(RUNS[0]).prob_score == 0.8


def test_the_classifier_judge_answers_before_the_scorer_judge(fake_judge: FakeJudgeFactory) -> None:
    own = fake_judge(ClassifierAnswer={"answer": "true"}, identity="classifier-model")
    scorer = create_classifier_scorer("resolved", classifier=Classifier("c", QUESTIONS, judge=own),
                                      question="resolved", state=state, judge=fake_judge())
    assert scorer.run(RUNS[0]).score == 1.0 and len(own.calls) == 1
    assert "classifier-model" in scorer.key


def test_a_state_hook_that_raises_costs_its_row(fake_judge: FakeJudgeFactory) -> None:
    def picky(run: Any, results: Any) -> str:
        if "18" in run.input:
            raise RuntimeError("no order")
        return run.output
    scorer = create_classifier_scorer("resolved", classifier=SUPPORT, question="resolved", state=picky,
                                      judge=fake_judge(ClassifierAnswer={"answer": "true"}))
    first, second = scorer.run_batch(RUNS)
    assert first.score == 1.0 and second.score is None and "no order" in str(second.error)


@pytest.mark.parametrize("question, scores, message", [
    ("tone", None, "Question 'tone' is not configured on classifier 'support' for scorer 'x-scorer'."),
    ("intent", None, "Scorer 'x-scorer' must provide an exhaustive numeric scores mapping for choice question"),
    ("intent", {"refund": 1, "status": 2, "spam": 0},
     "Invalid scores mapping for choice question 'intent' on scorer 'x-scorer'. Missing: other. Unknown: spam. "
     "Outside 0-1: status."),
    ("intent", {"refund": "1", "status": float("nan"), "other": 0}, r"Non-numeric: refund, status\."),
    ("politeness", {"0": 1}, "Scorer 'x-scorer' cannot provide scores for score question 'politeness'."),
])
def test_mastra_configuration_errors(question: str, scores: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       if not message.startswith("Non") else message):
        create_classifier_scorer("x", classifier=SUPPORT, question=question, state=state, scores=scores)


@pytest.mark.parametrize("questions, message", [
    ({}, "Questions must be a non-empty object."),
    ({"q": {"type": "rating"}}, "Question 'q' has an invalid type."),
    ({"q": {"type": "choice", "criteria": {}}}, "Choice question 'q' criteria must be a non-empty object."),
    ({"q": {"type": "score", "criteria": ["only"]}}, "Score question 'q' criteria must contain at least two levels."),
    ({"q": {"type": "boolean", "criteria": {"maybe": "x"}}}, "Boolean question 'q' criteria may only contain"),
])
def test_classifier_questions_are_checked_as_mastra_checks_them(questions: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Classifier(id="c", questions=questions)


def test_a_classifier_id_string_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="classifier must be a Classifier, got str"):
        create_classifier_scorer("x", classifier="support", question="intent", state=state)  # type: ignore[arg-type]


@pytest.mark.parametrize("value, text", [(1.0, "1"), (0.25, "0.25"), (1 / 3, "0.3333333333333333"),
                                         (0.00001, "0.00001"), (1e-7, "1e-7"), (0.0, "0")])
def test_js_number_writes_as_javascript_does(value: float, text: str) -> None:
    assert js_number(value) == text
