"""Context relevance on the scripted fake judge: Mastra's weighted relevance less the unused
and missing-context penalties, its options and edge cases, and the probability twin."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from localjudge import InvalidRunError
from localjudge.judge import Generation
from localjudge.samples.runs import Sample
from localjudge.scorers.judged.context_relevance import (
    Penalties,
    analyze_schema,
    context_relevance_scorer,
    relevance_score,
)
from localjudge.scorers.judged.context_relevance_prompts import MAX_MISSING
from tests.fakes import FakeJudgeFactory


def answer(pieces: list[str], missing: list[str] | None = None) -> dict[str, Any]:
    """Evaluations from ``"high/yes"``-style strings (relevance / used)."""
    evaluations = [{"relevance": p.split("/")[0], "used": p.split("/")[1], "reason": f"r{i}"}
                   for i, p in enumerate(pieces)]
    return {"evaluations": evaluations, "missing_context": missing or []}


def run(pieces: int, **more: Any) -> dict[str, Any]:
    return {"input": "What does the shop sell?", "output": "It sells bread.",
            "context": [f"Piece number {i}." for i in range(1, pieces + 1)], **more}


# Mastra: max(0, mean weight (high 1, medium 0.7, low 0.3, none 0) - 0.1 x unused high
# - min(0.15 x missing, 0.5)) x scale, rounded to two decimals.
@pytest.mark.parametrize(("pieces", "missing", "scale", "expected"), [
    (["high/yes", "high/yes"], [], 1.0, 1.0),
    (["high/yes", "none/no"], [], 1.0, 0.5),
    (["high/no", "medium/yes"], ["x"], 1.0, 0.6),  # 0.85 - 0.1 - 0.15
    (["medium/yes", "low/no"], [], 1.0, 0.5),
    (["low/yes"], [], 1.0, 0.3),
    (["medium/no", "medium/yes", "medium/no"], [], 1.0, 0.7),  # only unused *high* pieces cost
    (["high/no", "high/no"], ["a", "b", "c", "d"], 1.0, 0.3),  # 1 - 0.2 - min(0.6, 0.5)
    (["high/no", "high/no", "high/no"], ["a", "b", "c"], 1.0, 0.25),  # 1 - 0.3 - 0.45
    (["none/no"], ["a"], 1.0, 0.0),  # floor at 0
    (["high/yes", "medium/no", "low/no"], [], 10.0, 6.67),  # 2 / 3 x 10
    (["high/no"], ["a", "b"], 5.0, 3.0),  # (1 - 0.1 - 0.3) x 5
])
def test_the_score_is_mean_relevance_less_the_penalties(pieces: list[str], missing: list[str], scale: float,
                                                        expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ContextEvaluations=answer(pieces, missing))
    result = context_relevance_scorer(judge, scale=scale).run(run(len(pieces)))
    assert result.score == expected and result.error is None and result.reason == "ok"
    evaluations = result.analyze_step_result["evaluations"]
    assert [(e["context_index"], e["piece"], e["relevance"], e["used"]) for e in evaluations] == [
        (i, f"Piece number {i + 1}.", p.split("/")[0], p.endswith("/yes")) for i, p in enumerate(pieces)]
    assert result.analyze_step_result["missing_context"] == missing


@pytest.mark.parametrize(("penalties", "expected"), [
    ({"unusedHighRelevanceContext": 0.5}, 0.0),  # 0.85 - 0.5 - 0.45: Mastra's names
    ({"unused_high_relevance_context": 0.0}, 0.4),  # 0.85 - 0 - 0.45
    ({"missing_context_per_item": 0.1}, 0.45),  # 0.85 - 0.1 - 0.3
    ({"maxMissingContextPenalty": 0.2}, 0.55),  # 0.85 - 0.1 - min(0.45, 0.2)
    (Penalties(0.0, 0.0, 0.0), 0.85),
    (None, 0.3),  # the defaults: 0.85 - 0.1 - 0.45
])
def test_the_penalties_are_options(penalties: Any, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ContextEvaluations=answer(["high/no", "medium/yes"], ["a", "b", "c"]))
    assert context_relevance_scorer(judge, penalties=penalties).run(run(2)).score == expected


@pytest.mark.parametrize(("penalties", "error"), [
    ({"unused": 0.1}, ValueError), ({"missingContextPerItem": -0.1}, ValueError),
    ({"max_missing_context_penalty": float("inf")}, ValueError), ({"missing_context_per_item": True}, ValueError),
    ([0.1, 0.2], TypeError),
])
def test_bad_penalties_are_refused_when_the_scorer_is_built(penalties: Any, error: type[Exception],
                                                            fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(error):
        context_relevance_scorer(fake_judge(), penalties=penalties)


def test_no_evaluations_follow_mastra() -> None:
    assert relevance_score([], 0, 0, Penalties()) == 1.0 and relevance_score([], 0, 2, Penalties()) == 0.0


@pytest.mark.parametrize("row", [
    run(0), {**run(0), "context": ["", "  "]}, {**run(0), "context": ""},
])
def test_an_empty_context_scores_the_scale_without_the_judge(row: dict[str, Any], fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = context_relevance_scorer(judge, scale=10).run(row)
    assert result.score == 10 and result.prob_score == 10 and "No context" in (result.reason or "")
    assert not judge.calls
    hooked = context_relevance_scorer(judge, get_context=lambda run: []).run({**row, "context": ["Ignored."]})
    assert hooked.score == 1 and not judge.calls


def test_without_any_context_the_run_is_refused_before_any_call(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    row = {"input": "q", "output": "a"}
    for absent in (row, {**row, "context": None}, {**row, "context": float("nan")}):
        with pytest.raises(InvalidRunError, match="context_relevance needs context"):
            context_relevance_scorer(judge).run(absent)
    (result,) = context_relevance_scorer(judge).run_batch([row], on_invalid="record")
    assert result.score is None and result.error_kind == "invalid_run" and not judge.calls
    with pytest.raises(ValueError, match="holds no text"):
        context_relevance_scorer(judge, context=[])


def test_context_can_come_from_the_scorer(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ContextEvaluations=answer(["high/yes"]))
    row = {"input": "q", "output": "a"}
    assert context_relevance_scorer(judge, context="Static piece.").run(row).score == 1.0
    assert "1. Static piece." in judge.calls[-2].prompts[0][-1]["content"]
    hooked = context_relevance_scorer(judge, context="Static piece.", get_context=lambda run: ["Hooked piece."])
    hooked.run({**row, "context": ["Run piece."]})
    assert "1. Hooked piece." in judge.calls[-2].prompts[0][-1]["content"]
    context_relevance_scorer(judge, get_context=lambda run: None).run({**row, "context": ["Run piece."]})
    assert "1. Run piece." in judge.calls[-2].prompts[0][-1]["content"]


def test_one_evaluation_per_piece_is_asked(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ContextEvaluations=answer(["high/yes", "low/no", "none/no"]))
    context_relevance_scorer(judge).run(run(3))
    (call, _) = judge.calls
    shown = call.prompts[0][-1]["content"]
    assert call.schema_names == ("ContextEvaluations",)
    assert "1. Piece number 1.\n2. Piece number 2.\n3. Piece number 3." in shown
    assert "What does the shop sell?" in shown and "It sells bread." in shown
    schema = analyze_schema(Sample("r", "q", "o", ("a", "b", "c")), {}).model_json_schema()["properties"]
    assert (schema["evaluations"]["minItems"], schema["evaluations"]["maxItems"]) == (3, 3)
    assert schema["missing_context"]["maxItems"] == MAX_MISSING


def test_over_20_pieces_are_asked_in_parts_of_one_call_and_joined_in_order(fake_judge: FakeJudgeFactory) -> None:
    """25 pieces: parts of 20 and 5 in one call; every piece evaluated, the missing notes of both
    parts kept, each once (issue 46 item 3: no cap)."""
    def judged(prompt: Any) -> dict[str, Any]:
        numbers = [int(n) for n in re.findall(r"^(\d+)\. Piece number \1\.$", str(prompt[-1]["content"]), re.M)]
        return answer(["none/no" if n in (2, 24) else "high/yes" for n in numbers], ["Prices"])

    judge = fake_judge(ContextEvaluations=judged)
    result = context_relevance_scorer(judge).run(run(25))
    (call,) = [c for c in judge.calls if c.schema_names[0] == "ContextEvaluations"]
    assert len(call.prompts) == 2
    found = result.analyze_step_result
    assert [(e["context_index"], e["relevance"]) for e in found["evaluations"]] == [
        (i, "none" if i in (1, 23) else "high") for i in range(25)]
    assert found["missing_context"] == ["Prices"]
    assert result.score == round(23 / 25 - 0.15, 2)


def test_a_repeated_missing_note_counts_once(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ContextEvaluations=answer(["high/yes"], ["Opening hours", "opening  HOURS", "Prices"]))
    result = context_relevance_scorer(judge).run(run(1))
    assert result.analyze_step_result["missing_context"] == ["Opening hours", "Prices"] and result.score == 0.7


def test_the_reason_step_sees_the_evaluations_and_the_gaps(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ContextEvaluations=answer(["high/no", "none/no"], ["Prices"]))
    prompt = context_relevance_scorer(judge).run(run(2)).generate_reason_prompt or ""
    assert "- high, not used: Piece number 1. (r0)" in prompt and "- none, not used: Piece number 2. (r1)" in prompt
    assert "<<<MISSING\n- Prices\nMISSING>>>" in prompt and "Score: 0.25" in prompt  # 0.5 - 0.1 - 0.15


def test_prob_score_uses_the_label_probabilities(fake_judge: FakeJudgeFactory) -> None:
    probs = ({"high": 0.6, "medium": 0.3, "low": 0.1, "none": 0.0}, {"yes": 0.8, "no": 0.2},
             {"high": 0.1, "medium": 0.2, "low": 0.3, "none": 0.4}, {"yes": 0.5, "no": 0.5})
    given = Generation(text=json.dumps(answer(["high/yes", "none/no"])), finished=True, new_tokens=9,
                       label_probs=probs)
    result = context_relevance_scorer(fake_judge(ContextEvaluations=given)).run(run(2))
    weights = (0.6 + 0.3 * 0.7 + 0.1 * 0.3, 0.1 + 0.2 * 0.7 + 0.3 * 0.3)
    unused_high = 0.6 * 0.2 + 0.1 * 0.5
    assert result.score == 0.5 and result.prob_score == round(sum(weights) / 2 - 0.1 * unused_high, 4)
