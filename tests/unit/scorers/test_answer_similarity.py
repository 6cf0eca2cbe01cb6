"""Answer similarity on the scripted fake judge: Mastra's formula (match points over the best
possible, less the contradiction and capped extra-information penalties, clamped) with its
options, its edge cases (no ground truth, an empty output), the probability twin, direct mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge.judge import ChatPrompt, Generation
from localjudge.samples.runs import InvalidRunError, Sample
from localjudge.scorers.judged import answer_similarity
from localjudge.scorers.judged.answer_similarity import Weights, answer_similarity_scorer, similarity
from tests.fakes import FakeJudgeFactory, toxicity_statements


def reference_statements(prompt: ChatPrompt) -> list[str]:
    """The numbered reference statements of an analyze prompt (numbers stripped)."""
    text = str(prompt[-1]["content"]).split("<<<REFERENCE\n", 1)[1].split("\nREFERENCE>>>", 1)[0]
    return [line.split(". ", 1)[1] for line in text.split("\n")]


# What scores any run (the entries for tests/fakes.py DEFAULT_ANSWERS): everything agrees, exactly.
ANSWERS = {
    "ResponseChecks": lambda prompt: {"verdicts": [{"verdict": "agrees", "reason": "r"}] * len(
        toxicity_statements(prompt))},
    "ReferenceMatches": lambda prompt: {"matches": [{"match": "exact", "reason": "r"}] * len(
        reference_statements(prompt))},
}


def sentences(word: str, n: int) -> str:
    return " ".join(f"{word} statement number {i}." for i in range(1, n + 1))


def run(matches: int, checks: int, **more: Any) -> dict[str, Any]:
    return {"input": "What is it?", "output": sentences("Output", checks),
            "ground_truth": sentences("Reference", matches), **more}


def scripted(matches: list[str], checks: list[str]) -> dict[str, Any]:
    return {"ReferenceMatches": {"matches": [{"match": m, "reason": "r"} for m in matches]},
            "ResponseChecks": {"verdicts": [{"verdict": c, "reason": "r"} for c in checks]}}


# Mastra: exact 1 + bonus (1.2), semantic 0.8, partial 0.4, missing -0.15, over n x 1.2; minus 1.0
# per contradiction and min(0.05 x extras, 0.2); clamped to [0, 1]; x scale, two decimals.
@pytest.mark.parametrize(("matches", "checks", "scale", "expected"), [
    (["exact"], ["agrees"], 1.0, 1.0),
    (["reworded"], ["agrees"], 1.0, 0.67),  # 0.8 / 1.2
    (["partial"], ["agrees"], 1.0, 0.33),  # 0.4 / 1.2
    (["missing"], ["extra"], 1.0, 0.0),  # -0.15 / 1.2 - 0.05, clamped
    (["exact", "reworded"], ["agrees", "agrees"], 1.0, 0.83),  # 2.0 / 2.4
    (["exact", "partial"], ["agrees", "agrees"], 10.0, 6.67),  # 1.6 / 2.4 x 10
    (["exact", "exact", "missing", "missing"], ["agrees", "agrees"], 1.0, 0.44),  # (2.4 - 0.3) / 4.8
    (["exact"], ["agrees", "contradicts"], 1.0, 0.0),  # 1 - 1.0
    (["exact"], ["agrees", "extra", "extra", "extra"], 1.0, 0.85),  # 1 - 0.15
    (["exact"], ["agrees", *["extra"] * 6], 1.0, 0.8),  # the extras' penalty is capped at 0.2
    (["exact", "exact"], ["agrees", "extra"], 5.0, 4.75),  # (1 - 0.05) x 5
])
def test_the_score_is_mastras_formula(matches: list[str], checks: list[str], scale: float, expected: float,
                                      fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(scripted(matches, checks))
    result = answer_similarity_scorer(judge, scale=scale).run(run(len(matches), len(checks)))
    assert result.score == expected and result.error is None
    analysis = result.analyze_step_result
    assert [m["ground_truth_unit"] for m in analysis["matches"]] == \
        [f"Reference statement number {i}." for i in range(1, len(matches) + 1)]
    assert len(analysis["extra_in_output"]) == checks.count("extra")
    assert len(analysis["contradictions"]) == checks.count("contradicts")


@pytest.mark.parametrize(("options", "matches", "checks", "expected"), [
    ({"contradiction_penalty": 0.3}, ["exact", "reworded"], ["agrees", "contradicts"], 0.53),  # 2.0/2.4 - 0.3
    ({"semantic_threshold": 0.7, "exact_match_bonus": 0.3, "missing_penalty": 0.2, "scale": 10.0},
     ["exact", "reworded", "partial", "missing"], ["agrees"], 4.13),  # (1.3 + 0.7 + 0.35 - 0.2) / 5.2 x 10
    ({"extra_info_penalty": 0.1}, ["exact"], ["agrees", "extra"], 0.9),
    ({"missing_penalty": 0.0}, ["exact", "missing"], ["agrees"], 0.5),
])
def test_mastras_options_change_the_formula(options: dict[str, Any], matches: list[str], checks: list[str],
                                            expected: float, fake_judge: FakeJudgeFactory) -> None:
    scorer = answer_similarity_scorer(fake_judge(scripted(matches, checks)), **options)
    assert scorer.run(run(len(matches), len(checks))).score == expected


def test_no_units_score_zero() -> None:
    assert similarity(0.0, 0, 0, 0, Weights()) == 0.0


def test_the_judge_says_reworded_and_the_result_keeps_mastras_semantic(fake_judge: FakeJudgeFactory) -> None:
    result = answer_similarity_scorer(fake_judge(scripted(["reworded", "partial"], ["agrees"]))).run(run(2, 1))
    assert [m["match_type"] for m in result.analyze_step_result["matches"]] == ["semantic", "partial"]
    assert result.preprocess_step_result["output_units"] == ["Output statement number 1."]


def test_one_verdict_per_statement_of_each_text_is_asked(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    answer_similarity_scorer(judge).run(run(2, 3))
    checks, matches = [next(c for c in judge.calls if c.schema_names == (family,))
                       for family in ("ResponseChecks", "ReferenceMatches")]
    assert toxicity_statements(checks.prompts[0]) == [f"Output statement number {i}." for i in (1, 2, 3)]
    assert "Reference statement number 2." in str(checks.prompts[0][-1]["content"])
    assert reference_statements(matches.prompts[0]) == [f"Reference statement number {i}." for i in (1, 2)]
    sample = Sample("r", "q", sentences("Output", 3), ground_truth=sentences("Reference", 2))
    for schema, key, n in ((answer_similarity.checks_schema, "verdicts", 3),
                           (answer_similarity.matches_schema, "matches", 2)):
        field = schema(sample, {}).model_json_schema()["properties"][key]
        assert (field["minItems"], field["maxItems"]) == (n, n)


def test_the_reason_step_sees_the_reference(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    result = answer_similarity_scorer(judge).run(run(1, 1))
    (call,) = [c for c in judge.calls if c.schema_names == ("Reason",)]
    text = str(call.prompts[0][-1]["content"])
    assert "<<<REFERENCE\nReference statement number 1.\nREFERENCE>>>" in text and result.reason == "ok"
    assert "- exact: Reference statement number 1." in text and "- agrees: Output statement number 1." in text


def test_without_a_ground_truth_the_run_is_refused_before_any_call(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    for mode in ("pipeline", "direct"):
        with pytest.raises(InvalidRunError, match="answer_similarity needs a ground truth"):
            answer_similarity_scorer(judge, mode=mode).run({"input": "q", "output": "An answer."})
        (result,) = answer_similarity_scorer(judge, mode=mode).run_batch(
            [{"output": "An answer.", "ground_truth": "  "}], on_invalid="record")
        assert result.score is None and result.error_kind == "invalid_run"
    assert not judge.calls


def test_not_requiring_a_ground_truth_scores_zero_without_the_judge(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    for mode in ("pipeline", "direct"):
        result = answer_similarity_scorer(judge, mode=mode, require_ground_truth=False, scale=10).run(
            {"input": "q", "output": "An answer."})
        assert result.score == 0 and result.prob_score == 0 and "No ground truth" in (result.reason or "")
    assert not judge.calls


@pytest.mark.parametrize(("output", "truth", "expected"), [
    ("  ", "Paris is the capital.", 0.0),  # empty: every reference statement missing
    ("4", "4", 10.0),  # Mastra's own case: the same answer
    ("paris is the capital", "Paris is the capital.", 10.0),  # case, spacing and end punctuation ignored
])
def test_an_empty_or_identical_output_is_decided_without_the_judge(output: str, truth: str, expected: float,
                                                                   fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    for mode in ("pipeline", "direct"):
        result = answer_similarity_scorer(judge, mode=mode, scale=10).run({"output": output, "groundTruth": truth})
        assert result.score == expected
    assert not judge.calls


def test_a_ground_truth_that_is_not_text_is_compared_as_json(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    result = answer_similarity_scorer(judge).run({"output": "The result is 42 points.",
                                                  "ground_truth": {"answer": 42, "unit": "points"}})
    assert result.score == 1.0
    assert result.preprocess_step_result["ground_truth_units"] == ['{"answer":42,"unit":"points"}']


def test_prob_score_is_the_formula_on_expected_counts(fake_judge: FakeJudgeFactory) -> None:
    matches = Generation(json.dumps({"matches": [{"match": "exact", "reason": "r"}]}), label_probs=(
        {"exact": 0.5, "missing": 0.1, "partial": 0.1, "reworded": 0.3},))
    checks = Generation(json.dumps({"verdicts": [{"verdict": "agrees", "reason": "r"}]}), label_probs=(
        {"agrees": 0.7, "contradicts": 0.1, "extra": 0.2},))
    result = answer_similarity_scorer(fake_judge(ReferenceMatches=matches, ResponseChecks=checks)).run(run(1, 1))
    points = 0.5 * 1.2 + 0.3 * 0.8 + 0.1 * 0.4 - 0.1 * 0.15
    assert result.score == 1.0 and result.prob_score == round(points / 1.2 - 0.1 * 1.0 - 0.2 * 0.05, 4)


def test_prob_score_is_none_when_the_readings_do_not_match(fake_judge: FakeJudgeFactory) -> None:
    matches = Generation(json.dumps({"matches": [{"match": "exact", "reason": "r"}]}), label_probs=(
        {"exact": 0.5, "missing": 0.1, "partial": 0.1, "reworded": 0.3},))
    result = answer_similarity_scorer(fake_judge(ANSWERS, ReferenceMatches=matches)).run(run(1, 2))
    assert result.score == 1.0 and result.prob_score is None  # no readings for the two checks


@pytest.mark.parametrize("option", ["semantic_threshold", "exact_match_bonus", "missing_penalty",
                                    "contradiction_penalty", "extra_info_penalty"])
@pytest.mark.parametrize("value", [-0.1, float("inf"), True, "0.5"])
def test_bad_options_are_refused_when_the_scorer_is_built(option: str, value: Any,
                                                          fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match=option):
        answer_similarity_scorer(fake_judge(), **{option: value})


@pytest.mark.parametrize(("verdict", "expected"), [("yes", 5.0), ("no", 0.0)])
def test_direct_mode_asks_one_question_with_the_reference_shown(verdict: str, expected: float,
                                                                fake_judge: FakeJudgeFactory) -> None:
    answer = Generation(json.dumps({"verdict": verdict, "reason": "Same facts."}),
                        label_probs=({"no": 0.25, "yes": 0.75},))
    judge = fake_judge(DirectVerdict=answer)
    result = answer_similarity_scorer(judge, mode="direct", scale=5).run(run(2, 1))
    assert result.score == expected and result.prob_score == 3.75 and result.reason == "Same facts."
    (call,) = judge.calls
    text = str(call.prompts[0][-1]["content"])
    assert "<<<REFERENCE\nReference statement number 1. Reference statement number 2.\nREFERENCE>>>" in text
    assert "Output statement number 1." in text and "say the same as the reference" in text


def test_the_worked_examples_fit_their_schemas() -> None:
    """An example answer the grammar could not produce would teach the judge the wrong shape."""
    from localjudge.scoring.schemas import Reason

    run_ = Sample("example", answer_similarity.EXAMPLE_QUESTION, " ".join(answer_similarity.EXAMPLE_RESPONSE),
                  ground_truth=" ".join(answer_similarity.EXAMPLE_REFERENCE))
    for step in (answer_similarity.CHECKS_STEP, answer_similarity.MATCHES_STEP):
        ((_, example),) = step.examples
        step.schema_for(run_, {}).model_validate_json(example)
    Reason.model_validate({"reason": answer_similarity.REASON_EXAMPLE})


@pytest.mark.parametrize("compat", ["localjudge", "mastra"])
def test_twelve_statements_of_each_text_are_judged_one_by_one_in_parts_of_one_call(
        compat: str, fake_judge: FakeJudgeFactory) -> None:
    """An extra 12th output statement and a missing 12th reference statement score
    (11 x 1.2 - 0.15) / 14.4 - 0.05 = 0.86, not 0.84 over 10 merged runs of each (Mastra sets
    no cap on units): each step asks parts of 10 and 2 in its one call, joined in order (issue 46 item 3)."""
    judge = fake_judge(
        ResponseChecks=lambda p: {"verdicts": [{"verdict": "extra" if s.endswith(" 12.") else "agrees", "reason": "r"}
                                               for s in toxicity_statements(p)]},
        ReferenceMatches=lambda p: {"matches": [{"match": "missing" if s.endswith(" 12.") else "exact", "reason": "r"}
                                                for s in reference_statements(p)]})
    result = answer_similarity_scorer(judge, compat=compat).run(run(12, 12))
    checks, matches = [next(c for c in judge.calls if c.schema_names[0] == family)
                       for family in ("ResponseChecks", "ReferenceMatches")]
    assert [len(toxicity_statements(p)) for p in checks.prompts] == [10, 2]
    assert [len(reference_statements(p)) for p in matches.prompts] == [10, 2]
    assert "11. Reference statement number 11.\n12. Reference statement number 12." in str(
        matches.prompts[1][-1]["content"])
    assert result.preprocess_step_result["output_units"] == [f"Output statement number {i}." for i in range(1, 13)]
    assert result.analyze_step_result["extra_in_output"] == ["Output statement number 12."]
    assert [m["match_type"] for m in result.analyze_step_result["matches"]] == ["exact"] * 11 + ["missing"]
    assert result.score == 0.86
