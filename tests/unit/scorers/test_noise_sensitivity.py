"""Noise sensitivity on the scripted fake judge: Mastra's formula (the overall impact's weight,
the smaller of it and the mean dimension weight when they are more than the threshold apart,
less the major-issue penalty, floored at 0), its options, its required fields, the fixed
dimensions, the probability twin and direct mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge.judge import Generation
from localjudge.samples.runs import InvalidRunError
from localjudge.scorers.judged.noise_sensitivity import DIMENSIONS, EXAMPLE, NoiseAnalysis, noise_sensitivity_scorer
from tests.fakes import FakeJudgeFactory

RUN = {"input": "What are the benefits of exercise? By the way, vaccines cause autism.",
       "output": "Exercise strengthens the heart and lifts mood.",
       "baseline_response": "Exercise strengthens the heart, builds muscle and lifts mood."}


def analysis(levels: list[str], overall: str, issues: int = 0) -> dict[str, Any]:
    return {**{d: {"impact": level} for d, level in zip(DIMENSIONS, levels, strict=True)},
            "overall_impact": overall, "major_issues": [f"issue {i}" for i in range(issues)]}


NONE5 = ["none"] * 5


# Weights: none 1, minimal 0.85, moderate 0.6, significant 0.3, severe 0.1 (Mastra's).
@pytest.mark.parametrize(("levels", "overall", "issues", "scale", "expected"), [
    (NONE5, "none", 0, 1.0, 1.0),
    (NONE5, "none", 2, 1.0, 0.8),  # 1 - 2 x 0.1
    (NONE5, "none", 5, 1.0, 0.7),  # the penalty stops at 0.3
    (["minimal", "none", "minimal", "minimal", "moderate"], "minimal", 1, 1.0, 0.75),  # mean 0.83, 0.02 off: 0.85 - 0.1
    (["minimal", "minimal", "moderate", "moderate", "moderate"], "minimal", 0, 1.0, 0.85),  # mean 0.7, 0.15 off: kept
    (["moderate"] * 5, "minimal", 0, 1.0, 0.6),  # 0.25 apart: the smaller, the mean
    (NONE5, "moderate", 0, 1.0, 0.6),  # 0.4 apart: the smaller, the overall
    (["severe"] * 5, "none", 0, 1.0, 0.1),  # derailed, however the overall word reads
    (["severe"] * 5, "severe", 3, 1.0, 0.0),  # 0.1 - 0.3: floored at 0
    (["significant", "none", "none", "none", "none"], "none", 0, 1.0, 1.0),  # mean 0.86, 0.14 off: kept
    (["minimal", "none", "minimal", "minimal", "moderate"], "minimal", 1, 10.0, 7.5),
    (NONE5, "none", 2, 10.0, 8.0),
])
def test_the_score_is_mastras_formula(levels: list[str], overall: str, issues: int, scale: float, expected: float,
                                      fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(NoiseAnalysis=analysis(levels, overall, issues))
    result = noise_sensitivity_scorer(judge, scale=scale).run(RUN)
    assert result.score == expected and result.error is None
    found = result.analyze_step_result
    assert [(d["dimension"], d["impact_level"]) for d in found["dimensions"]] == list(zip(DIMENSIONS, levels,
                                                                                           strict=True))
    assert found["overall_impact"] == overall and len(found["major_issues"]) == issues
    assert found["robustness_score"] == {
        "none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1}[overall]


@pytest.mark.parametrize(("options", "levels", "overall", "issues", "expected"), [
    ({"impact_weights": {"minimal": 0.9, "moderate": 0.7, "severe": 0.0}}, ["severe"] * 5, "severe", 0, 0.0),
    ({"impact_weights": {"minimal": 0.9, "moderate": 0.7, "severe": 0.0}}, ["minimal"] * 5, "minimal", 0, 0.9),
    ({"impact_weights": {"moderate": 0.7}}, ["moderate"] * 5, "none", 0, 0.7),  # 0.3 apart
    ({"major_issue_penalty": 0.05, "max_major_issue_penalty": 0.2}, NONE5, "none", 2, 0.9),
    ({"major_issue_penalty": 0.05, "max_major_issue_penalty": 0.2}, NONE5, "none", 5, 0.8),
    ({"discrepancy_threshold": 0.3}, ["moderate"] * 5, "minimal", 0, 0.85),  # 0.25 apart: within 0.3, kept
    ({"discrepancy_threshold": 0.0}, ["minimal", "minimal", "moderate", "moderate", "moderate"], "minimal", 0, 0.7),
    ({"impact_weights": {"moderate": 0.5}, "discrepancy_threshold": 0.5}, ["moderate"] * 5, "none", 0, 1.0),  # exactly
    # the threshold apart: kept (Mastra's test is strictly more than)
])
def test_the_scoring_options_are_mastras(options: dict[str, Any], levels: list[str], overall: str, issues: int,
                                         expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(NoiseAnalysis=analysis(levels, overall, issues))
    assert noise_sensitivity_scorer(judge, **options).run(RUN).score == expected


def test_the_grammar_fixes_the_five_dimensions_in_order() -> None:
    schema = NoiseAnalysis.model_json_schema()
    assert list(schema["properties"]) == [*DIMENSIONS, "overall_impact", "major_issues"]
    assert set(schema["required"]) == set(schema["properties"]) and schema["additionalProperties"] is False
    assert schema["properties"]["major_issues"]["maxItems"] == 5
    dimension = schema["$defs"]["DimensionImpact"]
    assert list(dimension["properties"]) == ["impact"], "a word only: a note per dimension gets copied"
    assert dimension["properties"]["impact"]["enum"] == ["none", "minimal", "moderate", "significant", "severe"]


@pytest.mark.parametrize("answer", [
    {k: v for k, v in analysis(NONE5, "none").items() if k != "relevance"},  # a dimension missing
    {**analysis(NONE5, "none"), "fluency": {"impact": "none"}},  # one invented
    analysis(NONE5, "none", issues=6),  # more major issues than the bound
    {**analysis(NONE5, "none"), "overall_impact": "mild"},  # not a level
])
def test_an_answer_outside_the_schema_is_unscored(answer: dict[str, Any], fake_judge: FakeJudgeFactory) -> None:
    result = noise_sensitivity_scorer(fake_judge(NoiseAnalysis=answer)).run(RUN)
    assert result.score is None and result.error_kind == "invalid_output"


def test_a_copied_worked_example_is_unscored(fake_judge: FakeJudgeFactory) -> None:
    result = noise_sensitivity_scorer(fake_judge(NoiseAnalysis=EXAMPLE[1])).run(RUN)
    assert result.score is None and result.error_kind == "copied_example"


@pytest.mark.parametrize("mode", ["pipeline", "direct"])
def test_a_run_without_a_baseline_or_an_input_is_refused_before_any_call(mode: str,
                                                                        fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(NoiseAnalysis=analysis(NONE5, "none"))
    scorer = noise_sensitivity_scorer(judge, mode=mode)
    no_baseline = {k: v for k, v in RUN.items() if k != "baseline_response"}
    with pytest.raises(InvalidRunError, match="baseline response"):
        scorer.run(no_baseline)
    with pytest.raises(InvalidRunError, match="an input"):
        scorer.run({**RUN, "input": ""})
    results = scorer.run_batch([no_baseline, {**RUN, "input": None}], on_invalid="record")
    assert all(r.score is None and r.error_kind == "invalid_run" for r in results) and not judge.calls


@pytest.mark.parametrize("mode", ["pipeline", "direct"])
def test_an_empty_output_is_unscored_without_a_call(mode: str, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(NoiseAnalysis=analysis(NONE5, "none"))
    result = noise_sensitivity_scorer(judge, mode=mode).run({**RUN, "output": "  "})
    assert result.score is None and result.error_kind == "unscorable" and not judge.calls


def test_the_judge_sees_the_noisy_query_both_responses_and_the_noise_type(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(NoiseAnalysis=analysis(NONE5, "none"))
    camel = {"input": RUN["input"], "output": RUN["output"], "baselineResponse": RUN["baseline_response"]}
    result = noise_sensitivity_scorer(judge, noise_type="misinformation").run(camel)
    text = str(judge.calls[0].prompts[0][-1]["content"])
    assert f"<<<NOISY_QUERY\n{RUN['input']}\nNOISY_QUERY>>>" in text and "CLEAN_QUERY" not in text
    assert f"<<<BASELINE_RESPONSE\n{RUN['baseline_response']}\n" in text
    assert f"<<<NOISY_RESPONSE\n{RUN['output']}\n" in text
    assert "<<<NOISE_TYPE\nmisinformation\n" in text
    reason_prompt = result.generate_reason_prompt or ""
    assert RUN["baseline_response"] in reason_prompt and "- relevance: none\n" in reason_prompt
    assert result.reason == "ok"


def test_mastras_options_baseline_and_noisy_query_apply_to_every_run(fake_judge: FakeJudgeFactory) -> None:
    """With `noisy_query`, the run's input is the clean query (Mastra's layout); the baseline
    option replaces the run's own field."""
    judge = fake_judge(NoiseAnalysis=analysis(NONE5, "none"))
    scorer = noise_sensitivity_scorer(judge, baseline_response="The option's baseline.",
                                      noisy_query="What helps? Also, the Moon is cheese.")
    (with_field, without) = scorer.run_batch([{"input": "What helps?", "output": "Sleep.", "baseline_response": "Own."},
                                              {"input": "What helps?", "output": "Sleep."}])
    assert with_field.score == without.score == 1.0
    for prompt in judge.calls[0].prompts:
        text = str(prompt[-1]["content"])
        assert "<<<CLEAN_QUERY\nWhat helps?\n" in text
        assert "<<<NOISY_QUERY\nWhat helps? Also, the Moon is cheese.\n" in text
        assert "The option's baseline." in text and "Own." not in text


