"""A user's `prepare_run` and `get_context` run once per row on the Ray path, as under `evaluate`
(issue 45: the actor sampled each pending row once for its key, then `score_runs` sampled it again).
The hooks run in the actors' processes, so each call is noted as a line in a file. And a results log
written before the one planner resumes on Ray with nothing judged again."""

from __future__ import annotations

import dataclasses
import functools
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from localjudge import evaluate, toxicity_scorer
from localjudge.cluster import ScorerSpec, evaluate_on_ray
from localjudge.evaluation import ResultStore, read_table, write_table
from localjudge.judge import Judge
from localjudge.scoring import Scorer
from tests.fakes import make_fake_judge

ROWS = [{"input": f"question {i}", "output": f"answer {i} " * (i + 1)} for i in range(5)]


def noting_scorers(record: Path, judge: Judge | None) -> list[Scorer]:
    """Toxicity with both hooks, each noting its call (hook name, run id) as one line of `record`."""

    def note(hook: str, run: Any) -> None:
        with record.open("a") as file:
            file.write(f"{hook} {run.get('run_id')}\n")

    def prepare_run(run: Any) -> Any:
        note("prepare_run", run)
        return run

    def get_context(run: Any) -> None:
        note("get_context", run)

    assert judge is not None
    return [dataclasses.replace(toxicity_scorer(judge), prepare_run=prepare_run, get_context=get_context)]


def calls(record: Path) -> Counter[str]:
    return Counter(record.read_text().splitlines())


def once_each() -> Counter[str]:
    return Counter(f"{hook} {i}" for i in range(len(ROWS)) for hook in ("prepare_run", "get_context"))


def test_hooks_run_once_per_row_on_the_ray_path(cluster: Any, tmp_path: Path) -> None:
    record = tmp_path / "calls.txt"
    result = evaluate_on_ray(ROWS, functools.partial(noting_scorers, record), make_fake_judge, judges=2,
                             batch_size=2, store=ResultStore(tmp_path / "log"))
    assert all(score is not None for score in result.dataset["toxicity_score"])
    assert calls(record) == once_each()
    record.unlink()  # run again: every row is done; each is read once more, for its key, and not judged
    again = evaluate_on_ray(ROWS, functools.partial(noting_scorers, record), make_fake_judge, judges=2,
                            batch_size=2, store=ResultStore(tmp_path / "log"))
    assert again.summary["toxicity"].resumed == len(ROWS)
    assert calls(record) == once_each()


def test_the_ray_path_and_evaluate_give_the_same_rows(cluster: Any, tmp_path: Path) -> None:
    local = evaluate(ROWS, noting_scorers(tmp_path / "local.txt", make_fake_judge()), batch_size=2)
    ray = evaluate_on_ray(ROWS, functools.partial(noting_scorers, tmp_path / "ray.txt"), make_fake_judge,
                          judges=2, batch_size=2)
    assert ray.dataset.to_list() == local.dataset.to_list()
    assert calls(tmp_path / "ray.txt") == calls(tmp_path / "local.txt") == once_each()


WRITTEN = Path(__file__).parents[1] / "unit" / "evaluation" / "data" / "resume_840b565"  # by evaluate at 840b565


def no_calls_judge() -> Judge:
    """The fake judge, failing any call: a row judged again would come back `judge_failed`."""
    judge = make_fake_judge()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a row was judged again")

    judge.generate = refuse  # type: ignore[method-assign]
    return judge


def test_a_log_written_before_the_planner_resumes_on_ray_with_nothing_judged(cluster: Any, tmp_path: Path) -> None:
    shutil.copytree(WRITTEN / "log", tmp_path / "log")
    result = evaluate_on_ray(read_table(WRITTEN / "rows.jsonl"), [ScorerSpec("hallucination"), ScorerSpec("toxicity")],
                             no_calls_judge, judges=2, batch_size=2, store=ResultStore(tmp_path / "log"))
    assert (result.summary["hallucination"].resumed, result.summary["toxicity"].resumed) == (4, 5)
    write_table(result.dataset, tmp_path / "scored.jsonl")
    assert (tmp_path / "scored.jsonl").read_bytes() == (WRITTEN / "scored.jsonl").read_bytes()
    assert (tmp_path / "log" / "rank-0.jsonl").read_bytes() == (WRITTEN / "log" / "rank-0.jsonl").read_bytes()
