"""Faults on the Ray path, on the scripted fake judge (cheap actors): an actor killed mid-run, a row
that kills its actor every time, an exception raised in an actor, a run interrupted and run again. Two
actors, one row a batch or two."""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from localjudge.cluster import ClusterError, ScorerSpec, evaluate_on_ray, scorer_factory
from localjudge.evaluation import ResultStore, evaluate, read_table, write_table
from localjudge.judge import Judge
from localjudge.scoring import Scorer
from tests.conftest import EXAMPLES
from tests.fakes import make_fake_judge

SPECS = [ScorerSpec("toxicity")]


def crashing_judge(marker: Path, *, always: bool) -> Judge:
    """The fake judge, in an actor process that exits (as if killed) when a prompt holds "CRASH":
    once (a marker file says it happened), or every time."""
    judge = make_fake_judge()
    generate = judge.generate

    def crash_or_generate(prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        if any("CRASH" in json.dumps(list(p)) for p in prompts) and (always or not marker.exists()):
            marker.touch()
            os._exit(1)
        return generate(prompts, schemas, max_new_tokens=max_new_tokens)

    judge.generate = crash_or_generate  # type: ignore[method-assign]
    return judge


def rows(crash_at: int | None = None) -> list[dict[str, Any]]:
    data = [dict(r) for r in read_table(EXAMPLES / "example.jsonl")][:6]
    if crash_at is not None:
        data[crash_at]["output"] = "CRASH " + data[crash_at]["output"]
    return data


def log_lines(folder: Path) -> list[str]:
    return [json.loads(line)["key"] for line in (folder / "rank-0.jsonl").read_text().splitlines()]


def test_an_actor_killed_mid_run_has_its_batch_retried(cluster: Any, tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    data = rows(crash_at=2)
    store = ResultStore(tmp_path / "log")
    with caplog.at_level(logging.WARNING, logger="localjudge.cluster.runner"):
        result = evaluate_on_ray(data, SPECS, functools.partial(crashing_judge, tmp_path / "crashed", always=False),
                                 judges=2, batch_size=2, store=store)
    assert (tmp_path / "crashed").exists()  # an actor did die
    assert "one at a time" not in caplog.text  # Ray's retry took the batch, not the driver's fallback
    ids = [row["run_id"] for row in result.dataset]
    assert ids == [row["run_id"] for row in data]  # every row, once, in order
    assert all(score is not None for score in result.dataset["toxicity_score"])
    keys = log_lines(tmp_path / "log")
    assert len(keys) == len(set(keys)) == len(data)


def test_a_row_that_kills_its_actor_every_time_ends_unscored(cluster: Any, tmp_path: Path) -> None:
    data = rows(crash_at=1)
    store = ResultStore(tmp_path / "log")
    result = evaluate_on_ray(data, SPECS, functools.partial(crashing_judge, tmp_path / "crashed", always=True),
                             judges=2, batch_size=2, store=store, max_retries=1)
    by_id = {row["run_id"]: row for row in result.dataset}
    assert list(by_id) == [row["run_id"] for row in data]
    poisoned = by_id[data[1]["run_id"]]
    assert poisoned["toxicity_score"] is None and poisoned["toxicity_error_kind"] == "judge_failed"
    assert "died on each of 2 tries" in poisoned["toxicity_error"]
    assert all(row["toxicity_score"] is not None for run_id, row in by_id.items() if run_id != data[1]["run_id"])
    assert len(log_lines(tmp_path / "log")) == len(data) - 1  # the lost row is tried again next run


class KeylessScorer(Scorer):
    """A scorer whose identity raises: an ordinary exception out of the actor's scoring of a batch."""

    @property
    def key(self) -> str:
        raise RuntimeError("no key for this scorer\n(a second line)")


def keyless_scorers(judge: Judge | None) -> list[Scorer]:
    return [KeylessScorer(**{f.name: getattr(s, f.name) for f in dataclasses.fields(s)})
            for s in scorer_factory(SPECS)(judge)]


def test_an_exception_in_an_actor_ends_each_row_unscored_with_its_message(cluster: Any) -> None:
    result = evaluate_on_ray(rows()[:3], keyless_scorers, make_fake_judge, judges=2, batch_size=2)
    assert result.dataset["toxicity_error_kind"] == ["judge_failed"] * 3
    assert set(result.dataset["toxicity_error"]) == {
        "judge failed: RuntimeError: no key for this scorer (a second line)"}  # not "died on each of 3 tries"


class Interrupted(KeyboardInterrupt):
    pass


def test_an_interrupted_run_run_again_writes_the_uninterrupted_file(cluster: Any, tmp_path: Path) -> None:
    data = rows()
    specs = [ScorerSpec("toxicity"), ScorerSpec("hallucination")]
    expected = evaluate(data, [s for s in _built(specs)], batch_size=2).dataset
    write_table(expected, tmp_path / "expected.jsonl")

    def stop_after_first_batch(scorer: str, done: int) -> None:
        if done:
            raise Interrupted

    with pytest.raises(Interrupted):
        evaluate_on_ray(data, specs, make_fake_judge, judges=1, batch_size=2, store=ResultStore(tmp_path / "log"),
                        progress=stop_after_first_batch)
    assert 0 < len(log_lines(tmp_path / "log")) < 2 * len(data)
    result = evaluate_on_ray(data, specs, make_fake_judge, judges=1, batch_size=2, store=ResultStore(tmp_path / "log"))
    write_table(result.dataset, tmp_path / "resumed.jsonl")
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "expected.jsonl").read_bytes()
    keys = log_lines(tmp_path / "log")
    assert len(keys) == len(set(keys)) == 2 * len(data)  # each row once per scorer
    assert result.summary["toxicity"].resumed > 0


def _built(specs: list[ScorerSpec]) -> list[Any]:
    return list(scorer_factory(specs)(make_fake_judge()))


def offline_judge(record: Path) -> Judge:
    """The fake judge, noting the hub switches of the actor loading it."""
    names = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "RAY_USAGE_STATS_ENABLED")
    record.write_text(json.dumps({name: os.environ.get(name) for name in names}))
    return make_fake_judge()


def test_actors_run_offline(cluster: Any, tmp_path: Path) -> None:
    evaluate_on_ray(rows()[:1], SPECS, functools.partial(offline_judge, tmp_path / "env.json"), batch_size=1)
    assert json.loads((tmp_path / "env.json").read_text()) == {
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}


def unloadable_judge() -> Judge:
    raise ValueError("model path '/elsewhere/model' does not exist.")


def test_an_actor_that_cannot_load_its_judge_fails_the_run_in_one_line(cluster: Any) -> None:
    with pytest.raises(ClusterError) as caught:
        evaluate_on_ray(rows()[:2], SPECS, unloadable_judge, batch_size=1)
    message = str(caught.value)
    assert message.startswith("the Ray run failed: ValueError: model path '/elsewhere/model' does not exist.")
    assert "\n" not in message
