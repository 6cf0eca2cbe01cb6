"""Context precision on the scripted fake judge: Mastra's mean average precision over the
ranked context pieces, its edge cases, and the probability twin."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from localjudge import context_precision_scorer
from localjudge.judge import Generation
from tests.fakes import FakeJudgeFactory


def verdicts(labels: list[str]) -> dict[str, Any]:
    return {"verdicts": [{"verdict": label, "reason": "r"} for label in labels]}


def run(pieces: int) -> dict[str, Any]:
    return {"input": "How long is the Nile?", "output": "About 6,650 km.",
            "context": [f"Piece number {i}." for i in range(1, pieces + 1)]}


# Mastra: MAP = mean over relevant positions of precision@i; no relevant piece gives 0.
@pytest.mark.parametrize(("labels", "scale", "expected"), [
    (["yes", "no", "yes"], 1.0, 0.83),  # (1/1 + 2/3) / 2
    (["no", "yes"], 1.0, 0.5),
    (["no", "no"], 1.0, 0.0),
    (["yes"], 1.0, 1.0),
    (["yes", "yes", "no", "no"], 1.0, 1.0),  # useful pieces first: perfect
    (["no", "no", "yes"], 10.0, 3.33),
    (["no", "yes", "no", "yes"], 1.0, 0.5),  # (1/2 + 2/4) / 2
])
def test_the_score_is_the_mean_average_precision(labels: list[str], scale: float, expected: float,
                                                 fake_judge: FakeJudgeFactory) -> None:
    result = context_precision_scorer(fake_judge(PieceVerdicts=verdicts(labels)), scale=scale).run(run(len(labels)))
    assert result.score == expected
    assert [(v["context_index"], v["piece"]) for v in result.analyze_step_result["verdicts"]] == \
        [(i, f"Piece number {i + 1}.") for i in range(len(labels))]


def test_without_context_the_run_is_refused_before_any_call(fake_judge: FakeJudgeFactory) -> None:
    from localjudge import InvalidRunError

    judge = fake_judge()
    with pytest.raises(InvalidRunError, match="context_precision needs context"):
        context_precision_scorer(judge).run({"input": "q", "output": "a"})
    (result,) = context_precision_scorer(judge).run_batch([{"input": "q", "output": "a"}], on_invalid="record")
    assert result.score is None and result.error_kind == "invalid_run" and not judge.calls


def test_over_20_pieces_are_asked_in_parts_of_one_call_and_joined_in_rank_order(fake_judge: FakeJudgeFactory) -> None:
    """25 pieces (a common retrieval): parts of 20 and 5 in the analyze step's one call; the MAP is
    over all 25, each verdict on its own piece (issue 46 item 3: no cap)."""
    useful = {2, 22, 25}

    def judged(prompt: Any) -> dict[str, Any]:
        ranks = [int(n) for n in re.findall(r"^(\d+)\. Piece number \1\.$", str(prompt[-1]["content"]), re.M)]
        return verdicts(["yes" if rank in useful else "no" for rank in ranks])

    judge = fake_judge(PieceVerdicts=judged)
    result = context_precision_scorer(judge).run(run(25))
    (call,) = [c for c in judge.calls if c.schema_names[0] == "PieceVerdicts"]
    assert len(call.prompts) == 2 and "Give exactly 5 verdicts" in str(call.prompts[1][-1]["content"])
    assert [v["verdict"] == "yes" for v in result.analyze_step_result["verdicts"]] == [
        i in useful for i in range(1, 26)]
    assert result.score == round((1 / 2 + 2 / 22 + 3 / 25) / 3, 2)


def test_prob_score_weighs_each_rank_by_the_yes_probability(fake_judge: FakeJudgeFactory) -> None:
    answer = Generation(text=json.dumps(verdicts(["yes", "no"])), finished=True, new_tokens=9,
                        label_probs=({"yes": 0.8, "no": 0.2}, {"yes": 0.4, "no": 0.6}))
    result = context_precision_scorer(fake_judge(PieceVerdicts=answer)).run(run(2))
    soft = (0.8 * 0.8 / 1 + 0.4 * (0.8 + 0.4) / 2) / (0.8 + 0.4)
    assert result.prob_score == round(soft, 4)
