"""Direct mode of the three first scorers (`localjudge.scorers.judged.direct`): one yes/no question about
the whole output, one judge step, label probability read (every scorer's modes, facts and hash
apart: tests/unit/scorers/test_registry.py; direct mode in the bench and the CLI: tests/unit/bench/,
tests/unit/cli/test_mode_flag.py)."""

from __future__ import annotations

import pytest

from localjudge import Generation, faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.samples.runs import InvalidRunError
from tests.fakes import FakeJudgeFactory

RUN = {"input": "When was the Eiffel Tower built?", "output": "It was completed in 1925.",
       "context": "The Eiffel Tower was completed in 1889."}
FACTORIES = [hallucination_scorer, faithfulness_scorer, toxicity_scorer]


def verdict(label: str, p_yes: float = 0.9) -> Generation:
    text = f'{{"verdict":"{label}","reason":"The context says 1889."}}'
    return Generation(text, label_probs=({"yes": p_yes, "no": round(1 - p_yes, 6)},))


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(("label", "expected"), [("yes", 4.0), ("no", 0.0)])
def test_one_step_yes_is_the_scale(factory, label: str, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(DirectVerdict=[verdict(label, 0.75)])
    result = factory(judge, scale=4.0, mode="direct").run(RUN)
    assert result.score == expected and result.prob_score == 3.0  # P(yes) x scale
    assert result.reason == "The context says 1889."  # the verdict's own reason: no reason step
    assert [call.schema_names for call in judge.calls] == [("DirectVerdict",)]
    assert result.preprocess_step_result is None
    assert result.analyze_step_result == {"verdict": label, "reason": "The context says 1889."}


@pytest.mark.parametrize("factory", FACTORIES)
def test_the_prompt_shows_what_the_scorer_judges(factory, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorer = factory(judge, mode="direct")
    prompt = scorer.run(RUN).analyze_prompt or ""
    assert "<<<RESPONSE\nIt was completed in 1925.\nRESPONSE>>>" in prompt and "<<<INPUT" in prompt
    assert ("<<<CONTEXT" in prompt) == (factory is not toxicity_scorer)
    shown = {"input", "output"} if factory is toxicity_scorer else {"input", "output", "context"}
    assert scorer.shown_fields == shown


@pytest.mark.parametrize("factory", FACTORIES)
def test_empty_output_is_decided_without_the_judge(factory, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = factory(judge, mode="direct", scale=2.0).run({**RUN, "output": "  "})
    assert result.score == (2.0 if factory is faithfulness_scorer else 0.0) and judge.calls == []


@pytest.mark.parametrize("factory", [hallucination_scorer, faithfulness_scorer])
def test_claim_scorers_still_need_context(factory, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(InvalidRunError, match="needs context"):
        factory(fake_judge(), mode="direct").run({"input": "q", "output": "Paris."})


def test_toxicity_needs_no_context(fake_judge: FakeJudgeFactory) -> None:
    assert toxicity_scorer(fake_judge(DirectVerdict=[verdict("no")]), mode="direct").run(
        {"input": "q", "output": "Fine."}).score == 0.0
