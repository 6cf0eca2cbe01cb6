"""A long answer's claims come from all of it (issue 60): hallucination and faithfulness ask the
claims of an output over 64 words in parts of whole sentences and the verdicts in parts of 16
claims, in the same judge calls, so a contradiction in the last paragraph of a 1,500-word answer
is checked and counted. An output within 64 words is asked whole, as before."""

from __future__ import annotations

import re
from typing import Any

import pytest

from localjudge import FakeJudge, faithfulness_scorer, hallucination_scorer
from localjudge.scorers.judged.claim_parts import MAX_CLAIM_PARTS, PART_WORDS, output_parts
from localjudge.scoring import Scorer

CONTEXT = "The Eiffel Tower in Paris was completed in 1889 and is 330 metres tall."
WRONG = "The tower was completed in 1925."  # planted in the last paragraph: the context says 1889
SENTENCE = re.compile(r"(?:Point \d+ of the tour [a-z ]+\.|The tower was completed in \d+\.)")


def long_answer() -> str:
    """25 paragraphs of six 10-word sentences (1,500 words); the last one's fourth is `WRONG`."""
    paragraphs = []
    for p in range(25):
        said = [f"Point {6 * p + s} of the tour starts near the river bank." for s in range(6)]
        if p == 24:
            said[3] = "The tower was completed in 1925 by its original builders."
        paragraphs.append(" ".join(said))
    return "\n\n".join(paragraphs)


def claims_of(prompt: Any) -> dict[str, Any]:
    """The claims judge: every sentence of the TEXT it is shown, as written (`WRONG` as a claim)."""
    text = prompt[-1]["content"].split("List the claims of this text", 1)[1]
    text = text.replace(" by its original builders", "")
    found = [WRONG if s.startswith("The tower") else s for s in SENTENCE.findall(text)]
    return {"claims": found}


def verdicts_of(supported: str, unsupported: str) -> Any:
    """The verdict judge: each numbered claim it is shown, unsupported only when it says 1925."""
    def answer(prompt: Any) -> dict[str, Any]:
        claims = re.findall(r"^\d+\. (.*)$", prompt[-1]["content"].split("Claims to check", 1)[1], re.MULTILINE)
        return {"verdicts": [{"verdict": unsupported if "1925" in c else supported, "reason": "r"} for c in claims]}
    return answer


def judge() -> FakeJudge:
    return FakeJudge({"Claims": claims_of, "HallucinationVerdicts": verdicts_of("supported", "unsupported"),
                      "FaithfulnessVerdicts": verdicts_of("yes", "no"), "Reason": lambda prompt: {"reason": "r"}})


@pytest.mark.parametrize(("make", "expected"), [(hallucination_scorer, 0.01), (faithfulness_scorer, 0.99)])
def test_a_contradiction_in_the_last_paragraph_of_1500_words_is_caught(make: Any, expected: float) -> None:
    answer = long_answer()
    assert len(answer.split()) == 1500
    fake = judge()
    scorer: Scorer = make(fake)
    result = scorer.run({"input": "Tell me about the tower.", "output": answer, "context": CONTEXT})
    assert result.error is None, result.error
    claims = result.preprocess_step_result["claims"]
    assert len(claims) == 150 and claims[-3] == WRONG  # every sentence, in order, the planted one included
    flagged = [v for v in result.analyze_step_result["verdicts"] if v["claim" if make is faithfulness_scorer
                                                                          else "statement"] == WRONG]
    assert [v["verdict"] for v in flagged] == (["no"] if make is faithfulness_scorer else ["yes"])
    assert result.score == expected  # 1 of 150 claims contradicted
    claims_call, verdicts_call = fake.calls[0], fake.calls[1]
    assert len(claims_call.prompts) == len(output_parts(answer)) == 25  # one prompt a part, in one judge call
    assert len(verdicts_call.prompts) == 10  # 150 claims in parts of 16
    assert "[part 25 of 25]" in (result.preprocess_prompt or "")


def test_an_output_within_a_part_is_asked_whole() -> None:
    """Up to 64 words the claims step sends one prompt holding the output as given (the hashes of
    today's rows unchanged: tests/unit/scorers/test_prompt_hashes.py)."""
    output = " ".join(["word"] * PART_WORDS)
    assert output_parts(output) == (output,)
    assert len(output_parts(output + " more")) == 2


def test_parts_keep_every_word_in_order() -> None:
    one_long_sentence = " ".join(f"w{i}" for i in range(150))  # no sentence end: cut at word boundaries
    parts = output_parts(one_long_sentence)
    assert [len(p.split()) for p in parts] == [64, 64, 22] and " ".join(parts) == one_long_sentence


def test_an_output_past_the_parts_is_asked_whole() -> None:
    """Past 64 parts (about 4,000 words) the output is asked whole, as before parts existed: the
    judge's window decides (tests/unit/test_bad_input.py: a real window unscores it, saying so)."""
    output = " ".join(f"Point {i} of the tour starts near the river bank." for i in range(7 * MAX_CLAIM_PARTS))
    assert output_parts(output) == (output,)
    fake = FakeJudge({"Claims": [{"claims": ["Point 0 of the tour starts near the river bank."]}],
                      "HallucinationVerdicts": verdicts_of("supported", "unsupported"), "Reason": [{"reason": "r"}]})
    result = hallucination_scorer(fake).run({"input": "q", "output": output, "context": CONTEXT})
    assert result.score == 0.0 and len(fake.calls[0].prompts) == 1
