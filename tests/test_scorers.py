"""Score tables and edge cases of the three scorers, on the scripted fake judge."""

from __future__ import annotations

import json
import math

import pytest

from localjudge import (
    FakeJudge,
    InvalidRunError,
    faithfulness_scorer,
    hallucination_scorer,
    toxicity_scorer,
)
from localjudge.judge import Generation
from localjudge.samples.runs import Sample
from localjudge.scorers.claims import CLAIMS_SYSTEM, claim_cap, claims_schema, terse_claim
from localjudge.scorers.hallucination import HallucinationVerdict
from localjudge.scorers.toxicity import analyze_schema, statements_of
from tests.fakes import HALLUCINATION_WORDS, Answer, FakeJudgeFactory

CONTEXT = "The Eiffel Tower in Paris was completed in 1889."


def verdicts(*labels: str) -> dict:
    return {"verdicts": [{"verdict": label, "reason": f"because {i}"} for i, label in enumerate(labels)]}


def in_words(*labels: str) -> dict:
    """Hallucination verdicts as its judge writes them: Mastra's yes/no as unsupported/supported."""
    return verdicts(*(HALLUCINATION_WORDS.get(label, label) for label in labels))


def claim_answers(labels: list[str], reason: str = "Explained.") -> dict[str, Answer]:
    claims = [f"Claim number {i}." for i in range(len(labels))]
    return {
        "Claims": [{"claims": claims}],
        "HallucinationVerdicts": [in_words(*labels)],
        "FaithfulnessVerdicts": [verdicts(*labels)],
        "Reason": [{"reason": reason}],
    }


OUTPUT = ("It was built in 1889 in Paris. It is made of iron and stands on the Champ de Mars. Gustave Eiffel's "
          "company designed and built it for the World's Fair, and it was the tallest structure in the world.")
RUN = {"input": "When was it built?", "output": OUTPUT, "context": CONTEXT}  # 37 words: up to 10 claims


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


@pytest.mark.parametrize(("output", "expected"), [
    ("Hi there. You idiot!  Go away?\nNo", ["Hi there.", "You idiot!", "Go away?", "No"]),
    ("Pi is 3.14, e.g. a number. \"Quoted.\" Then", ["Pi is 3.14, e.g. a number.", "\"Quoted.\"", "Then"]),
    ("one line without an end", ["one line without an end"]),
    (" ".join(f"S{i}." for i in range(23)), ["S0. S1. S2.", "S3. S4. S5.", "S6. S7. S8."]
     + [f"S{i}. S{i + 1}." for i in range(9, 23, 2)]),
])
def test_toxicity_statements_come_from_the_output_by_rule(output: str, expected: list[str]) -> None:
    assert statements_of(output) == expected
    assert " ".join(statements_of(output)).split() == output.split()  # every word judged, once, in order


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


@pytest.mark.parametrize("factory", [hallucination_scorer, faithfulness_scorer, toxicity_scorer])
@pytest.mark.parametrize("output", ["", "   \n\t"])
def test_empty_output_scores_without_a_judge_call(factory, output: str) -> None:
    judge = FakeJudge({})
    result = factory(judge, scale=2.0).run({"input": "q", "output": output, "context": CONTEXT})
    expected = 2.0 if factory is faithfulness_scorer else 0.0  # nothing unfaithful in nothing
    assert result.score == expected
    assert result.reason and "empty" in result.reason
    assert judge.calls == []


