"""Live scoring: sampled calls scored in the background, batched, stored, never in the app's way.

Under load (hundreds of calls from several threads) every sampled call is scored exactly once and
none is lost when the scorer closes; overflow is counted, never silent; the sampling rate is
honoured and decided by each run's id (Mastra's hash: test_live_sampling.py); a slow judge never
slows the wrapped function; the store is readable while the worker writes; an exiting
interpreter drains the queue first.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from localjudge import toxicity_scorer
from localjudge.live.worker import LiveScorer, Sampler, read_results
from tests.conftest import ROOT
from tests.fakes import make_fake_judge

CLEAN = {"verdicts": [{"verdict": "no", "severity": "none", "reason": "Polite."}]}


class SlowJudge:
    """The scripted toxicity judge, taking `delay` seconds a call; records batch sizes."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.inner = make_fake_judge(ToxicityVerdicts=CLEAN)  # and the default reason, "ok"
        self.identity, self.delay, self.fail = "slow-fake", delay, fail
        self.batches: list[int] = []
        self.lock = threading.Lock()

    def generate(self, prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("device lost")
        with self.lock:
            self.batches.append(len(prompts))
            return self.inner.generate(prompts, schemas, max_new_tokens=max_new_tokens)


def answer(question: str) -> str:
    return f"A polite answer to {question}"


def test_calls_from_many_threads_are_each_scored_once_and_none_is_lost(tmp_path: Path) -> None:
    judge = SlowJudge(delay=0.002)
    live = LiveScorer(toxicity_scorer(judge), store=tmp_path / "live.db", max_batch=16, max_wait=0.01,
                      queue_size=10_000)
    wrapped = live.wrap(answer)

    def client(k: int) -> None:
        for i in range(50):
            assert wrapped(f"question {k}-{i}") == f"A polite answer to question {k}-{i}"

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert live.close(timeout=60)
    rows = read_results(tmp_path / "live.db")
    assert len(rows) == 400 and len({r["run_id"] for r in rows}) == 400
    assert Counter(r["input"] for r in rows) == Counter({f"question {k}-{i}": 1 for k in range(8) for i in range(50)})
    assert all(r["score"] == 0.0 and r["error"] is None for r in rows)
    stats = live.stats
    assert (stats.calls, stats.sampled, stats.scored, stats.dropped, stats.queued) == (400, 400, 400, 0, 0)
    assert max(judge.batches) > 1 and max(judge.batches) <= 16  # batched: many runs per judge call


def test_overflow_is_counted_not_silent(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    live = LiveScorer(toxicity_scorer(SlowJudge(delay=0.05)), store=tmp_path / "live.jsonl", max_batch=2,
                      max_wait=0.0, queue_size=3)
    sent = [live.submit({"input": "q", "output": f"answer {i}"}) for i in range(40)]
    live.close(timeout=60)
    stats = live.stats
    stored = read_results(tmp_path / "live.jsonl")
    assert stats.dropped == sent.count(False) > 0 and stats.scored == sent.count(True) == len(stored)
    assert stats.sampled == stats.scored + stats.dropped
    assert "live scoring queue is full" in caplog.text


@pytest.mark.parametrize(("spec", "low", "high"), [({"type": "ratio", "rate": 0.25}, 0.22, 0.28),
                                                   (0.1, 0.08, 0.12), ({"type": "every", "n": 4}, 0.25, 0.25),
                                                   (None, 1.0, 1.0), ({"type": "ratio", "rate": 0}, 0.0, 0.0)])
def test_sampling_rate_is_honoured_and_the_same_runs_are_picked_again(spec: Any, low: float, high: float) -> None:
    runs = [{"run_id": f"run-{i}"} for i in range(4000)]
    sampler = Sampler(spec)
    picks = [sampler(run) for run in runs]
    assert low <= sum(picks) / len(picks) <= high
    again = Sampler(spec)
    assert [again(run) for run in runs] == picks  # the same runs, the same calls scored


@pytest.mark.parametrize("spec", [{"type": "ratio", "rate": 1.5}, {"type": "every", "n": 0}, {"type": "sometimes"}])
def test_bad_sampling_is_refused(spec: Any) -> None:
    with pytest.raises(ValueError, match="sampling"):
        Sampler(spec)


def test_each_scorer_samples_on_its_own_and_mastras_shape_is_accepted(tmp_path: Path) -> None:
    judge = SlowJudge()
    every_call = toxicity_scorer(judge)
    every_tenth = toxicity_scorer(judge, scale=10).__class__(**{**every_call.__dict__, "name": "tox10", "scale": 10})
    live = LiveScorer({"all": {"scorer": every_call}, "tenth": {"scorer": every_tenth, "sampling": {"type": "every",
                                                                                                      "n": 10}}},
                      store=tmp_path / "live.db")
    for i in range(30):
        live.submit({"input": "q", "output": f"a{i}"})
    live.close(timeout=30)
    by_scorer = Counter(r["scorer"] for r in read_results(tmp_path / "live.db"))
    assert by_scorer == {"toxicity": 30, "tox10": 3}


def test_a_slow_judge_never_delays_the_function(tmp_path: Path) -> None:
    live = LiveScorer(toxicity_scorer(SlowJudge(delay=0.2)), store=tmp_path / "live.db", max_batch=8)
    wrapped = live.wrap(answer)
    worst = 0.0
    for i in range(30):
        start = time.perf_counter()
        wrapped(f"q{i}")
        worst = max(worst, time.perf_counter() - start)
    assert worst < 0.15  # each call is the function plus microseconds; the judge takes 0.2 s a call
    assert live.close(timeout=60) and live.stats.scored == 30


def test_async_functions_and_their_errors(tmp_path: Path) -> None:
    live = LiveScorer(toxicity_scorer(SlowJudge()), store=tmp_path / "live.db")

    @live.wrap
    async def agent(question: str) -> str:
        if question == "boom":
            raise KeyError("the app's own error")
        return f"Answer to {question}"

    assert asyncio.run(agent("hi")) == "Answer to hi"
    with pytest.raises(KeyError, match="the app's own error"):
        asyncio.run(agent("boom"))
    live.close(timeout=30)
    (row,) = read_results(tmp_path / "live.db")
    assert (row["input"], row["output"], row["score"]) == ("hi", "Answer to hi", 0.0)


def test_judge_failures_are_recorded_per_run_and_the_worker_goes_on(tmp_path: Path) -> None:
    judge = SlowJudge(fail=True)
    live = LiveScorer(toxicity_scorer(judge), store=tmp_path / "live.db", max_wait=0.0)
    live.submit({"input": "q", "output": "first"})
    live.flush(timeout=30)
    judge.fail = False
    live.submit({"input": "q", "output": "second"})
    live.close(timeout=30)
    rows = read_results(tmp_path / "live.db")
    assert [(r["output"], r["error_kind"]) for r in rows] == [("first", "judge_failed"), ("second", None)]
    assert "device lost" in rows[0]["error"]


def test_callback_sees_every_result_and_its_errors_cost_nothing(tmp_path: Path) -> None:
    seen: list[str] = []

    def callback(run: Any, result: Any) -> None:
        seen.append(result.run_id)
        if len(seen) == 1:
            raise ValueError("a broken dashboard")

    live = LiveScorer(toxicity_scorer(SlowJudge()), store=None, on_result=callback, max_batch=1)
    for i in range(3):
        live.submit({"input": "q", "output": f"a{i}", "run_id": f"r{i}"})
    live.close(timeout=30)
    assert sorted(seen) == ["r0", "r1", "r2"] and live.stats.failed_writes == 1


def test_the_store_is_readable_while_the_worker_writes(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    live = LiveScorer(toxicity_scorer(SlowJudge(delay=0.01)), store=path, max_batch=2, max_wait=0.0)
    for i in range(20):
        live.submit({"input": "q", "output": f"a{i}"})
    counts = []
    while live.stats.queued:
        if path.exists():
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as reader:
                try:
                    counts.append(reader.execute("SELECT COUNT(*) FROM results").fetchone()[0])
                except sqlite3.OperationalError:  # the table is not made yet
                    pass
        time.sleep(0.005)
    live.close(timeout=30)
    assert counts == sorted(counts) and len(read_results(path)) == 20


def test_an_exiting_interpreter_drains_the_queue(tmp_path: Path) -> None:
    script = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from tests.unit.live.test_live_scorer import SlowJudge
from localjudge import toxicity_scorer
from localjudge.live.worker import LiveScorer
live = LiveScorer(toxicity_scorer(SlowJudge(delay=0.05)), store={str(tmp_path / 'live.db')!r}, max_batch=2)
for i in range(10):
    live.submit({{"input": "q", "output": f"a{{i}}"}})
print("exiting with", live.stats.queued, "queued")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[2]) > 0  # runs were still waiting when the script ended
    assert len(read_results(tmp_path / "live.db")) == 10
