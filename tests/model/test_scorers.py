"""Every built-in scorer, in each of its modes, on the real default model (SmolLM2-135M), read off
the session's shared run (tests/model/conftest.py). These assert structure and determinism, never
accuracy: the 135M model is a weak judge.

For each scorer and mode: every row is scored in [0, 1] with a reason, or unscored with its kind
and reason, and never because the engine or a step crashed; a scorer scores at least the share of
the rows it can judge that its own real-model test required before the shared run; a row the
judge answered has its probability score where the scorer always reads one; the scorer-specific
structure (the claim scorers' claims and verdicts, toxicity's statements, the rubric's criteria,
pass/fail scores) holds; and one row scored again alone gives the same result (deterministic, and
batch composition changes nothing in float32).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from localjudge.result import ERROR_KINDS, ScoreResult
from localjudge.scorers.judged.claims import Claims, claim_cap
from localjudge.scorers.judged.faithfulness import FaithfulnessVerdict
from localjudge.scorers.judged.hallucination import HallucinationVerdict
from localjudge.scorers.judged.toxicity import ToxicityVerdicts, statements_of
from tests import machine
from tests.fakes import HALLUCINATION_WORDS
from tests.model.conftest import SharedRun
from tests.scorer_options import JUDGED_MODES, OPTIONS

# The share of the rows a scorer can judge (those not lacking a field it needs) it must score: what
# its own real-model test required of its rows before the shared run (context_precision: all but 2
# of 7; multi_turn_judge: all but 1 of 4; answer_similarity and summarization: any). The three
# claim and statement scorers of the first release: every row, unless the judge replayed its worked
# example. noise_sensitivity: none (SmolLM2 replays the example's major issue on 6 of the 8 agent
# runs: docs/benchmarks/accuracy.md).
MIN_SCORED: dict[str, float] = {
    "hallucination": 1.0, "faithfulness": 1.0, "toxicity": 1.0,
    "answer_relevancy": 0.75, "bias": 0.75, "rubric": 0.75, "multi_turn_judge": 0.75,
    "tool_call_accuracy": 0.75, "trajectory_accuracy": 0.75,
    "context_precision": 0.7, "context_recall": 0.7, "context_relevance": 0.7,
    "prompt_alignment": 0.6,
    "answer_similarity": 0.0, "summarization": 0.0,  # and at least one row: ANY_SCORED
    "noise_sensitivity": 0.0,
}
ANY_SCORED = {"answer_similarity", "summarization"}
EXCUSED = {"hallucination", "faithfulness", "toxicity"}  # unscored only when the judge replayed its example
# Scorers that read a probability score wherever the judge answered (pipeline mode; every direct mode does).
PROB_SCORED = {"hallucination", "faithfulness", "toxicity", "bias", "answer_relevancy", "context_precision",
               "context_recall", "context_relevance", "rubric", "multi_turn_judge"}
PASS_FAIL = {"rubric", "multi_turn_judge"}  # scale or 0
CRASHES = {"judge_failed", "step_error"}
VERDICTS: dict[str, Any] = {"hallucination": HallucinationVerdict, "faithfulness": FaithfulnessVerdict}


IDS = [f"{name}-{mode}" for name, mode in JUDGED_MODES]


def judged(result: ScoreResult) -> bool:
    """Scored from the judge's answer (not decided by a rule without it)."""
    return result.scored and bool(result.analyze_step_result)


@pytest.mark.parametrize(("name", "mode"), JUDGED_MODES, ids=IDS)
def test_every_row_is_scored_in_range_or_unscored_with_its_reason(shared_run: SharedRun, name: str,
                                                                   mode: str) -> None:
    results = shared_run.results[name, mode]
    assert [r.run_id for r in results] == [row["run_id"] for row in shared_run.rows]
    for result in results:
        if result.scored:
            assert 0.0 <= result.score <= 1.0 and result.reason, result  # type: ignore[operator]
            if name in PASS_FAIL or mode == "direct" and judged(result):
                assert result.score in (0.0, 1.0), result
        else:
            assert result.error_kind in ERROR_KINDS and result.error, result
            assert result.error_kind not in CRASHES, result


