"""A judge answer that replays the step's worked example is not scored as a judgment.

The claims and the final reason of each built-in scorer, copied from its
worked example onto a run that says nothing of the kind: the row is unscored (`copied_example`)
or, for the final reason, keeps its score without that reason. A run that really contains the
example's words may be judged with them. (Toxicity's statements cannot be copied: they are the
output's own sentences, see tests/unit/scorers/test_toxicity.py.)
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.samples.runs import Sample
from localjudge.scoring.copying import copied_text, normal

RUN = {"input": "Where is the Louvre?", "output": "The Louvre is in Paris. It opened in 1793.",
       "context": "The Louvre museum in Paris opened in 1793."}
MARIE = "Marie Curie won two Nobel Prizes."  # a claim of the claims step's worked example


@pytest.mark.parametrize(("factory", "answers", "copied"), [
    pytest.param(hallucination_scorer, {"Claims": {"claims": [MARIE]}}, MARIE, id="claims"),
    pytest.param(faithfulness_scorer, {"Claims": {"claims": ["The Louvre is in Paris.", MARIE]}}, MARIE,
                 id="claims-among-own"),
    pytest.param(hallucination_scorer, {"Claims": {"claims": ["The Louvre is in Paris."]},
                                        "HallucinationVerdicts": {"verdicts": [
                                            {"verdict": "unsupported",
                                             "reason": "Visitors are not mentioned at all."}]}},
                 None, id="own-reason-not-in-example"),
])
def test_a_copied_answer_leaves_the_row_unscored(fake_judge: Any, factory: Any, answers: dict[str, Any],
                                                 copied: str | None) -> None:
    result = factory(fake_judge(answers)).run(RUN)
    if copied is None:
        assert result.scored
    else:
        assert (result.score, result.error_kind) == (None, "copied_example")
        assert repr(copied) in result.error and result.raw_output


def test_a_copied_reason_costs_the_reason_not_the_score(fake_judge: Any) -> None:
    from localjudge.scorers.judged.hallucination import EXAMPLE

    judge = fake_judge({"Claims": {"claims": ["The Louvre is in Paris."]}, "Reason": {"reason": EXAMPLE.reason}})
    result = hallucination_scorer(judge).run(RUN)
    assert result.scored and result.reason.startswith("[no reason: the judge copied the worked example")


def test_a_copied_toxicity_reason_costs_the_reason(fake_judge: Any) -> None:
    from localjudge.scorers.judged.toxicity import REASON_EXAMPLE

    result = toxicity_scorer(fake_judge({"Reason": {"reason": REASON_EXAMPLE}})).run(RUN)
    assert result.scored and result.reason.startswith("[no reason: the judge copied the worked example")


def test_words_the_run_itself_says_are_not_copies(fake_judge: Any) -> None:
    run = {**RUN, "output": f"{MARIE} She worked in Paris.", "context": f"{MARIE} She lived in Paris."}
    result = hallucination_scorer(fake_judge({"Claims": {"claims": [MARIE]}})).run(run)
    assert result.scored


def test_matching_ignores_case_spacing_and_end_punctuation() -> None:
    examples = [("question", '{"claims":["Marie Curie won two Nobel Prizes."]}')]
    sample = Sample("r", "", "Something else entirely.")
    assert copied_text({"claims": ["  marie curie WON two   nobel prizes!"]}, examples, sample) is not None
    assert copied_text({"claims": ["Marie Curie won three Nobel Prizes."]}, examples, sample) is None
    assert copied_text({"claims": ["won two"]}, [("q", '{"claims":["won two"]}')], sample) is None  # too short
    assert normal("  Hello,   World! ") == "hello, world"
