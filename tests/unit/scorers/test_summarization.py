"""Summarization on the scripted fake judge: Mastra's min(alignment, coverage), its question
cap, its edge cases (an empty summary or source), the coverage judge never seeing the source,
the probability twin, direct mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge.judge import ChatPrompt, Generation
from localjudge.samples.runs import Sample
from localjudge.scorers.judged import summarization, summarization_prompts
from localjudge.scorers.judged.summarization import summarization_scorer
from tests.fakes import FakeJudgeFactory

SOURCE = ("The company was founded in 1995 by John Smith. It started with 10 employees. It grew to 500 by 2020. "
          "The company is based in Seattle. It makes garden tools.")  # five sentences: up to five questions


def block_lines(prompt: ChatPrompt, name: str) -> list[str]:
    text = str(prompt[-1]["content"]).split(f"<<<{name}\n", 1)[1].split(f"\n{name}>>>", 1)[0]
    return text.split("\n")


# What scores any run (the entries for tests/fakes.py DEFAULT_ANSWERS): one question, all supported, all answered.
ANSWERS = {
    "SourceJudgement": lambda prompt: {"questions": ["Does the source say this?"], "alignment": [
        {"verdict": "yes", "reason": "r"}] * len(block_lines(prompt, "SUMMARY"))},
    "CoverageAnswers": lambda prompt: {"coverage": [{"verdict": "yes", "reason": "r"}] * len(
        block_lines(prompt, "QUESTIONS"))},
}


def summary(n: int) -> str:
    return " ".join(f"Summary statement number {i}." for i in range(1, n + 1))


def scripted(alignment: list[str], coverage: list[str], questions: list[str] | None = None) -> dict[str, Any]:
    questions = questions or [f"Question number {i}?" for i in range(1, len(coverage) + 1)]
    return {"SourceJudgement": {"questions": questions,
                                "alignment": [{"verdict": v, "reason": "r"} for v in alignment]},
            "CoverageAnswers": {"coverage": [{"verdict": v, "reason": "r"} for v in coverage]}}


# Mastra: min(supported / claims, answered / questions) x scale, two decimals.
@pytest.mark.parametrize(("alignment", "coverage", "scale", "expected"), [
    (["yes", "yes"], ["yes", "yes"], 1.0, 1.0),
    (["yes", "no"], ["yes", "yes"], 1.0, 0.5),  # alignment is the weaker axis
    (["yes"], ["no", "yes", "no", "no"], 1.0, 0.25),  # coverage is
    (["no"], ["yes"], 1.0, 0.0),
    (["yes", "yes", "no"], ["yes", "yes"], 1.0, 0.67),
    (["yes", "no"], ["yes", "yes"], 10.0, 5.0),
    (["yes", "yes", "yes"], ["yes", "yes", "no"], 3.0, 2.0),
])
def test_the_score_is_the_weaker_of_alignment_and_coverage(alignment: list[str], coverage: list[str], scale: float,
                                                           expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(scripted(alignment, coverage))
    result = summarization_scorer(judge, scale=scale).run({"input": SOURCE, "output": summary(len(alignment))})
    assert result.score == expected and result.error is None
    claims = result.preprocess_step_result["alignment"]
    assert [(c["claim"], c["supported"]) for c in claims] == [
        (f"Summary statement number {i}.", v == "yes") for i, v in enumerate(alignment, 1)]
    assert [c["answered"] for c in result.analyze_step_result["coverage"]] == [v == "yes" for v in coverage]


def test_nothing_to_score_gives_zero() -> None:
    assert summarization.score(Sample("r", SOURCE, "S."), {
        "preprocess_step_result": {"alignment": [], "questions": ["Q?"]},
        "analyze_step_result": {"coverage": [{"question": "Q?", "answered": True, "reason": "r"}]}}) == 0.0
    assert summarization.score(Sample("r", SOURCE, "S."), {
        "preprocess_step_result": {"alignment": [{"claim": "S.", "supported": True, "reason": "r"}], "questions": []},
        "analyze_step_result": {"coverage": []}}) == 0.0


def test_the_grammar_fixes_one_verdict_per_statement_and_caps_the_questions(fake_judge: FakeJudgeFactory) -> None:
    sample = Sample("r", SOURCE, summary(3))
    for cap in (1, 4, 10):
        schema = summarization.judgement_schema(3, cap).model_json_schema()["properties"]
        assert (schema["alignment"]["minItems"], schema["alignment"]["maxItems"]) == (3, 3)
        assert (schema["questions"]["minItems"], schema["questions"]["maxItems"]) == (1, cap)
    judge = fake_judge(ANSWERS)
    summarization_scorer(judge, max_questions=4).run({"input": SOURCE, "output": summary(3)})
    (call,) = [c for c in judge.calls if c.schema_names == ("SourceJudgement",)]
    assert block_lines(call.prompts[0], "SUMMARY") == [f"{i}. Summary statement number {i}." for i in (1, 2, 3)]
    assert "Write 1 to 4 questions" in str(call.prompts[0][-1]["content"])
    judge = fake_judge(ANSWERS)
    summarization_scorer(judge, max_questions=1).run({"input": SOURCE, "output": summary(3)})
    assert "Write 1 question about" in str(judge.calls[0].prompts[0][-1]["content"])
    results = {"preprocess_step_result": {"questions": ["A?", "B?"], "alignment": []}}
    field = summarization.coverage_schema(sample, results).model_json_schema()["properties"]["coverage"]
    assert (field["minItems"], field["maxItems"]) == (2, 2)


@pytest.mark.parametrize(("source", "max_questions", "cap"), [
    (SOURCE, 10, 5), (SOURCE, 4, 4), ("One fact only.", 10, 1), ("A. B. C.\nD", 2, 2),
])
def test_a_source_yields_at_most_one_question_a_sentence(source: str, max_questions: int, cap: int,
                                                         fake_judge: FakeJudgeFactory) -> None:
    assert summarization.question_cap(source, max_questions) == cap
    judge = fake_judge(ANSWERS)
    summarization_scorer(judge, max_questions=max_questions).run({"input": source, "output": summary(1)})
    (call,) = [c for c in judge.calls if c.schema_names == ("SourceJudgement",)]
    assert f"Write {'1 question' if cap == 1 else f'1 to {cap} questions'} about" in str(call.prompts[0][-1]["content"])


def test_more_questions_than_the_cap_are_refused(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(scripted(["yes"], ["yes", "yes"]))
    result = summarization_scorer(judge, max_questions=1).run({"input": SOURCE, "output": summary(1)})
    assert result.score is None and result.error_kind and "preprocess" in (result.error or "")


def test_repeated_questions_are_asked_once(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(scripted(["yes"], ["no", "yes"], questions=["Was it 1995?", "was it  1995?", "Seattle?"]))
    result = summarization_scorer(judge).run({"input": SOURCE, "output": summary(1)})
    assert result.preprocess_step_result["questions"] == ["Was it 1995?", "Seattle?"] and result.score == 0.5


def test_the_coverage_judge_never_sees_the_source(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    summarization_scorer(judge).run({"input": "The source document mentions volcanoes.", "output": summary(2)})
    (judgement,) = [c for c in judge.calls if c.schema_names == ("SourceJudgement",)]
    (coverage,) = [c for c in judge.calls if c.schema_names == ("CoverageAnswers",)]
    assert "volcanoes" in str(judgement.prompts[0][-1]["content"])
    assert "volcanoes" not in json.dumps(coverage.prompts[0])
    assert block_lines(coverage.prompts[0], "QUESTIONS") == ["1. Does the source say this?"]
    assert "Summary statement number 2." in str(coverage.prompts[0][-1]["content"])


@pytest.mark.parametrize(("source", "output"), [(SOURCE, "  "), ("", "A summary."), ("  ", "")])
def test_an_empty_summary_or_source_scores_zero_without_the_judge(source: str, output: str,
                                                                  fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    for mode in ("pipeline", "direct"):
        result = summarization_scorer(judge, mode=mode, scale=10).run({"input": source, "output": output})
        assert result.score == 0 and result.prob_score == 0 and result.reason
    assert not judge.calls


def test_the_reason_step_names_both_axes_and_what_failed(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(scripted(["yes", "no"], ["yes", "no"], questions=["Was it founded in 1995?", "Seattle?"]))
    result = summarization_scorer(judge).run({"input": SOURCE, "output": summary(2)})
    (call,) = [c for c in judge.calls if c.schema_names == ("Reason",)]
    text = str(call.prompts[0][-1]["content"])
    assert "Alignment (summary statements the source supports): 0.50" in text and "Coverage" in text
    assert "<<<UNSUPPORTED\n- Summary statement number 2.\nUNSUPPORTED>>>" in text
    assert "<<<UNANSWERED\n- Seattle?\nUNANSWERED>>>" in text and result.reason == "ok"


def test_prob_score_is_the_weaker_mean_yes_probability(fake_judge: FakeJudgeFactory) -> None:
    judgement = Generation(json.dumps(scripted(["yes", "no"], ["yes"])["SourceJudgement"]),
                           label_probs=({"no": 0.1, "yes": 0.9}, {"no": 0.7, "yes": 0.3}))
    coverage = Generation(json.dumps(scripted(["yes"], ["yes"])["CoverageAnswers"]),
                          label_probs=({"no": 0.2, "yes": 0.8},))
    result = summarization_scorer(fake_judge(SourceJudgement=judgement, CoverageAnswers=coverage), scale=2).run(
        {"input": SOURCE, "output": summary(2)})
    assert result.score == 1.0 and result.prob_score == round(min((0.9 + 0.3) / 2, 0.8) * 2, 4)


@pytest.mark.parametrize("max_questions", [0, 21, True, 2.5])
def test_a_bad_question_cap_is_refused_when_the_scorer_is_built(max_questions: Any,
                                                                fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="max_questions"):
        summarization_scorer(fake_judge(), max_questions=max_questions)


@pytest.mark.parametrize(("verdict", "expected"), [("yes", 10.0), ("no", 0.0)])
def test_direct_mode_asks_one_question_about_source_and_summary(verdict: str, expected: float,
                                                                fake_judge: FakeJudgeFactory) -> None:
    answer = Generation(json.dumps({"verdict": verdict, "reason": "Faithful."}),
                        label_probs=({"no": 0.4, "yes": 0.6},))
    judge = fake_judge(DirectVerdict=answer)
    result = summarization_scorer(judge, mode="direct", scale=10).run({"input": SOURCE, "output": summary(1)})
    assert result.score == expected and result.prob_score == 6.0 and result.reason == "Faithful."
    (call,) = judge.calls
    text = str(call.prompts[0][-1]["content"])
    assert f"<<<SOURCE\n{SOURCE}\nSOURCE>>>" in text and "<<<SUMMARY\nSummary statement number 1.\nSUMMARY>>>" in text


def test_the_worked_examples_fit_their_schemas() -> None:
    """An example answer the grammar could not produce would teach the judge the wrong shape."""
    from localjudge.scoring.schemas import Reason

    prompts = summarization_prompts  # the worked examples
    statements = prompts.EXAMPLE_STATEMENTS
    assert summarization.sentences_of(" ".join(statements)) == statements
    prompts.judgement_schema(len(statements), 4).model_validate_json(prompts.JUDGEMENT_EXAMPLE[1])
    results = {"preprocess_step_result": {"questions": prompts.EXAMPLE_QUESTIONS}}
    summarization.coverage_schema(Sample("e", "", ""), results).model_validate_json(prompts.COVERAGE_EXAMPLE[1])
    Reason.model_validate({"reason": prompts.REASON_EXAMPLE})


@pytest.mark.parametrize("compat", ["localjudge", "mastra"])
def test_twelve_statements_are_judged_one_by_one_in_parts_of_one_call(compat: str,
                                                                      fake_judge: FakeJudgeFactory) -> None:
    """One unsupported statement in 12 scores alignment 11/12 (0.92), not 9/10 over 10 merged
    runs (Mastra sets no cap on claims): parts of 10 and 2 in the preprocess step's one call,
    the questions asked in the first part only, the verdicts joined in order (issue 46 item 3)."""
    def alignment(prompt: ChatPrompt) -> list[dict[str, str]]:
        return [{"verdict": "no" if line.endswith(" 12.") else "yes", "reason": "r"}
                for line in block_lines(prompt, "SUMMARY")]

    judge = fake_judge(SourceJudgement=lambda p: {"questions": ["Q?"], "alignment": alignment(p)},
                       AlignmentOnly=lambda p: {"alignment": alignment(p)})
    result = summarization_scorer(judge, compat=compat).run({"input": SOURCE, "output": summary(12)})
    (call,) = [c for c in judge.calls if c.schema_names[0] == "SourceJudgement"]
    assert call.schema_names == ("SourceJudgement", "AlignmentOnly")
    assert [len(block_lines(p, "SUMMARY")) for p in call.prompts] == [10, 2]
    later = str(call.prompts[1][-1]["content"])
    assert "11. Summary statement number 11.\n12. Summary statement number 12." in later and "write none" in later
    claims = result.preprocess_step_result["alignment"]
    assert [(c["claim"], c["supported"]) for c in claims] == [
        (f"Summary statement number {i}.", i != 12) for i in range(1, 13)]
    assert result.preprocess_step_result["questions"] == ["Q?"] and result.score == 0.92
