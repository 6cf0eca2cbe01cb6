"""The Ray path's plan, without Ray (tests/ray runs it on a cluster): batches, an actor's work on one,
the driver's collector, and the whole round trip in this process giving `evaluate`'s rows."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from localjudge.cluster import Collector, JudgeSpec, ScorerSpec, plan_batches, score_batch, scorer_factory
from localjudge.cluster.plan import pack, score_packed
from localjudge.engines import ModelPathError
from localjudge.evaluation import ResultStore, evaluate, read_rows, read_table, rows_to_runs, with_results
from localjudge.evaluation.dataset_runs import Columns
from localjudge.result import ScoreResult
from tests.conftest import EXAMPLES
from tests.fakes import FakeJudgeFactory

SPECS = [ScorerSpec("hallucination"), ScorerSpec("toxicity", scale=10)]


def runs_of(n: int) -> list[dict]:
    return [{"run_id": str(i), "input": "q", "output": "x" * (i % 5 + 1), "context": "c"} for i in range(n)]


def test_batches_cover_each_row_once_longest_first_within_a_window() -> None:
    runs = runs_of(11)
    batches = plan_batches(runs, 3)
    assert sorted(i for b in batches for i in b) == list(range(11))
    assert [len(b) for b in batches] == [3, 3, 3, 2]
    sizes = [len(runs[i]["output"]) for b in batches for i in b]
    assert sizes == sorted(sizes, reverse=True)  # one window: 11 rows < 3 x 16
    assert plan_batches(runs, 2, indices=[4, 1]) == [[4, 1]]
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        plan_batches(runs, 0)


def test_a_batch_makes_one_judge_call_per_step_and_gives_evaluate_s_keys(fake_judge: FakeJudgeFactory,
                                                                          tmp_path: Path) -> None:
    runs = runs_of(4)
    judge = fake_judge()
    scorers = scorer_factory(SPECS)(judge)
    outcomes = score_batch(scorers, runs, done=frozenset())
    # each scorer's two judge steps (terse outputs are one claim: no claims call), each over the whole
    # batch, the scorers' steps merged in one call per round (issue 47)
    assert [len(call.schema_names) for call in judge.calls] == [8, 8]
    store = ResultStore(tmp_path / "log")
    evaluate(runs, scorer_factory(SPECS)(fake_judge()), batch_size=4, store=store)
    keys = {key for outcome in outcomes for key, _ in outcome.values()}
    assert keys == set(store.load())


def test_done_keys_are_skipped_without_a_judge_call(fake_judge: FakeJudgeFactory) -> None:
    runs = runs_of(3)
    first = score_batch(scorer_factory(SPECS)(fake_judge()), runs, done=frozenset())
    done = frozenset(key for outcome in first for key, _ in outcome.values())
    judge = fake_judge()
    again = score_batch(scorer_factory(SPECS)(judge), runs, done=done)
    assert judge.calls == []
    assert all(result is None for outcome in again for _, result in outcome.values())


def test_an_unreadable_row_is_recorded_with_no_key(fake_judge: FakeJudgeFactory) -> None:
    runs = [*runs_of(1), {"run_id": "bad", "input": "q", "output": None}]
    outcomes = score_batch(scorer_factory([ScorerSpec("toxicity")])(fake_judge()), runs, done=frozenset())
    key, result = outcomes[1]["toxicity"]
    assert key is None and result is not None and result["error_kind"] == "invalid_run"
    assert outcomes[0]["toxicity"][0] is not None


def test_an_exception_in_a_scorer_s_batch_comes_back_as_each_row_s_error(fake_judge: FakeJudgeFactory,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Raised out of an actor, Ray Data would drop the batch as a dead actor's, losing the error."""
    from localjudge.evaluation import planner  # the actor reads through the planner's one entry

    def breaks_on_toxicity(scorer: Any, *args: Any, **kwargs: Any) -> Any:
        if scorer.name == "toxicity":
            raise RuntimeError("the engine broke\n  on two lines")
        return read_rows(scorer, *args, **kwargs)

    monkeypatch.setattr(planner, "read_rows", breaks_on_toxicity)
    runs = runs_of(3)
    names = [s.name for s in SPECS]
    collector = Collector(names, [r["run_id"] for r in runs], None, {})
    collector.add(pickle.loads(score_packed(scorer_factory(SPECS)(fake_judge()), pack([0, 1, 2], runs), frozenset())))
    assert collector.missing(range(3)) == []
    toxicity = collector.in_order(range(3))["toxicity"]
    assert [r.run_id for r in toxicity] == ["0", "1", "2"]
    assert {(r.score, r.error_kind, r.error) for r in toxicity} == {
        (None, "judge_failed", "judge failed: RuntimeError: the engine broke on two lines")}
    assert all(r.scored for r in collector.in_order(range(3))["hallucination"])  # the other scorer's results stand


