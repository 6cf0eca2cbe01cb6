"""Context recall on the scripted fake judge: Mastra's min(1, attributed / claims) over the
ground truth's sentences, its edge cases (no ground truth, no context), the probability twin
and direct mode."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from localjudge import InvalidRunError
from localjudge.judge import Generation
from localjudge.samples.runs import Sample
from localjudge.scorers.judged.context_recall import analyze_schema, context_recall_scorer, recall
from tests.fakes import FakeJudgeFactory


def verdicts(labels: list[str]) -> dict[str, Any]:
    return {"verdicts": [{"verdict": label, "reason": "r"} for label in labels]}


def truth(n: int) -> str:
    return " ".join(f"Fact number {i} holds here." for i in range(1, n + 1))  # 5 words: not terse


def run(claims: int, **more: Any) -> dict[str, Any]:
    return {"input": "Tell me the facts.", "output": "Some answer.", "context": ["The context piece says one fact."],
            "ground_truth": truth(claims), **more}


# Mastra: min(1, #yes / #claims) x scale, rounded to two decimals.
@pytest.mark.parametrize(("labels", "scale", "expected"), [
    (["yes", "no"], 1.0, 0.5),
    (["yes", "yes", "no"], 1.0, 0.67),
    (["no", "no"], 1.0, 0.0),
    (["yes"], 1.0, 1.0),
    (["yes", "no", "no"], 10.0, 3.33),
    (["yes", "yes", "no"], 10.0, 6.67),
    (["yes", "yes", "yes", "no"], 2.0, 1.5),
])
def test_the_score_is_the_share_of_claims_the_context_supports(labels: list[str], scale: float, expected: float,
                                                               fake_judge: FakeJudgeFactory) -> None:
    result = context_recall_scorer(fake_judge(RecallVerdicts=verdicts(labels)), scale=scale).run(run(len(labels)))
    assert result.score == expected and result.error is None and result.reason == "ok"
    assert result.preprocess_step_result == {"claims": truth(len(labels)).replace(". ", ".|").split("|")}
    assert [(v["claim"], v["verdict"]) for v in result.analyze_step_result["verdicts"]] == \
        [(f"Fact number {i + 1} holds here.", label) for i, label in enumerate(labels)]


def test_recall_is_capped_at_one_and_zero_without_claims() -> None:
    yes = [{"verdict": "yes"}] * 3
    assert recall(yes, 2) == 1.0 and recall(yes, 0) == 0.0 and recall(yes[:1], 4) == 0.25


def test_the_judge_gets_one_verdict_per_ground_truth_sentence(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(RecallVerdicts=verdicts(["yes", "no", "yes"]))
    context_recall_scorer(judge).run(run(3, output="The judged output, never shown to the verdict step."))
    (call, _) = judge.calls
    assert call.schema_names == ("RecallVerdicts",)
    shown = call.prompts[0][-1]["content"]
    assert "1. Fact number 1 holds here.\n2. Fact number 2 holds here.\n3. Fact number 3 holds here." in shown
    assert "The context piece says one fact." in shown and "Tell me the facts." in shown and "never shown" not in shown
    claims = {"preprocess_step_result": {"claims": ["a", "b", "c"]}}
    items = analyze_schema(Sample("r", "q", "o"), claims).model_json_schema()["properties"]["verdicts"]
    assert (items["minItems"], items["maxItems"]) == (3, 3)


def test_a_long_ground_truth_is_every_sentence_asked_in_parts_of_one_call(fake_judge: FakeJudgeFactory) -> None:
    """23 sentences: 23 claims, asked as 10, 10 and 3 in the analyze step's one call, each verdict
    on its own claim (issue 46 item 3: no merged runs)."""
    def judged(prompt: Any) -> dict[str, Any]:
        facts = [int(n) for n in re.findall(r"Fact number (\d+) holds", str(prompt[-1]["content"]))]
        return verdicts(["yes" if n % 2 else "no" for n in facts])

    judge = fake_judge(RecallVerdicts=judged)
    result = context_recall_scorer(judge).run(run(23))
    (call,) = [c for c in judge.calls if c.schema_names[0] == "RecallVerdicts"]
    assert len(call.prompts) == 3
    assert result.preprocess_step_result["claims"] == [f"Fact number {i} holds here." for i in range(1, 24)]
    assert [(v["claim"], v["verdict"]) for v in result.analyze_step_result["verdicts"]] == [
        (f"Fact number {i} holds here.", "yes" if i % 2 else "no") for i in range(1, 24)]
    assert result.score == round(12 / 23, 2)


def test_the_reason_step_sees_the_reference_and_the_context_not_the_output(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(RecallVerdicts=verdicts(["yes", "no"]))
    result = context_recall_scorer(judge).run(run(2, output="Unrelated output text."))
    prompt = result.generate_reason_prompt or ""
    assert f"<<<REFERENCE\n{truth(2)}\nREFERENCE>>>" in prompt and "<<<CONTEXT" in prompt
    assert "Unrelated output text" not in prompt and "- no: Fact number 2 holds here. (r)" in prompt
    assert judge.calls[-1].schema_names == ("Reason",)


@pytest.mark.parametrize("missing", [{}, {"ground_truth": None}, {"ground_truth": "   "},
                                     {"groundTruth": float("nan")}])
@pytest.mark.parametrize("mode", ["pipeline", "direct"])
def test_no_ground_truth_scores_zero_without_the_judge(missing: dict[str, Any], mode: str,
                                                       fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    row = {k: v for k, v in run(1).items() if k != "ground_truth"} | missing
    result = context_recall_scorer(judge, scale=5, mode=mode).run(row)
    assert result.score == 0 and result.prob_score == 0 and "No ground truth" in (result.reason or "")
    assert not judge.calls


def test_mastra_camel_case_and_non_text_ground_truths_are_read(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(RecallVerdicts=verdicts(["yes"]))
    row = {k: v for k, v in run(1).items() if k != "ground_truth"}
    assert context_recall_scorer(judge).run({**row, "groundTruth": truth(1)}).score == 1.0
    result = context_recall_scorer(judge).run({**row, "input": "", "groundTruth": {"born": 1879, "in": "Ulm"}})
    # compact JSON, as Mastra's JSON.stringify: one "word", so one claim
    assert result.preprocess_step_result == {"claims": ['{"born":1879,"in":"Ulm"}'], "terse": True}


@pytest.mark.parametrize(("question", "claim"), [
    ("Which city is it set in?", 'The answer to "Which city is it set in?" is: Chicago.'),
    ("", "Chicago"),
])
def test_a_terse_ground_truth_is_one_claim_read_with_its_question(question: str, claim: str,
                                                                  fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(RecallVerdicts=verdicts(["yes"]))
    result = context_recall_scorer(judge).run(run(1, input=question, ground_truth="Chicago"))
    assert result.preprocess_step_result == {"claims": [claim], "terse": True} and result.score == 1.0
    assert f"1. {claim}" in judge.calls[0].prompts[0][-1]["content"]


@pytest.mark.parametrize("mode", ["pipeline", "direct"])
def test_without_context_the_run_is_refused_before_any_call(mode: str, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    row = {"input": "q", "output": "a", "ground_truth": "A fact."}
    with pytest.raises(InvalidRunError, match="context_recall needs context"):
        context_recall_scorer(judge, mode=mode).run(row)
    (result,) = context_recall_scorer(judge, mode=mode).run_batch([row], on_invalid="record")
    assert result.score is None and result.error_kind == "invalid_run" and not judge.calls


def test_context_can_come_from_the_scorer(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(RecallVerdicts=verdicts(["yes"]))
    row = {"output": "a", "ground_truth": "A fact."}
    assert context_recall_scorer(judge, context=["A fact, stated."]).run(row).score == 1.0
    hooked = context_recall_scorer(judge, get_context=lambda run: [f"Hooked: {run['ground_truth']}"])
    hooked.run(row)
    assert "Hooked: A fact." in judge.calls[-2].prompts[0][-1]["content"]


def test_prob_score_is_the_mean_yes_probability(fake_judge: FakeJudgeFactory) -> None:
    answer = Generation(text=json.dumps(verdicts(["yes", "no"])), finished=True, new_tokens=9,
                        label_probs=({"yes": 0.9, "no": 0.1}, {"yes": 0.3, "no": 0.7}))
    result = context_recall_scorer(fake_judge(RecallVerdicts=answer), scale=2).run(run(2))
    assert result.score == 1.0 and result.prob_score == 1.2  # (0.9 + 0.3) / 2 x 2


@pytest.mark.parametrize(("label", "expected"), [("yes", 4.0), ("no", 0.0)])
def test_direct_mode_asks_one_question_about_the_reference(label: str, expected: float,
                                                           fake_judge: FakeJudgeFactory) -> None:
    answer = Generation(text=json.dumps({"verdict": label, "reason": "Because."}), finished=True,
                        label_probs=({"yes": 0.75, "no": 0.25},))
    judge = fake_judge(DirectVerdict=answer)
    result = context_recall_scorer(judge, scale=4, mode="direct").run(run(2, output="Never shown."))
    assert result.score == expected and result.prob_score == 3.0 and result.reason == "Because."
    (call,) = judge.calls
    shown = call.prompts[0][-1]["content"]
    assert f"<<<REFERENCE\n{truth(2)}\nREFERENCE>>>" in shown and "The context piece says one fact." in shown
    assert "Never shown" not in shown and "everything the reference answer says" in shown
