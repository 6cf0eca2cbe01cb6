"""Prompt alignment on the scripted fake judge: Mastra's weighted formula per evaluation mode
(ratings in words, requirements met / listed), the inputs each mode needs, the empty output,
the probability twin and direct mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge.judge import Generation
from localjudge.samples.runs import InvalidRunError
from localjudge.scorers.judged import prompt_alignment, prompt_alignment_prompts
from localjudge.scorers.judged.prompt_alignment import AlignmentAnalysis, prompt_alignment_scorer
from tests.fakes import FakeJudgeFactory

RUN = {"input": "Write a haiku about rain.", "output": "Soft rain on the roof, all night.",
       "system": "You are a poet. Answer in English."}


def analysis(intent: str, met: list[str], completeness: str, appropriateness: str) -> dict[str, Any]:
    return {"intent": {"rating": intent},
            "requirements": [{"requirement": f"Requirement {i}", "met": m} for i, m in enumerate(met, 1)],
            "completeness": {"rating": completeness},
            "appropriateness": {"rating": appropriateness}}


# Mastra: user 0.4 intent + 0.3 requirements + 0.2 completeness + 0.1 appropriateness; system
# 0.35/0.35/0.15/0.15; both = 0.7 user + 0.3 user = the user formula. fully 1, mostly 0.7, partly 0.4, not 0.
@pytest.mark.parametrize(("evaluation_mode", "answer", "scale", "expected"), [
    ("user", ("fully", ["yes", "yes", "no"], "mostly", "partly"), 1.0, 0.78),  # .4 + .3*2/3 + .2*.7 + .1*.4
    ("system", ("fully", ["yes", "yes", "no"], "mostly", "partly"), 1.0, 0.75),  # .35 + .35*2/3 + .105 + .06
    ("both", ("fully", ["yes", "yes", "no"], "mostly", "partly"), 1.0, 0.78),  # the user formula
    ("user", ("fully", ["yes"], "fully", "fully"), 1.0, 1.0),
    ("user", ("fully", ["yes", "yes"], "fully", "fully"), 10.0, 10.0),
    ("user", ("not", ["no", "no"], "not", "not"), 1.0, 0.0),
    ("user", ("partly", ["no"], "not", "fully"), 5.0, 1.3),  # (.16 + 0 + 0 + .1) x 5
    ("system", ("mostly", ["yes", "no"], "fully", "not"), 1.0, 0.57),  # .245 + .175 + .15 + 0
    ("both", ("fully", ["yes", "no"], "mostly", "fully"), 10.0, 7.9),  # (.4 + .15 + .14 + .1) x 10
])
def test_the_score_is_mastras_weighted_sum(evaluation_mode: str, answer: tuple[Any, ...], scale: float,
                                           expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(AlignmentAnalysis=analysis(*answer))
    result = prompt_alignment_scorer(judge, scale=scale, evaluation_mode=evaluation_mode).run(RUN)
    assert result.score == expected and result.error is None
    found = result.analyze_step_result
    assert found["intent"]["score"] == prompt_alignment.RATINGS[answer[0]]
    assert found["requirements_score"] == pytest.approx(answer[1].count("yes") / len(answer[1]))
    assert [r["met"] for r in found["requirements"]] == answer[1]


@pytest.mark.parametrize(("evaluation_mode", "shown", "hidden"), [
    ("user", ["<<<REQUEST\nWrite a haiku"], ["<<<SYSTEM", "You are a poet"]),
    ("system", ["<<<SYSTEM\nYou are a poet"], ["<<<REQUEST", "Write a haiku"]),
    ("both", ["<<<SYSTEM\nYou are a poet", "<<<REQUEST\nWrite a haiku"], []),
])
def test_each_mode_shows_the_judge_its_prompts_and_the_response(
        evaluation_mode: str, shown: list[str], hidden: list[str], fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(AlignmentAnalysis=analysis("fully", ["yes"], "fully", "fully"))
    prompt_alignment_scorer(judge, evaluation_mode=evaluation_mode).run(RUN)
    analyze, reason = judge.calls
    text = str(analyze.prompts[0][-1]["content"])
    assert all(s in text for s in shown) and not any(h in text for h in hidden)
    assert "<<<RESPONSE\nSoft rain on the roof" in text
    assert analyze.prompts[0][0]["content"] == prompt_alignment.analyze_system(
        prompt_alignment.TARGETS[evaluation_mode])
    assert ("<<<SYSTEM" in str(reason.prompts[0][-1]["content"])) == (evaluation_mode != "user")


@pytest.mark.parametrize(("evaluation_mode", "run", "needs"), [
    ("user", {"output": "An answer.", "system": "Be brief."}, "an input"),
    ("system", {"input": "A question?", "output": "An answer."}, "a system prompt"),
])
def test_a_run_without_the_prompt_its_mode_judges_is_refused_before_any_call(
        evaluation_mode: str, run: dict[str, Any], needs: str, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorer = prompt_alignment_scorer(judge, evaluation_mode=evaluation_mode)
    with pytest.raises(InvalidRunError, match=f"prompt_alignment needs {needs}"):
        scorer.run(run)
    (result,) = scorer.run_batch([run], on_invalid="record")
    assert result.score is None and result.error_kind == "invalid_run" and not judge.calls


def test_both_mode_takes_either_prompt_and_unscores_a_run_with_neither(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(AlignmentAnalysis=analysis("fully", ["yes"], "fully", "fully"))
    scorer = prompt_alignment_scorer(judge)  # "both", Mastra's default
    only_system, only_input, neither = scorer.run_batch([
        {"output": "An answer.", "system": "Be brief."}, {"input": "A question?", "output": "An answer."},
        {"output": "An answer."}])
    assert only_system.score == 1.0 and "<<<SYSTEM" in only_system.analyze_prompt
    assert "<<<REQUEST" not in only_system.analyze_prompt
    assert only_input.score == 1.0 and "<<<SYSTEM" not in only_input.analyze_prompt
    assert neither.score is None and neither.error_kind == "unscorable" and "'input'" in neither.error
    assert len(judge.calls[0].prompts) == 2, "the run with neither prompt never reached the judge"


@pytest.mark.parametrize("mode", ["pipeline", "direct"])
def test_an_empty_output_is_unscored_without_a_judge_call(mode: str, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = prompt_alignment_scorer(judge, mode=mode).run({**RUN, "output": "  "})
    assert result.score is None and result.error_kind == "unscorable" and "output is empty" in result.error
    assert not judge.calls


def test_requirements_are_bounded_and_at_least_one(fake_judge: FakeJudgeFactory) -> None:
    too_many = analysis("fully", ["yes"] * 9, "fully", "fully")
    none = analysis("fully", [], "fully", "fully")
    judge = fake_judge(AlignmentAnalysis=[too_many, none])
    results = prompt_alignment_scorer(judge).run_batch([RUN, {**RUN, "run_id": "second"}])
    assert [r.error_kind for r in results] == ["invalid_output", "invalid_output"]
    bounds = AlignmentAnalysis.model_json_schema()["properties"]["requirements"]
    assert (bounds["minItems"], bounds["maxItems"]) == (1, prompt_alignment_prompts.MAX_REQUIREMENTS)


def test_prob_score_uses_the_expected_ratings_and_requirement_probabilities(fake_judge: FakeJudgeFactory) -> None:
    ratings = ({"fully": 0.5, "mostly": 0.5, "partly": 0.0, "not": 0.0},  # intent: expected 0.85
               {"fully": 0.0, "mostly": 0.0, "partly": 1.0, "not": 0.0},  # completeness: 0.4
               {"fully": 0.2, "mostly": 0.0, "partly": 0.0, "not": 0.8})  # appropriateness: 0.2
    met = ({"yes": 0.9, "no": 0.1}, {"yes": 0.3, "no": 0.7})  # requirements: 0.6
    answer = Generation(text=json.dumps(analysis("fully", ["yes", "no"], "partly", "not")), finished=True,
                        label_probs=(ratings[0], *met, ratings[1], ratings[2]))
    judge = fake_judge(AlignmentAnalysis=answer)
    user = prompt_alignment_scorer(judge, evaluation_mode="user").run(RUN)
    system = prompt_alignment_scorer(judge, evaluation_mode="system").run(RUN)
    assert user.prob_score == round(0.4 * 0.85 + 0.3 * 0.6 + 0.2 * 0.4 + 0.1 * 0.2, 4)
    assert system.prob_score == round(0.35 * 0.85 + 0.35 * 0.6 + 0.15 * 0.4 + 0.15 * 0.2, 4)
    short = Generation(text=answer.text, finished=True, label_probs=(ratings[0], met[0], ratings[1], ratings[2]))
    assert prompt_alignment_scorer(fake_judge(AlignmentAnalysis=short)).run(RUN).prob_score is None


def test_the_reason_step_sees_the_ratings_and_each_requirement(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(AlignmentAnalysis=analysis("mostly", ["yes", "no"], "partly", "fully"),
                       Reason={"reason": "Mostly there."})
    result = prompt_alignment_scorer(judge).run(RUN)
    assert result.reason == "Mostly there."
    text = result.generate_reason_prompt
    assert "- intent: mostly\n" in text and "- requirements: 1 of 2 met" in text
    assert "  - yes: Requirement 1\n  - no: Requirement 2" in text and "- appropriateness: fully\n" in text
    assert f"Score: {result.score:g} (from 0 to 1;" in text


@pytest.mark.parametrize("evaluation_mode", ["user", "system", "both"])
def test_the_worked_examples_are_valid_and_unshown_fields_stay_hidden(evaluation_mode: str,
                                                                     fake_judge: FakeJudgeFactory) -> None:
    AlignmentAnalysis.model_validate(prompt_alignment.example_answer(evaluation_mode))
    judge = fake_judge(AlignmentAnalysis=prompt_alignment.example_answer(evaluation_mode))
    result = prompt_alignment_scorer(judge, evaluation_mode=evaluation_mode).run(RUN)
    assert result.error_kind == "copied_example", "an answer replaying the worked example is not scored"
    (example_user, example_answer) = judge.calls[0].prompts[0][1:3]
    assert json.loads(example_answer["content"]) == prompt_alignment.example_answer(evaluation_mode)
    assert ("pesticides" in example_user["content"]) == (evaluation_mode != "user")


@pytest.mark.parametrize(("verdict", "scale", "expected"), [("yes", 1.0, 1.0), ("no", 1.0, 0.0), ("yes", 10.0, 10.0)])
def test_direct_mode_is_one_yes_or_no(verdict: str, scale: float, expected: float,
                                      fake_judge: FakeJudgeFactory) -> None:
    answer = Generation(json.dumps({"verdict": verdict, "reason": "Does it."}), label_probs=({"yes": 0.8, "no": 0.2},))
    judge = fake_judge(DirectVerdict=answer)
    result = prompt_alignment_scorer(judge, mode="direct", evaluation_mode="system", scale=scale).run(RUN)
    assert result.score == expected and result.reason == "Does it." and result.prob_score == round(0.8 * scale, 4)
    (call,) = judge.calls
    assert "<<<SYSTEM\nYou are a poet" in str(call.prompts[0][-1]["content"]) and "<<<REQUEST" not in str(
        call.prompts[0][-1]["content"])
    with pytest.raises(InvalidRunError):
        prompt_alignment_scorer(judge, mode="direct", evaluation_mode="system").run({"input": "q", "output": "a"})


@pytest.mark.parametrize("options", [{"evaluation_mode": "assistant"}])
def test_bad_options_are_refused_when_the_scorer_is_built(options: dict[str, Any],
                                                          fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError):
        prompt_alignment_scorer(fake_judge(), **options)


def test_the_modes_hash_apart(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    hashes = {prompt_alignment_scorer(judge, evaluation_mode=m, mode=d).prompt_hash
              for m in ("user", "system", "both") for d in ("pipeline", "direct")}
    assert len(hashes) == 6
