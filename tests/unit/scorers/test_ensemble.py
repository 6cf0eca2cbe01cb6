"""Ensemble mode (`localjudge.scorers.judged.ensemble`): a scorer's pipeline and direct mode on every row in
one schedule, the pipeline's score and reason, the mean of both probabilities as the prob score,
both modes kept in the row; keyed apart from either mode, refused under Mastra's compat. The
fake judge gives known label probabilities, so the mean is checked to the digit. (The CLI, sweeps,
bench and calibration in ensemble mode: tests/unit/cli/test_ensemble_cli.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from localjudge import Generation, evaluate
from localjudge.scorers import CODE_SCORERS, build_scorer
from tests.fakes import FakeJudgeFactory
from tests.scorer_options import OPTIONS, SCORER_MODES
from tests.unit.scorers.test_registry import FULL_RUN, UNREADABLE

RUN = {"run_id": "r1", "input": "When was the Eiffel Tower built?", "output": "It was completed in 1925.",
       "context": "The Eiffel Tower was completed in 1889."}
WITH_DIRECT = [name for name, mode in SCORER_MODES if mode == "direct"]


def direct(label: str, p_yes: float | None) -> Generation:
    """The direct verdict, with P(yes) (None: an engine that gives no label probabilities)."""
    probs = () if p_yes is None else ({"yes": p_yes, "no": round(1 - p_yes, 6)},)
    return Generation(f'{{"verdict":"{label}","reason":"The context says 1889."}}', label_probs=probs)


def verdicts(*p_unsupported: float) -> Generation:
    """Hallucination's claim verdicts (one per claim), with P(unsupported) for each."""
    answer = {"verdicts": [{"verdict": "unsupported" if p >= 0.5 else "supported", "reason": "r"}
                           for p in p_unsupported]}
    return Generation(json.dumps(answer), label_probs=tuple({"supported": round(1 - p, 6), "unsupported": p}
                                                            for p in p_unsupported))


def judge_of(fake_judge: FakeJudgeFactory, **answers: Any) -> Any:
    claims = {"claims": ["It was completed in 1925.", "It is in Paris."]}
    return fake_judge(**{"Claims": claims, "HallucinationVerdicts": verdicts(0.8, 0.4),
                         "DirectVerdict": direct("yes", 0.7), **answers})


def ensemble(judge: Any, **keywords: Any) -> Any:
    return build_scorer("hallucination", judge, mode="ensemble", **keywords)


def test_prob_score_is_the_mean_of_both_modes_and_the_score_the_pipelines(fake_judge: FakeJudgeFactory) -> None:
    result = ensemble(judge_of(fake_judge), scale=2.0).run(RUN)
    alone = build_scorer("hallucination", judge_of(fake_judge), scale=2.0).run(RUN)
    # pipeline: P(unsupported) 0.8 and 0.4 -> 0.6 x 2 = 1.2; direct: P(yes) 0.7 x 2 = 1.4; mean 1.3
    assert result.prob_score == 1.3
    assert (result.score, result.reason) == (alone.score, alone.reason) == (1.0, "ok")  # one of two claims
    pipeline, direct_part = result.analyze_step_result["pipeline"], result.analyze_step_result["direct"]
    assert (pipeline["prob_score"], pipeline["probability"], pipeline["score"]) == (1.2, 1.2, 1.0)
    assert pipeline["analyze"] == alone.analyze_step_result  # the verdicts, as the pipeline keeps them
    assert (direct_part["prob_score"], direct_part["score"]) == (1.4, 2.0)
    assert direct_part["analyze"] == {"verdict": "yes", "reason": "The context says 1889."}
    assert "<<<RESPONSE\nIt was completed in 1925.\nRESPONSE>>>" in direct_part["prompt"]
    assert result.preprocess_step_result == alone.preprocess_step_result and result.run_id == "r1"


def test_the_direct_verdict_rides_in_the_pipelines_first_call(fake_judge: FakeJudgeFactory) -> None:
    judge = judge_of(fake_judge)
    ensemble(judge).run_batch([RUN, {**RUN, "run_id": "r2"}])
    assert [call.schema_names for call in judge.calls] == [
        ("Claims", "Claims", "DirectVerdict", "DirectVerdict"), ("HallucinationVerdicts",) * 2, ("Reason",) * 2]


@pytest.mark.parametrize(("claims", "expected"), [
    ({"claims": []}, 0.35),  # the pipeline's shortcut (no claims, score 0): its hard score 0 in the mean
    ({"claims": ["It was completed in 1925.", "It is in Paris."]}, 0.65),
])
def test_a_mode_decided_without_the_judge_puts_its_hard_score_in_the_mean(
        claims: dict[str, Any], expected: float, fake_judge: FakeJudgeFactory) -> None:
    result = ensemble(judge_of(fake_judge, Claims=claims)).run(RUN)
    assert result.prob_score == expected  # (0 + 0.7) / 2, or (0.6 + 0.7) / 2 with the claims judged
    if not claims["claims"]:
        assert result.analyze_step_result["pipeline"] == {"score": 0.0, "prob_score": 0.0, "probability": 0.0,
                                                          "analyze": None}