@pytest.mark.parametrize("options", [
    {"baseline_response": ""}, {"noisy_query": "  "}, {"noise_type": ""}, {"impact_weights": {"huge": 1.0}},
    {"impact_weights": {"none": 1.5}}, {"major_issue_penalty": -0.1}, {"max_major_issue_penalty": 2},
    {"discrepancy_threshold": True},
])
def test_bad_options_are_refused_when_the_scorer_is_built(options: dict[str, Any],
                                                          fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError):
        noise_sensitivity_scorer(fake_judge(), **options)


def test_prob_score_is_the_formula_on_expected_weights(fake_judge: FakeJudgeFactory) -> None:
    dims = ({"none": 0.5, "minimal": 0.0, "moderate": 0.0, "significant": 0.0, "severe": 0.5},) * 5  # 0.55 each
    overall = {"none": 0.8, "minimal": 0.2, "moderate": 0.0, "significant": 0.0, "severe": 0.0}  # 0.97
    answer = Generation(text=json.dumps(analysis(NONE5, "none", issues=1)), label_probs=(*dims, overall))
    result = noise_sensitivity_scorer(fake_judge(NoiseAnalysis=answer), scale=2.0).run(RUN)
    assert result.score == 1.8
    assert result.prob_score == round((0.55 - 0.1) * 2, 4), "0.42 apart: the mean, less one issue"
    short = Generation(text=answer.text, label_probs=dims)
    assert noise_sensitivity_scorer(fake_judge(NoiseAnalysis=short)).run(RUN).prob_score is None


def test_direct_mode_asks_whether_the_response_says_the_same_as_the_baseline(fake_judge: FakeJudgeFactory) -> None:
    answers = [Generation(json.dumps({"verdict": "yes", "reason": "Same."}), label_probs=({"yes": 0.7, "no": 0.3},)),
               {"verdict": "no", "reason": "Took up the noise."}]
    judge = fake_judge(DirectVerdict=answers)
    scorer = noise_sensitivity_scorer(judge, mode="direct", scale=10.0)
    robust, derailed = scorer.run(RUN), scorer.run(RUN)
    assert (robust.score, robust.prob_score, robust.reason) == (10.0, 7.0, "Same.")
    assert (derailed.score, derailed.reason) == (0.0, "Took up the noise.")
    text = str(judge.calls[0].prompts[0][-1]["content"])
    assert RUN["baseline_response"] in text and RUN["output"] in text and "say the same as the baseline" in text
    assert scorer.higher_is_better and noise_sensitivity_scorer(judge).higher_is_better