def result(run_id: str, kind: str | None = None) -> ScoreResult:
    return ScoreResult.unscored(run_id, "toxicity", kind, "why") if kind else ScoreResult(run_id, "toxicity", 0.5, "r")


def test_the_collector_stores_fresh_results_once_and_never_transient_ones(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "log")
    done = {"k0": result("0").to_dict()}
    collector = Collector(["toxicity"], ["0", "1", "2", "3"], store, done)
    collector.add([(0, {"toxicity": ("k0", None)}), (1, {"toxicity": ("k1", result("1").to_dict())}),
                   (2, {"toxicity": ("k2", result("2", "judge_failed").to_dict())})])
    collector.add([(1, {"toxicity": ("k1", result("1").to_dict())})])  # a retried batch answering twice
    assert set(store.load()) == {"k1"}
    assert (tmp_path / "log" / "rank-0.jsonl").read_text().count("\n") == 1
    assert collector.missing(range(4)) == [3]
    collector.lose([3], "died")
    assert collector.missing(range(4)) == []
    lost = collector.in_order([3])["toxicity"][0]
    assert lost.error_kind == "judge_failed" and lost.error == "judge failed: died" and lost.run_id == "3"
    summary = collector.summary(range(4), 2.0)["toxicity"]
    assert (summary.scored, summary.unscored, summary.resumed, summary.seconds) == (2, 2, 1, 2.0)


def test_the_round_trip_in_this_process_gives_evaluate_s_rows(fake_judge: FakeJudgeFactory, tmp_path: Path) -> None:
    """What the actors and the driver do, without Ray: pack, score, collect, attach; then resume."""
    dataset = read_table(EXAMPLES / "example.jsonl")
    runs = rows_to_runs(dataset, Columns())
    expected = evaluate(dataset, scorer_factory(SPECS)(fake_judge()), batch_size=3).dataset
    for attempt in range(2):  # the second resumes every row from the store
        store = ResultStore(tmp_path / "log")
        done = store.load()
        collector = Collector([s.name for s in SPECS], [r["run_id"] for r in runs], store, done)
        judge = fake_judge()
        scorers = scorer_factory(SPECS)(judge)
        for batch in plan_batches(runs, 3):
            collector.add(pickle.loads(score_packed(scorers, pack(batch, runs), frozenset(done))))
        got = with_results(dataset, collector.in_order(range(len(runs))))
        assert got.to_list() == expected.to_list()
        assert (judge.calls == []) == (attempt == 1)


def test_a_bad_model_path_fails_in_the_check(tmp_path: Path) -> None:
    with pytest.raises(ModelPathError, match="does not exist"):
        JudgeSpec(str(tmp_path / "nope")).check()
    with pytest.raises(ValueError, match="needs base_url"):
        JudgeSpec(None, "server").check()
    with pytest.raises(ValueError, match="base_url is an option of the server engine"):
        JudgeSpec(str(tmp_path), "transformers", {"base_url": "http://x"}).check()
