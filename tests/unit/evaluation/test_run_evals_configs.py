"""`run_evals` with Mastra's scorer configs (@mastra/core 1.71.0, evals/run/index.ts `runScorers`):
``{"agent", "trajectory"}`` over an agent's messages, ``{"workflow", "steps"}`` over Mastra's
workflow result (``target_type="workflow"``); results, means and summaries nested as Mastra's;
bad configs refused before any target runs. Function and code scorers: no judge.
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import create_scorer, run_evals
from localjudge.evaluation import ItemResult
from localjudge.scorers import code_trajectory_accuracy_scorer

POLITE = create_scorer("polite").generate_score(lambda run, results: float("please" in run.output))
LENGTH = create_scorer("length", score_returns="score").generate_score(lambda run, results: float(len(run.output)))
SEEN = create_scorer("seen", score_returns="score").generate_score(
    lambda run, results: float(len(run.input) * 10 + len(run.output)))


def agent_reply(question: str) -> list[dict[str, Any]]:
    """Mastra's agent messages: a weather call (its args), then a polite answer for "rain"."""
    call = {"toolCallId": "c1", "toolName": "weather", "state": "result", "args": {"city": question},
            "result": {"sky": "grey"}}
    return [{"role": "assistant", "content": {"format": 2, "parts": [{"type": "tool-invocation",
                                                                     "toolInvocation": call}]}},
            {"role": "assistant", "content": f"{'please take an umbrella' if question == 'rain' else 'sunny'}"}]


def test_an_agent_config_nests_agent_and_trajectory_scores_as_mastra() -> None:
    trajectory = code_trajectory_accuracy_scorer()
    items = [{"input": "rain", "expectedTrajectory": {"steps": ["weather"]}},
             {"input": "sun", "expectedTrajectory": {"steps": ["weather", "forecast"]}}]
    seen: list[ItemResult] = []
    result = run_evals(items, {"agent": [POLITE], "trajectory": [trajectory]}, agent_reply,
                       on_item_complete=seen.append)
    # The trajectory scorer reads the tool calls in the messages and the item's expected steps.
    assert result.scores == {"agent": {"polite-scorer": 0.5}, "trajectory": {"code-trajectory-accuracy-scorer": 0.75}}
    assert [sorted(it.scorer_results) for it in seen] == [["agent", "trajectory"]] * 2
    assert seen[1].scorer_results["trajectory"]["code-trajectory-accuracy-scorer"].score == 0.5
    assert seen[0].scorer_results["agent"]["polite-scorer"].score == 1.0
    assert result.scorer_summaries["agent"]["polite-scorer"].scored == 2
    assert result.verdict is None and result.threshold_results is None  # configs take no thresholds


def workflow(question: str) -> dict[str, Any]:
    """Mastra's workflow result: `fetch` and `answer` ran; `polish` failed on "fail"."""
    failed = question == "fail"
    return {"status": "failed" if failed else "success", **({} if failed else {"result": f"done {question}"}),
            "steps": {"fetch": {"status": "success", "payload": f"q={question}", "output": "fetched"},
                      "answer": {"status": "success", "output": "ok please"},
                      "polish": {"status": "failed", "payload": "x", "error": "boom"} if failed
                      else {"status": "success", "payload": "x", "output": "polished"}}}


def test_a_workflow_config_judges_the_result_and_each_named_step() -> None:
    config = {"workflow": [LENGTH], "steps": {"fetch": [SEEN], "answer": [POLITE, LENGTH], "polish": [LENGTH]}}
    result = run_evals([{"input": "go"}, {"input": "fail"}], config, workflow, target_type="workflow")
    assert result.scores == {
        "workflow": {"length-scorer": 7.0},  # "done go"; the failed workflow has no result
        "steps": {"fetch": {"seen-scorer": 57.0},  # the payload as input: (4 x 10 + 7 + 6 x 10 + 7) / 2
                  "answer": {"polite-scorer": 1.0, "length-scorer": 9.0},  # no payload: the item's input
                  "polish": {"length-scorer": 8.0}}}  # only where the step succeeded
    failed = result.items[1]
    assert failed.target_error is None and failed.target_result["status"] == "failed"  # the whole result
    assert failed.scorer_results["workflow"]["length-scorer"].error_kind == "target_failed"
    polish = failed.scorer_results["steps"]["polish"]["length-scorer"]
    assert polish.not_scorable and "'polish' ended 'failed'" in (polish.error or "")
    assert result.summary.not_scorable == {"length-scorer": 1}  # by scorer id, as Mastra's summary
    assert result.items[0].scorer_results["steps"]["fetch"]["seen-scorer"].run_id == "0/step-fetch"


def test_a_step_the_workflow_did_not_run_is_not_scorable_and_gates_judge_the_result() -> None:
    result = run_evals([{"input": "go"}], {"steps": {"missing": [POLITE]}}, workflow, target_type="workflow",
                       gates=[create_scorer("done").generate_score(lambda run, results: float("done" in run.output))])
    missing = result.items[0].scorer_results["steps"]["missing"]["polite-scorer"]
    assert missing.not_scorable and "no step 'missing'" in (missing.error or "")
    assert result.scores == {"steps": {"missing": {"polite-scorer": None}}}
    assert result.verdict == "passed"  # the gate read the workflow's result, "done go"


def test_a_workflow_target_that_returns_no_workflow_result_fails_its_item() -> None:
    result = run_evals([{"input": "go"}], {"workflow": [POLITE]}, lambda q: "text", target_type="workflow")
    assert "must return Mastra's workflow result" in (result.items[0].target_error or "")
    assert result.items[0].scorer_results["workflow"]["polite-scorer"].error_kind == "target_failed"


@pytest.mark.parametrize(("scorers", "target_type", "items", "message"), [
    ({"agent": [POLITE], "judge": [POLITE]}, "agent", [{"input": "a"}], "takes 'agent', 'trajectory', not 'judge'"),
    ({"workflow": [POLITE]}, "agent", [{"input": "a"}], "pass target_type='workflow'"),
    ({"agent": [POLITE]}, "workflow", [{"input": "a"}], "pass target_type='agent'"),
    ({"steps": [POLITE]}, "workflow", [{"input": "a"}], "scorers['steps'] must map step ids to lists"),
    ({"steps": {"s": POLITE}}, "workflow", [{"input": "a"}], "scorers['steps']['s'] must be a list of scorers"),
    ({"agent": [{"scorer": POLITE, "threshold": 0.5}]}, "agent", [{"input": "a"}], "a threshold is not taken"),
    ({"agent": [], "trajectory": []}, "agent", [{"input": "a"}], "give at least one agent or trajectory scorer"),
    ({"trajectory": [POLITE]}, "workflow", [{"input": "a"}], "a workflow's trajectory"),
    ({"workflow": [POLITE]}, "workflow", [{"inputs": ["a", "b"]}], "'inputs' is not supported for workflow"),
    ([POLITE], "crew", [{"input": "a"}], "target_type must be one of agent, workflow"),
])
def test_bad_configs_are_refused_before_any_target_runs(scorers: Any, target_type: Any, items: Any,
                                                        message: str) -> None:
    ran: list[str] = []
    with pytest.raises(ValueError, match="^[^\n]*$") as raised:
        run_evals(items, scorers, ran.append, target_type=target_type)
    assert message in str(raised.value) and ran == []
