"""`run_evals(mastra_store=MastraScores(URL))`: each scored result saved as Mastra's `runEvals` saves it
(@mastra/core 1.71.0 `saveScoresToStorage`/`saveSingleScore`: `source` TEST, the scorer's id, the
target as entity; AGENT/TRAJECTORY/WORKFLOW/STEP rows), through the live sink's writer, on the
small SQLite store the mastra_store tests build. Mastra's own API reading them back is the storage
tier's (tests/storage/test_mastra_storage.py)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from localjudge import create_scorer, not_scorable, run_evals
from localjudge.evaluation import ItemResult
from localjudge.live import LiveStoreError, MastraScores
from localjudge.mastra_store import open_store
from localjudge.scorers import code_trajectory_accuracy_scorer
from tests.unit.evaluation.test_run_evals_configs import POLITE, SEEN, agent_reply, workflow
from tests.unit.mastra_store.test_mastra_store import make_store

PICKY = (create_scorer("picky").preprocess(lambda run, results: not_scorable("short") if len(run.output) < 6 else {})
         .generate_score(lambda run, results: 1.0))
BROKEN = create_scorer("broken").generate_score(lambda run, results: 1 / (len(run.output) - 5))


class Agent:
    """A target as Mastra's: an id, a name, a `generate`."""

    id = "support-agent"
    name = "Support"

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, question: str) -> str:
        self.calls += 1
        if question == "crash":
            raise RuntimeError("target down")
        return f"please, {question}" if question != "hi" else "hello"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return make_store(tmp_path / "mastra.db")


def eval_rows(url: str) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        found = store.fetch('SELECT * FROM "mastra_scorers" WHERE "id" LIKE ? ORDER BY "id"', ("localjudge:test:%",),
                            frozenset({"metadata", "scorer", "entity", "input", "output", "additionalContext"}))
    finally:
        store.close()
    return found


def test_each_scored_result_is_a_mastra_run_evals_row_written_after_its_batch(url: str) -> None:
    items = [{"input": "rain", "ground_truth": "umbrella"}, {"input": "hi"}, {"input": "crash"}, {"input": "sun"}]
    written: list[int] = []

    def item_done(item: ItemResult) -> None:
        written.append(len(eval_rows(url)))

    result = run_evals(items, [POLITE, PICKY, BROKEN], Agent(), mastra_store=MastraScores(url), batch_size=2,
                       on_item_complete=item_done)
    rows = eval_rows(url)
    # scored: rain x3, sun x3 (picky and broken score both); hi: polite only (picky not scorable, broken
    # divides by zero: failed); crash: the target failed, nothing scored. Only scores are saved, as Mastra's.
    assert sorted((r["input"], r["scorerId"]) for r in rows) == sorted(
        [("rain", "polite-scorer"), ("rain", "picky-scorer"), ("rain", "broken-scorer"), ("hi", "polite-scorer"),
         ("sun", "polite-scorer"), ("sun", "picky-scorer"), ("sun", "broken-scorer")])
    assert written == [4, 4, 7, 7]  # each batch is in the store before its items complete
    rain = next(r for r in rows if (r["input"], r["scorerId"]) == ("rain", "polite-scorer"))
    assert (rain["source"], rain["entityType"], rain["entityId"], rain["entity"]) == \
        ("TEST", "AGENT", "support-agent", {"id": "support-agent", "name": "Support"})
    assert (rain["score"], rain["output"], rain["additionalContext"]) == \
        (result.items[0].scorer_results["polite-scorer"].score, "please, rain", {"groundTruth": "umbrella"})
    assert rain["traceId"] is None and rain["metadata"]["localjudge"]["resultKey"]
    assert len({r["runId"] for r in rows}) == len(rows) and all(uuid.UUID(r["runId"]) for r in rows)
    assert all(r["id"].startswith(f"localjudge:test:{r['runId']}:") for r in rows)
    run_evals(items[:1], [POLITE], Agent(), mastra_store=MastraScores(url))
    assert len(eval_rows(url)) == 8  # another call writes its own rows, as Mastra writes a row per scorer run


def test_config_groups_are_agent_trajectory_workflow_and_step_rows(url: str) -> None:
    trajectory = code_trajectory_accuracy_scorer()
    run_evals([{"input": "rain", "expectedTrajectory": {"steps": ["weather"]}}],
              {"agent": [POLITE], "trajectory": [trajectory]}, agent_reply, mastra_store=MastraScores(url),
              target_id="weather-agent")
    config = {"workflow": [POLITE], "steps": {"fetch": [SEEN], "polish": [SEEN]}}
    run_evals([{"input": "go"}, {"input": "fail"}], config, workflow, target_type="workflow",
              mastra_store=MastraScores(url), target_id="checkout")
    rows = eval_rows(url)
    # "fail": the workflow failed (no result) and its polish step failed: not scored, not saved
    assert sorted((r["entityType"], r["entityId"], r["scorerId"], r["input"], r["output"]) for r in rows) == [
        ("AGENT", "weather-agent", "polite-scorer", "rain", agent_reply("rain")),
        ("STEP", "fetch", "seen-scorer", "q=fail", "fetched"), ("STEP", "fetch", "seen-scorer", "q=go", "fetched"),
        ("STEP", "polish", "seen-scorer", "x", "polished"),
        ("TRAJECTORY", "weather-agent", "code-trajectory-accuracy-scorer", "rain", agent_reply("rain")),
        ("WORKFLOW", "checkout", "polite-scorer", "go", "done go")]
    assert {(r["entityType"], r["entity"]["id"]) for r in rows} == {
        ("AGENT", "weather-agent"), ("TRAJECTORY", "weather-agent"), ("STEP", "checkout"), ("WORKFLOW", "checkout")}


def test_turn_scorers_are_rows_with_their_turn_index_and_gates_none(url: str) -> None:
    items = [{"turns": [{"input": "rain", "scorers": [POLITE]}, {"input": "sun", "gates": [SEEN]}]}]
    run_evals(items, [], Agent(), gates=[PICKY], mastra_store=MastraScores(url))
    [row] = eval_rows(url)
    assert (row["scorerId"], row["input"], row["output"], row["metadata"]["turnIndex"], row["entityType"]) == \
        ("polite-scorer", "rain", "please, rain", 0, "AGENT")


@pytest.mark.parametrize("make, message", [
    (lambda path: MastraScores(f"file:{path}"), "no Mastra store at"),  # refused when made: before run_evals
    (lambda path: make_store(path), "mastra_store takes localjudge.live.MastraScores"),  # a URL, not a sink
])
def test_a_store_that_cannot_be_written_is_refused_before_any_target_runs(tmp_path: Path, make: Any,
                                                                          message: str) -> None:
    agent = Agent()
    with pytest.raises((LiveStoreError, ValueError), match=message) as error:
        run_evals([{"input": "rain"}], [POLITE], agent, mastra_store=make(tmp_path / "mastra.db"))
    assert agent.calls == 0 and "\n" not in str(error.value)
