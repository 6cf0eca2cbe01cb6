"""`run_evals` as Mastra's `runEvals`, with localjudge's batching and never-abort rule.

Targets run `concurrency` at a time (a barrier only two concurrent targets can pass); each item's
`on_item_complete` fires as soon as its batch is scored, before the next batch's judge calls,
with results keyed by scorer id; means are unrounded; `summary.total_items`; ground truth and
request context reach `get_context`; thresholds give Mastra's verdict; the judge still gets one
call per scorer step per batch.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from localjudge import hallucination_scorer, run_evals, toxicity_scorer
from tests.fakes import FakeJudgeFactory


def tox_answer(prompt: Any) -> dict[str, Any]:
    toxic = "idiot" in prompt[-1]["content"]
    return {"verdicts": [{"verdict": "yes" if toxic else "no",
                          "severity": "high" if toxic else "none", "reason": "r"}]}


ANSWERS = {"ToxicityVerdicts": tox_answer}  # with the default reason, "ok"


ITEMS = [{"input": f"q{i}", "runId": f"r{i}"} for i in range(3)]


def rude_on_first(question: str) -> str:
    return "you idiot" if question == "q0" else "a kind answer"


def test_payload_is_keyed_by_scorer_id_and_means_are_unrounded(fake_judge: FakeJudgeFactory) -> None:
    result = run_evals(ITEMS, [toxicity_scorer(fake_judge(ANSWERS))], rude_on_first)
    assert result.scores == {"toxicity-scorer": 1 / 3}  # 0.333..., not rounded
    assert result.summary.total_items == 3 and result.summary.target_errors == 0
    assert [it.scorer_results["toxicity-scorer"].run_id for it in result.items] == ["r0", "r1", "r2"]
    assert result.items[0].target_result == "you idiot" and result.verdict is None
    assert result.scorer_summaries["toxicity-scorer"].scored == 3


def test_targets_run_concurrently(fake_judge: FakeJudgeFactory) -> None:
    barrier = threading.Barrier(2, timeout=2)

    def target(question: str) -> str:
        barrier.wait()  # passes only when two targets are running at the same time
        return "fine"

    together = run_evals(ITEMS[:2], [toxicity_scorer(fake_judge(ANSWERS))], target, concurrency=2)
    assert together.summary.target_errors == 0
    barrier.reset()
    alone = run_evals(ITEMS[:2], [toxicity_scorer(fake_judge(ANSWERS))], target, concurrency=1)
    assert alone.summary.target_errors == 2
    assert "BrokenBarrierError" in (alone.items[0].target_error or "")


def test_items_complete_batch_by_batch_with_one_judge_call_per_step(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    calls_seen: list[int] = []
    items = [{"input": f"q{i}"} for i in range(4)]
    run_evals(items, [toxicity_scorer(judge)], rude_on_first, batch_size=2,
              on_item_complete=lambda item: calls_seen.append(len(judge.calls)))
    assert calls_seen == [2, 2, 4, 4]  # analyze + reason per batch; reported before the next batch
    assert [len(c.prompts) for c in judge.calls] == [2, 2, 2, 2]


def test_ground_truth_and_request_context_reach_get_context(fake_judge: FakeJudgeFactory) -> None:
    seen: list[dict[str, Any]] = []

    def get_context(*, run: dict[str, Any], **rest: Any) -> list[str]:
        seen.append(run)
        return [run["groundTruth"]]

    verdicts = lambda p: {"verdicts": [{"verdict": "supported", "reason": "r"}]}  # noqa: E731
    judge = fake_judge(HallucinationVerdicts=verdicts)  # the default claim, "A claim.", and reason, "ok"
    data = [{"input": "q", "groundTruth": "The truth.", "requestContext": {"user": "u1"}}]
    result = run_evals(data, [hallucination_scorer(judge, get_context=get_context)], lambda q: "A claim.")
    assert seen[0]["requestContext"] == {"user": "u1"} and seen[0]["output"] == "A claim."
    assert "The truth." in (result.items[0].scorer_results["hallucination-scorer"].analyze_prompt or "")


def test_thresholds_give_mastras_verdict(fake_judge: FakeJudgeFactory) -> None:
    def scorer() -> Any:
        return toxicity_scorer(fake_judge(ANSWERS))

    passed = run_evals(ITEMS, [{"scorer": scorer(), "threshold": {"max": 0.5}}], rude_on_first)
    assert passed.verdict == "passed" and passed.threshold_results["toxicity-scorer"].passed  # type: ignore[index]
    failed = run_evals(ITEMS, [{"scorer": scorer(), "threshold": 0.5}], rude_on_first)  # a minimum
    assert failed.verdict == "scored" and not failed.threshold_results["toxicity-scorer"].passed  # type: ignore[index]
    for bad in (1.5, -0.1, "high", {"below": 0.2}, {}):
        with pytest.raises(ValueError, match="threshold"):
            run_evals(ITEMS, [{"scorer": scorer(), "threshold": bad}], rude_on_first)


def test_async_target_and_callback(fake_judge: FakeJudgeFactory) -> None:
    async def target(question: str) -> str:
        await asyncio.sleep(0)
        return rude_on_first(question)

    done: list[str] = []

    async def on_item_complete(item: Any) -> None:
        done.append(item.item["runId"])

    result = run_evals(ITEMS, [toxicity_scorer(fake_judge(ANSWERS))], target, on_item_complete=on_item_complete)
    assert result.scores["toxicity-scorer"] == pytest.approx(1 / 3) and done == ["r0", "r1", "r2"]


@pytest.mark.parametrize(("kwargs", "match"), [({"concurrency": 0}, "concurrency"), ({"batch_size": 0}, "batch_size")])
def test_bad_settings_fail_before_any_target_runs(kwargs: dict[str, Any], match: str,
                                                  fake_judge: FakeJudgeFactory) -> None:
    ran: list[str] = []
    with pytest.raises(ValueError, match=match):
        run_evals(ITEMS, [toxicity_scorer(fake_judge(ANSWERS))], ran.append, **kwargs)
    with pytest.raises(ValueError, match="each once"):
        run_evals(ITEMS, [toxicity_scorer(fake_judge(ANSWERS)), toxicity_scorer(fake_judge(ANSWERS))], ran.append)
    assert ran == []
