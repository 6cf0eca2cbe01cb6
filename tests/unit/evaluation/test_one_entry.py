"""One planner entry for every door (issue 58): `run_evals` (scorers and gates), the live worker's
sampled runs and the planner's `score_planned` itself (each scorer its own runs) make one judge
call per round of steps per batch, as `evaluate` does, with `evaluate`'s results."""

from __future__ import annotations

from typing import Any

from localjudge import LiveScorer, evaluate, run_evals, toxicity_scorer
from localjudge.evaluation import score_planned
from tests.fakes import FakeJudgeFactory
from tests.unit.evaluation.test_schedule import ANSWERS, ROWS, judged, scorers

ITEMS = [{k: v for k, v in row.items() if k != "output"} for row in ROWS]
OUTPUTS = {row["input"]: row["output"] for row in ROWS}
ROUNDS = [["Claims", "ToxicityVerdicts"], ["FaithfulnessVerdicts", "HallucinationVerdicts", "Reason"], ["Reason"]]


def target(question: str) -> str:
    return OUTPUTS[question]


def rounds(judge: Any) -> list[list[str]]:
    return [sorted(set(call.schema_names)) for call in judge.calls]


def evaluated(fake_judge: FakeJudgeFactory) -> dict[str, list[dict[str, Any]]]:
    """`evaluate`'s results on ROWS (each with its row's run id: evaluate's rows are numbered)."""
    results = evaluate(ROWS, scorers(judged(fake_judge(ANSWERS))), batch_size=8).results
    return {name: [{**r.to_dict(), "run_id": ROWS[i]["run_id"]} for i, r in enumerate(found)]
            for name, found in results.items()}


def test_run_evals_with_several_scorers_makes_one_judge_call_per_round_of_steps(fake_judge: FakeJudgeFactory) -> None:
    expected = evaluated(fake_judge)
    judge = judged(fake_judge(ANSWERS))
    gate = toxicity_scorer(judge)  # a gate named as a scorer: its own job, in the same calls
    result = run_evals(ITEMS, scorers(judge), target, gates=[gate], batch_size=8)
    assert rounds(judge) == ROUNDS  # one scorer after another: 8 calls (10 with the gate)
    ids = {scorer.name: scorer.id for scorer in scorers(judge)}
    for i, item in enumerate(result.items):
        for name, results in expected.items():
            assert item.scorer_results[ids[name]].to_dict() == results[i]
        assert item.gate_results[gate.id].to_dict() == expected["toxicity"][i]


def test_run_evals_in_batches_of_two_makes_one_call_per_round_per_batch(fake_judge: FakeJudgeFactory) -> None:
    judge = judged(fake_judge(ANSWERS))
    run_evals(ITEMS, scorers(judge), target, batch_size=2)  # items [0, 1], [2, 3], [4]
    assert len(judge.calls) <= 3 * 3
    by_scorer = judged(fake_judge(ANSWERS))
    for scorer in scorers(by_scorer):
        run_evals(ITEMS, [scorer], target, batch_size=2)
    assert len(judge.calls) < len(by_scorer.calls)


def test_the_planner_entry_scores_each_scorer_on_its_own_runs_as_one_schedule(fake_judge: FakeJudgeFactory) -> None:
    judge = judged(fake_judge(ANSWERS))
    hallucination, faithfulness, toxicity = scorers(judge)
    jobs = [(hallucination, ROWS[:3]), (faithfulness, ROWS[1:3]), (toxicity, [dict(row) for row in ROWS[2:]])]
    found = score_planned(jobs, batch_size=8)
    assert rounds(judge) == ROUNDS
    expected = evaluated(fake_judge)
    for (scorer, runs), one in zip(jobs, found, strict=True):
        start = [r["run_id"] for r in ROWS].index(runs[0]["run_id"])
        assert [one.results[p].to_dict() for p in range(len(runs))] == expected[scorer.name][start:start + len(runs)]


def test_the_live_worker_scores_a_sampled_batch_with_every_scorer_as_one_schedule(
        fake_judge: FakeJudgeFactory) -> None:
    judge = judged(fake_judge(ANSWERS))
    got: list[tuple[str, str]] = []
    with LiveScorer(scorers(judge), sampling=1.0, store=None, max_batch=len(ROWS), max_wait=5.0,
                    on_result=lambda run, result: got.append((result.scorer, str(result.run_id)))) as live:
        for row in ROWS:
            live.submit(row)
        assert live.flush(timeout=30)
    assert len(got) == 3 * len(ROWS)
    assert rounds(judge) == ROUNDS  # one sampled batch: one call per round, not per scorer step