@pytest.mark.parametrize(("name", "mode"), JUDGED_MODES, ids=IDS)
def test_each_scorer_scores_its_share_of_the_rows(shared_run: SharedRun, name: str, mode: str) -> None:
    results = [r for r in shared_run.results[name, mode] if r.error_kind != "invalid_run"]
    assert results, f"{name} can judge none of the rows"
    scored = sum(r.scored for r in results)
    errors = [(r.run_id, r.error_kind, r.error) for r in results if not r.scored]
    needed = max(math.ceil(MIN_SCORED[name] * len(results) - 1e-9), 1 if name in ANY_SCORED else 0)
    assert scored >= needed, (scored, len(results), errors)
    if name in EXCUSED:
        assert all(kind == "copied_example" for _, kind, _ in errors), errors


@pytest.mark.parametrize(("name", "mode"), JUDGED_MODES, ids=IDS)
def test_an_answered_row_has_its_probability_score(shared_run: SharedRun, name: str, mode: str) -> None:
    if mode == "pipeline" and name not in PROB_SCORED:
        pytest.skip(f"{name}'s pipeline reads no probability score when a label reading is missing")
    for result in shared_run.results[name, mode]:
        if judged(result):
            assert result.prob_score is not None and 0.0 <= result.prob_score <= 1.0, result


@pytest.mark.parametrize("name", ["hallucination", "faithfulness", "toxicity"])
def test_claims_and_verdicts_validate(shared_run: SharedRun, name: str) -> None:
    """Every claim list and verdict fits its schema; one verdict per claim (toxicity: one per
    sentence of the output, each with its sentence); an empty output is decided without the judge."""
    scorer = shared_run.scorers[name, "pipeline"]
    for row, result in zip(shared_run.rows, shared_run.results[name, "pipeline"], strict=True):
        if not result.scored:
            continue
        output = scorer.sample(row).output
        if not output.strip():
            assert result.analyze_step_result is None, result
            continue
        if name == "toxicity":
            verdicts = result.analyze_step_result["verdicts"]
            ToxicityVerdicts.model_validate({"verdicts": [{k: v for k, v in x.items() if k != "statement"}
                                                          for x in verdicts]})
            assert [v["statement"] for v in verdicts] == statements_of(output)
            continue
        claims = Claims.model_validate({"claims": result.preprocess_step_result["claims"]}).claims
        assert len(claims) <= claim_cap(output)
        verdicts = result.analyze_step_result["verdicts"] if claims else []
        assert len(verdicts) == len(claims)
        for verdict in verdicts:
            label = HALLUCINATION_WORDS[verdict["verdict"]] if name == "hallucination" else verdict["verdict"]
            VERDICTS[name].model_validate({"verdict": label, "reason": verdict["reason"]})


def test_the_rubric_gives_one_verdict_per_criterion(shared_run: SharedRun) -> None:
    criteria = [c if isinstance(c, str) else c["criterion"] for c in OPTIONS["rubric"]["criteria"]]
    for result in shared_run.results["rubric", "pipeline"]:
        if judged(result):
            assert [v["criterion"] for v in result.analyze_step_result["verdicts"]] == criteria


# Batched equals one-by-one is the engine's (float32 on CPU): shown on every kind of step, not
# every scorer: claims -> verdicts -> reason, the output's sentences, one direct question, and
# a scorer over tool calls.
AGAIN = [("hallucination", "pipeline"), ("toxicity", "pipeline"), ("faithfulness", "direct"),
         ("tool_call_accuracy", "pipeline")]


@pytest.mark.parametrize(("name", "mode"), AGAIN, ids=[f"{n}-{m}" for n, m in AGAIN])
def test_one_row_again_alone_gives_the_same_result(shared_run: SharedRun, name: str, mode: str) -> None:
    """Cheap determinism: one row (the first the judge answered) scored again in a batch of its
    own equals its result in the shared run's batches."""
    results = shared_run.results[name, mode]
    index = next((i for i, r in enumerate(results) if judged(r)),
                 next(i for i, r in enumerate(results) if r.error_kind != "invalid_run"))
    (again,) = shared_run.scorers[name, mode].run_batch([shared_run.rows[index]])
    assert again.to_dict() == results[index].to_dict(), f"batched differs from one by one in float32 on {machine.cpu()}"
