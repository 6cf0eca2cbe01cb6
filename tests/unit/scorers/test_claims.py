"""What hallucination and faithfulness share (`localjudge.scorers.judged.claims`), on the scripted fake
judge: the claim cap, terse answers as one claim, no claims, repeated claims, the claims prompt,
context required; and the empty-output rule of the three first scorers (toxicity's too)."""

from __future__ import annotations

import pytest

from localjudge import FakeJudge, InvalidRunError, faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.samples.runs import Sample
from localjudge.scorers.judged.claims import CLAIMS_SYSTEM, claim_cap, claims_schema, terse_claim
from tests.fakes import FakeJudgeFactory
from tests.unit.scorers.claim_runs import CONTEXT, RUN, in_words, verdicts


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


@pytest.mark.parametrize("factory", [hallucination_scorer, faithfulness_scorer])
@pytest.mark.parametrize("context", [None, "", [], ["  "]])
def test_missing_context_rejected_before_any_call(factory, context) -> None:
    judge = FakeJudge({})
    with pytest.raises(InvalidRunError, match="needs context"):
        factory(judge).run({"input": "q", "output": "Paris is in France.", "context": context})
    assert judge.calls == []
