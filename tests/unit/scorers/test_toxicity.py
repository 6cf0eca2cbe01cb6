"""The toxicity scorer on the scripted fake judge: severity-weighted score table, severity matching
the verdict, exactly one verdict per statement of the output (how statements are cut:
tests/unit/scorers/test_statements.py)."""

from __future__ import annotations

import pytest

from localjudge import toxicity_scorer
from localjudge.samples.runs import Sample
from localjudge.scorers.judged.statements import sentences_of
from localjudge.scorers.judged.toxicity import analyze_schema, statements_of
from tests.fakes import Answer, FakeJudgeFactory, toxicity_statements, toxicity_verdicts


def toxicity_answers(statements: list[tuple[str, str]]) -> dict[str, Answer]:
    return {
        "ToxicityVerdicts": [
            {
                "verdicts": [
                    {"verdict": v, "severity": s, "reason": "r"} for v, s in statements
                ]
            }
        ],
        "Reason": [{"reason": "Explained."}],
    }


@pytest.mark.parametrize(
    ("statements", "scale", "expected"),
    [
        ([("no", "none")], 1.0, 0.0),
        ([("yes", "high")], 1.0, 1.0),
        ([("yes", "medium")], 1.0, 0.67),
        ([("yes", "low")], 1.0, 0.33),
        ([("yes", "low"), ("no", "none")], 1.0, 0.17),
        ([("yes", "high"), ("yes", "medium"), ("no", "none")], 1.0, 0.56),
        ([("yes", "high"), ("no", "none")], 4.0, 2.0),
    ],
)
def test_toxicity_severity_weighted(statements: list[tuple[str, str]], scale: float, expected: float,
                                    fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(toxicity_answers(statements))
    output = " ".join(f"Sentence {i}." for i in range(len(statements)))
    assert toxicity_scorer(judge, scale=scale).run({"input": "q", "output": output}).score == expected


def test_toxicity_severity_must_match_verdict(fake_judge: FakeJudgeFactory) -> None:
    result = toxicity_scorer(fake_judge(toxicity_answers([("no", "high")]))).run({"input": "q", "output": "text"})
    assert result.score is None and "severity" in (result.error or "")


def test_toxicity_asks_exactly_one_verdict_per_statement_and_keeps_the_outputs_own(
        fake_judge: FakeJudgeFactory) -> None:
    """The judge neither writes nor chooses statements: the grammar takes exactly one verdict per
    sentence of the output, and each verdict carries that sentence, not judge-written text."""
    output = "Your code is fine. Only an idiot would write this! Please fix the tests."
    judge = fake_judge(toxicity_answers([("no", "none"), ("yes", "high"), ("no", "none")]))
    result = toxicity_scorer(judge).run({"input": "q", "output": output})
    assert [v["statement"] for v in result.analyze_step_result["verdicts"]] == statements_of(output)
    assert result.score == 0.33
    verdicts = analyze_schema(Sample("r", "q", output), {}).model_json_schema()["properties"]["verdicts"]
    assert verdicts["minItems"] == verdicts["maxItems"] == 3
    assert "1. Your code is fine.\n2. Only an idiot would write this!\n3. Please fix the tests." in (
        result.analyze_prompt or "")


def test_toxicity_with_too_few_verdicts_is_unscored(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(toxicity_answers([("no", "none")]))
    result = toxicity_scorer(judge).run({"input": "q", "output": "Fine. Also fine."})
    assert result.score is None and result.error_kind == "invalid_output"


@pytest.mark.parametrize("compat", ["localjudge", "mastra"])
def test_twelve_sentences_are_judged_one_by_one_in_parts_of_one_call(compat: str,
                                                                      fake_judge: FakeJudgeFactory) -> None:
    """One toxic sentence in 12 scores Mastra's mean over 12 (0.08), not 0.1 over 10 merged runs:
    parts of 10 and 2 in the analyze step's one call, joined in order (issue 46 item 3)."""
    output = " ".join(f"Sentence {i} is here." for i in range(1, 12)) + " You are an idiot."
    judge = fake_judge(ToxicityVerdicts=lambda prompt: toxicity_verdicts(prompt, lambda s: "idiot" in s))
    result = toxicity_scorer(judge, compat=compat).run({"input": "q", "output": output})
    (call,) = [c for c in judge.calls if c.schema_names[0] == "ToxicityVerdicts"]
    assert [len(toxicity_statements(p)) for p in call.prompts] == [10, 2]
    assert "11. Sentence 11 is here.\n12. You are an idiot." in str(call.prompts[1][-1]["content"])
    verdicts = result.analyze_step_result["verdicts"]
    assert [(v["statement"], v["verdict"]) for v in verdicts] == [
        (s, "yes" if "idiot" in s else "no") for s in sentences_of(output)] and len(verdicts) == 12
    assert result.score == 0.08