def test_both_modes_decided_without_the_judge_give_their_score(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = ensemble(judge, scale=3.0).run({**RUN, "output": " "})
    assert (result.score, result.prob_score) == (0.0, 0.0) and judge.calls == []


def test_no_mean_without_both_probabilities(fake_judge: FakeJudgeFactory) -> None:
    """An engine that gives no label probability for one mode: no prob score, never one mode's alone."""
    result = ensemble(judge_of(fake_judge, DirectVerdict=direct("yes", None))).run(RUN)
    assert result.scored and result.prob_score is None
    assert result.analyze_step_result["pipeline"]["probability"] == 0.6


def test_a_failed_direct_mode_keeps_the_pipelines_score_without_a_prob_score(fake_judge: FakeJudgeFactory) -> None:
    result = ensemble(judge_of(fake_judge, DirectVerdict="not json")).run(RUN)
    assert (result.score, result.prob_score, result.error) == (0.5, None, None)
    failed = result.analyze_step_result["direct"]
    assert failed["error_kind"] == "invalid_output" and failed["raw_output"] == "not json" and failed["score"] is None


def test_a_failed_pipeline_leaves_the_row_unscored_with_the_direct_part_kept(fake_judge: FakeJudgeFactory) -> None:
    result = ensemble(judge_of(fake_judge, Claims="not json")).run(RUN)
    assert (result.score, result.prob_score, result.error_kind) == (None, None, "invalid_output")
    assert result.analyze_step_result["direct"]["prob_score"] == 0.7


def test_an_unreadable_run_is_recorded_or_refused_once(fake_judge: FakeJudgeFactory) -> None:
    judge = judge_of(fake_judge)
    scorer = ensemble(judge)
    no_context = {"run_id": "bad", "input": "q", "output": "Paris."}
    bad, good = scorer.run_batch([no_context, RUN], on_invalid="record")
    assert (bad.run_id, bad.error_kind) == ("bad", "invalid_run") and "needs context" in (bad.error or "")
    assert good.prob_score == 0.65
    with pytest.raises(ValueError, match="run 0: hallucination needs context"):
        scorer.run_batch([no_context])


def test_a_merged_call_is_asked_again_at_the_direct_modes_own_budget(fake_judge: FakeJudgeFactory) -> None:
    """The merged call's budget is the claims step's; a direct answer that used its own budget or
    more may have depended on the larger one, so it is asked again at its own (`merged`)."""
    near = Generation('{"verdict":"yes","reason":"r"}', new_tokens=10_000, label_probs=({"yes": 0.9, "no": 0.1},))
    judge = judge_of(fake_judge, DirectVerdict=[near, direct("no", 0.2)])
    result = ensemble(judge).run(RUN)
    first, again = judge.calls[0], judge.calls[1]
    assert first.schema_names == ("Claims", "DirectVerdict") and again.schema_names == ("DirectVerdict",)
    assert again.max_new_tokens < first.max_new_tokens
    assert result.analyze_step_result["direct"]["analyze"]["verdict"] == "no" and result.prob_score == 0.4


def test_the_ensemble_is_keyed_apart_from_either_mode(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorers = [build_scorer("hallucination", judge, mode=mode) for mode in ("pipeline", "direct", "ensemble")]
    assert len({s.key for s in scorers}) == 3 and len({s.prompt_hash for s in scorers}) == 3
    assert len({s.version for s in scorers}) == 3
    assert ensemble(judge.__class__(judge.script, identity="other")).key != scorers[2].key


def test_mastras_compat_refuses_the_ensemble(fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="Mastra has no such mode"):
        ensemble(fake_judge(), compat="mastra")


@pytest.mark.parametrize("name", ["context_relevance", "multi_turn_judge", next(iter(CODE_SCORERS))])
def test_a_scorer_without_a_direct_mode_has_no_ensemble(name: str, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="no direct mode"):
        build_scorer(name, fake_judge(), mode="ensemble", options=OPTIONS.get(name))


def test_an_unknown_mode_names_the_ensemble(fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="modes: pipeline, direct, ensemble"):
        build_scorer("toxicity", fake_judge(), mode="fast")


@pytest.mark.parametrize("name", WITH_DIRECT)
def test_every_scorer_with_a_direct_mode_has_an_ensemble(name: str, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorer = build_scorer(name, judge, mode="ensemble", scale=10.0, options=OPTIONS.get(name))
    pipeline = build_scorer(name, judge, scale=10.0, options=OPTIONS.get(name))
    full, unreadable = scorer.run_batch([FULL_RUN, UNREADABLE], on_invalid="record")
    assert full.scored and full.score == pipeline.run(FULL_RUN).score and full.reason, full
    assert set(full.analyze_step_result) == {"pipeline", "direct"}
    assert unreadable.error_kind == "invalid_run"
    assert (scorer.positive, scorer.higher_is_better, scorer.name) == (pipeline.positive, pipeline.higher_is_better,
                                                                       name)


def test_evaluate_keeps_both_modes_in_the_steps_column_beside_another_scorer(fake_judge: FakeJudgeFactory) -> None:
    judge = judge_of(fake_judge)
    scorers = [ensemble(judge), build_scorer("toxicity", judge)]
    evaluation = evaluate([RUN, {**RUN, "run_id": "r2"}], scorers)
    row = evaluation.dataset[0]
    assert row["hallucination_prob_score"] == 0.65 and row["hallucination_score"] == 0.5
    steps = json.loads(row["hallucination_steps"])["analyze"]
    assert steps["direct"]["analyze"]["verdict"] == "yes" and len(steps["pipeline"]["analyze"]["verdicts"]) == 2
    assert len(judge.calls) == 3  # claims + statements + direct verdicts; verdicts; reasons: one schedule
    assert evaluation.summary["hallucination"].new_tokens >= 0
