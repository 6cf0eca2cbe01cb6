"""Custom scorers that port from Mastra as written: a prompt-object `generate_score` (the judge
writes ``{score}`` under a bounded schema, one call per batch), the `score_returns` switch
(a fraction, or the score itself: Mastra's contract), function steps reading the original run,
`not_scorable(reason)` (a result state of its own: no later step, no judge call, not a failure,
counted apart in summaries and resumed from the store), `prepare_run`, and Mastra's docs' own
gluten checker and refund judge ported (tests/unit/scoring/mastra_ports.py; the differential
tier runs the originals beside them).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from localjudge import FakeJudge, JudgeStep, ResultStore, create_scorer, evaluate, not_scorable
from localjudge.scoring import ScoreAnswer, score_answer, token_budget
from tests.fakes import FakeJudgeFactory
from tests.unit.scoring.mastra_ports import GlutenAnalysis, agent_run, gluten_checker, refund_judge

RATE = {"description": "Rate it", "create_prompt": lambda run, results: f"Rate from 0 to 1: {run.output}"}


def test_a_prompt_object_score_is_one_bounded_judge_call_per_batch() -> None:
    judge = FakeJudge({"ScoreAnswer": [{"score": 0.25}, {"score": 0.75}]})
    scorer = create_scorer("rated", judge=judge, instructions="Judge.").generate_score(RATE)
    results = scorer.run_batch([{"output": "a"}, {"output": "b"}])
    assert [r.score for r in results] == [0.25, 0.75]
    assert [c.schema_names for c in judge.calls] == [("ScoreAnswer", "ScoreAnswer")]  # one call for both rows
    assert judge.calls[0].prompts[0][-1]["content"] == "Rate from 0 to 1: a"
    assert judge.calls[0].prompts[0][0]["content"] == "Judge."  # the scorer's instructions as the system message
    schema = ScoreAnswer.model_json_schema()["properties"]["score"]
    assert (schema["minimum"], schema["maximum"], schema["multipleOf"]) == (0, 1, 0.01)  # two decimals: it closes
    assert ScoreAnswer.model_json_schema()["additionalProperties"] is False and token_budget(ScoreAnswer) < 64


def test_a_prompt_object_score_out_of_its_bounds_is_unscored() -> None:
    judge = FakeJudge({"ScoreAnswer": [{"score": 1.5}]})
    (result,) = create_scorer("rated", judge=judge).generate_score(RATE).run_batch([{"output": "a"}])
    assert result.failed and result.error_kind == "invalid_output" and "score" in (result.error or "")


@pytest.mark.parametrize(("returns", "scale", "answer", "score"), [
    ("fraction", 1, 0.7, 0.7), ("fraction", 10, 0.7, 7.0), ("score", 10, 7.0, 7.0), ("score", 1, 0.7, 0.7)])
def test_score_returns_reads_the_number_as_a_fraction_or_as_the_score(returns: str, scale: float, answer: float,
                                                                      score: float) -> None:
    judge = FakeJudge({"ScoreAnswer": [{"score": answer}]})
    function = create_scorer("f", scale=scale, score_returns=returns).generate_score(  # type: ignore[arg-type]
        lambda run, results: answer)
    prompted = create_scorer("p", judge=judge, scale=scale, score_returns=returns).generate_score(  # type: ignore
        RATE)
    assert function.run({"output": "x"}).score == prompted.run({"output": "x"}).score == score


def test_the_prompt_object_schema_is_bounded_by_the_scale_under_score_returns_score() -> None:
    judge = FakeJudge({"ScoreAnswer": [{"score": 8.5}]})
    scorer = create_scorer("p", judge=judge, scale=10, score_returns="score").generate_score(RATE)
    assert scorer.run({"output": "x"}).score == 8.5
    assert score_answer(10).model_json_schema()["properties"]["score"]["maximum"] == 10


@pytest.mark.parametrize(("returns", "bad", "message"), [("fraction", 1.5, "not a fraction in [0, 1]"),
                                                         ("fraction", -0.5, "not a fraction in [0, 1]"),
                                                         ("score", float("nan"), "not a finite number")])
def test_a_number_outside_its_contract_is_unscored(returns: str, bad: float, message: str) -> None:
    scorer = create_scorer("odd", scale=10, score_returns=returns).generate_score(  # type: ignore[arg-type]
        lambda run, results: bad)
    result = scorer.run({"output": "x"})
    assert result.failed and result.error_kind == "step_error" and message in (result.error or "")


def test_bad_switches_and_prompt_objects_are_refused() -> None:
    with pytest.raises(ValueError, match="score_returns must be"):
        create_scorer("x", score_returns="final")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prompt-object generate_score takes"):
        create_scorer("x").generate_score({"createPrompt": lambda r, s: "", "outputSchema": {}})
    with pytest.raises(ValueError, match="prompt-object generate_score takes"):
        create_scorer("x").generate_score({"description": "no prompt"})


def test_function_steps_read_the_original_run() -> None:
    seen: dict[str, Any] = {}

    def look(run: Any, results: Any) -> dict[str, Any]:
        seen.update(messages=run.raw["input"], context=run.request_context, truth=run.ground_truth_data)
        return {}

    run = {"input": [{"role": "user", "content": "Hi"}], "output": "Hello",
           "requestContext": {"tier": "gold"}, "groundTruth": {"answer": "Hello", "tags": ["greeting"]}}
    create_scorer("look").preprocess(look).generate_score(lambda run, results: 1.0).run(run)
    assert seen == {"messages": [{"role": "user", "content": "Hi"}], "context": {"tier": "gold"},
                    "truth": {"answer": "Hello", "tags": ["greeting"]}}




def test_not_scorable_skips_the_rest_costs_no_judge_call_and_is_no_failure() -> None:
    judge = FakeJudge({"ScoreAnswer": lambda prompt: {"score": 0.5}})
    scorer = (create_scorer("tool", judge=judge)
              .preprocess(lambda run, results: {"ok": 1} if "tool" in run.output else not_scorable("no tool"))
              .generate_score(RATE))
    used, unused, bare = scorer.run_batch([{"output": "tool used"}, {"output": "nothing"},
                                           {"output": "plain"}])
    assert used.score == 0.5 and used.not_scorable is False and used.failed is False
    assert (unused.score, unused.error_kind) == (None, "not_scorable")
    assert unused.error == "preprocess step: not scorable: no tool"
    assert unused.not_scorable and not unused.failed and not unused.scored
    assert bare.not_scorable
    assert [len(c.prompts) for c in judge.calls] == [1]  # only the scorable run reached the judge
    no_reason = create_scorer("t").generate_score(lambda run, results: not_scorable()).run({"output": "x"})
    assert (no_reason.error_kind, no_reason.error) == ("not_scorable", "score step: not scorable")


def test_a_judge_step_finish_may_declare_the_run_not_scorable() -> None:
    judge = FakeJudge({"GlutenAnalysis": [{"isGlutenFree": True, "glutenSources": []}]})
    step = JudgeStep(instructions="i", prompt=lambda run, results: run.output, schema=GlutenAnalysis,
                     finish=lambda run, results, answer: not_scorable("not a recipe"))
    result = create_scorer("g", judge=judge).analyze(step).generate_score(lambda run, results: 1.0).run(
        {"output": "x"})
    assert result.not_scorable and result.error == "analyze step: not scorable: not a recipe"


def test_not_scorable_is_counted_apart_in_summaries_and_resumed_from_the_store(tmp_path: Path) -> None:
    calls: list[str] = []

    def check(run: Any, results: Any) -> Any:
        calls.append(run.output)
        return not_scorable("empty") if not run.output.strip() else {}

    scorer = create_scorer("c").preprocess(check).generate_score(
        lambda run, results: 1 / 0 if run.output == "boom" else 1.0)
    rows = [{"output": "fine"}, {"output": " "}, {"output": "boom"}]
    store = ResultStore(tmp_path / "store")
    ev = evaluate(rows, [scorer], store=store)
    summary = ev.summary["c"]
    assert (summary.scored, summary.unscored, summary.not_scorable) == (1, 1, 1)
    assert ev.dataset["c_error_kind"] == [None, "not_scorable", "step_error"]
    again = evaluate(rows, [scorer], store=ResultStore(tmp_path / "store"))
    judged = [c for c in calls if not c.startswith("Probe")]  # the prompt hash's probe runs aside
    assert again.summary["c"].resumed == 3 and judged == ["fine", "boom", " "]  # none judged again
    assert again.results["c"][1].not_scorable
    stored = [json.loads(line) for line in (tmp_path / "store" / "rank-0.jsonl").read_text().splitlines()]
    assert sorted(r["result"]["error_kind"] or "" for r in stored) == ["", "not_scorable", "step_error"]


def test_prepare_run_rewrites_the_run_before_anything_reads_it() -> None:
    async def last_message_only(run: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {**run, "output": run["output"][-1:], "requestContext": None}

    seen: list[Any] = []
    scorer = create_scorer("recent", prepare_run=last_message_only).preprocess(
        lambda run, results: seen.append((run.output, run.request_context))).generate_score(
        lambda run, results: 1.0 if len(run.raw["output"]) == 1 else 0.0)
    run = {"output": [{"role": "assistant", "content": "first"}, {"role": "assistant", "content": "last"}],
           "requestContext": {"user": "u1"}}
    assert scorer.run(run).score == 1.0 and seen == [("last", None)]
    refused = create_scorer("bad", prepare_run=lambda run: None).generate_score(lambda run, results: 1.0)
    (result,) = refused.run_batch([{"output": "x"}], on_invalid="record")
    assert result.error_kind == "invalid_run" and "prepare_run gave NoneType" in (result.error or "")


def test_the_gluten_checker_ports_as_written(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(GlutenAnalysis={"isGlutenFree": False, "glutenSources": ["flour"]},
                       Reason={"reason": "This recipe contains gluten because of the flour."})
    result = gluten_checker(judge).run({"input": [{"role": "user", "content": "Mix flour and water to make dough"}],
                                        "output": {"text": "Mix flour and water to make dough"}})
    assert (result.score, result.analyze_step_result) == (0.0, {"isGlutenFree": False, "glutenSources": ["flour"]})
    assert "Recipe to analyze:\nMix flour and water to make dough\n" in (result.analyze_prompt or "")
    assert result.generate_reason_prompt is not None
    assert result.generate_reason_prompt.startswith("Explain why this recipe is not gluten-free.\n\nSources of "
                                                    "gluten: flour")


def test_the_refund_judge_ports_as_written(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ScoreAnswer={"score": 0.8})
    refunded, other = refund_judge(judge).run_batch([agent_run("Refunded.", ["lookupOrder", "refundCustomer"], "r1"),
                                                     agent_run("Here it is.", ["lookupOrder"], "r2")])
    assert (refunded.score, refunded.preprocess_step_result) == (0.8, {"tools": ["lookupOrder", "refundCustomer"]})
    assert other.not_scorable and other.error == "preprocess step: not scorable: refundCustomer was not called"
    (call,) = judge.calls
    assert len(call.prompts) == 1 and call.prompts[0][-1]["content"].startswith(
        'Rate this refund handling from 0 to 1:\n[{"id":"a1","role":"assistant"')


def test_a_reason_step_may_declare_the_run_not_scorable() -> None:
    scorer = create_scorer("r").generate_score(lambda run, results: 1.0).generate_reason(
        lambda run, results: not_scorable("nothing to explain") if run.output == "-" else "Fine.")
    fine, skipped = scorer.run_batch([{"output": "ok"}, {"output": "-"}])
    assert (fine.score, fine.reason) == (1.0, "Fine.")
    assert skipped.not_scorable and skipped.score is None and skipped.error == (
        "reason step: not scorable: nothing to explain")


def test_what_a_step_reads_of_the_original_run_is_in_the_results_key(tmp_path: Path) -> None:
    seen: list[Any] = []

    def by_tier(run: Any, results: Any) -> float:
        seen.append(run.request_context)
        return 1.0 if (run.request_context or {}).get("tier") == "gold" else 0.5

    scorer = create_scorer("tiered").generate_score(by_tier)
    assert {"raw.request_context", "raw.requestContext"} <= scorer.shown_fields  # read off the probe runs
    assert create_scorer("plain").generate_score(lambda run, results: 1.0).shown_fields == frozenset()
    gold = [{"run_id": "1", "output": "same", "requestContext": {"tier": "gold"}}]
    free = [{"run_id": "1", "output": "same", "requestContext": {"tier": "free"}}]
    assert evaluate(gold, [scorer], store=ResultStore(tmp_path / "s")).dataset["tiered_score"] == [1.0]
    seen.clear()
    assert evaluate(gold, [scorer], store=ResultStore(tmp_path / "s")).summary["tiered"].resumed == 1
    assert seen == []  # unchanged: resumed, the step not run again
    again = evaluate(free, [scorer], store=ResultStore(tmp_path / "s"))
    assert again.summary["tiered"].resumed == 0 and again.dataset["tiered_score"] == [0.5]  # changed: judged again