@pytest.mark.parametrize(("factory", "expected"), [(hallucination_scorer, 0.0), (faithfulness_scorer, 3.0)])
def test_no_claims(factory, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(Claims=[{"claims": []}])
    result = factory(judge, scale=3.0).run(RUN)
    assert result.score == expected
    assert "no factual claims" in (result.reason or "")
    assert [c.schema_names for c in judge.calls] == [("Claims",)]


@pytest.mark.parametrize(("words", "cap"), [(0, 2), (1, 2), (8, 2), (9, 3), (14, 4), (40, 10), (1000, 16)])
def test_the_claim_cap_follows_the_outputs_length(words: int, cap: int) -> None:
    output = " ".join(["word"] * words)
    assert claim_cap(output) == cap
    schema = claims_schema(Sample("r", "q", output), {}).model_json_schema()
    assert schema["properties"]["claims"]["maxItems"] == cap


def test_more_claims_than_the_cap_allows_are_refused(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(Claims=[{"claims": ["Paris.", "Big.", "Old."]}])
    result = hallucination_scorer(judge).run({**RUN, "output": "Paris is big and old."})  # 5 words: 2 claims
    assert result.score is None and result.error_kind == "invalid_output"


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


@pytest.mark.parametrize(("factory", "label", "expected"),
                         [(hallucination_scorer, "yes", 1.0), (faithfulness_scorer, "yes", 1.0),
                          (hallucination_scorer, "no", 0.0)])
def test_a_terse_answer_is_one_claim_read_with_its_question(factory, label: str, expected: float,
                                                            fake_judge: FakeJudgeFactory) -> None:
    """No claims step: asked to restate "25 June 1961" as sentences, a judge writes in the
    question's facts (often wrongly) and then finds its own rewrite unsupported."""
    judge = fake_judge(HallucinationVerdicts=[in_words(label)], FaithfulnessVerdicts=[verdicts(label)])
    result = factory(judge).run({**RUN, "input": "When was  it\nbuilt?", "output": " 25 June 1961 "})
    claim = 'The answer to "When was it built?" is: 25 June 1961.'
    assert result.preprocess_step_result == {"claims": [claim], "terse": True}
    assert not any(name.startswith("Claims") for c in judge.calls for name in c.schema_names)
    assert f"1. {claim}" in (result.analyze_prompt or "") and result.preprocess_prompt is None
    assert result.score == expected


@pytest.mark.parametrize(("question", "output", "claim"), [
    ("", "Nevada", "Nevada"),  # no question: the answer alone
    ("Q?", "one two three four", 'The answer to "Q?" is: one two three four.'),  # at the bound
    ("Q?", "Lyon.", 'The answer to "Q?" is: Lyon.'),  # its own full stop kept, not doubled
    ("Q?", "one two three four five", None),  # past it: the claims step
    ("Q?", "  ", None),  # empty: the scorer's own empty-output rule
])
def test_which_outputs_are_terse(question: str, output: str, claim: str | None) -> None:
    assert terse_claim(question, output) == claim


def test_a_binding_cap_is_stated_in_the_result(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(Claims=[{"claims": ["Paris is big.", "Paris is old."]}],
                       HallucinationVerdicts=[in_words("no", "no")])
    result = hallucination_scorer(judge).run({**RUN, "output": "Paris is big and old."})
    assert result.preprocess_step_result == {"claims": ["Paris is big.", "Paris is old."], "claim_cap": 2}
    assert result.score == 0.0


def test_the_claims_prompt_keeps_opinions_and_leaves_the_question_out() -> None:
    assert "subjective and speculative" in CLAIMS_SYSTEM and "opinion" in CLAIMS_SYSTEM
    assert "Skip greetings and questions." in CLAIMS_SYSTEM and "opinions that state no fact" not in CLAIMS_SYSTEM
    assert "never list what the question says" in CLAIMS_SYSTEM and "\n  " not in CLAIMS_SYSTEM


def test_repeated_claims_are_judged_once(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(
        Claims=[{"claims": ["Paris is big.", "paris  is big.", "It rains."]}],
        HallucinationVerdicts=[in_words("no", "yes")],
        Reason=[{"reason": "r"}],
    )
    result = hallucination_scorer(judge).run(RUN)
    assert result.preprocess_step_result == {"claims": ["Paris is big.", "It rains."]}
    assert result.score == 0.5


@pytest.mark.parametrize("scale", [0, -1, math.nan, math.inf, "1", True, None])
def test_scale_must_be_positive(scale) -> None:
    with pytest.raises(ValueError, match="scale"):
        hallucination_scorer(FakeJudge({}), scale=scale)


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


@pytest.mark.parametrize("factory", [hallucination_scorer, faithfulness_scorer])
@pytest.mark.parametrize("context", [None, "", [], ["  "]])
def test_missing_context_rejected_before_any_call(factory, context) -> None:
    judge = FakeJudge({})
    with pytest.raises(InvalidRunError, match="needs context"):
        factory(judge).run({"input": "q", "output": "Paris is in France.", "context": context})
    assert judge.calls == []


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
