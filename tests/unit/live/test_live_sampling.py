"""Live sampling as Mastra's (`runScorer` in @mastra/core 1.71.0, evals/hooks.ts): a ratio is
decided by `sha256(trace id, else run id)` mapped to [0, 1) (`hashToUnitInterval`), so every
scorer at one rate picks the same runs and a replay picks them again; a `filter` predicate is
asked first and fails closed; not-scorable results are counted apart from failures.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from localjudge import LiveScorer, create_scorer, not_scorable
from localjudge.live.sampling import Sampler, hash_to_unit_interval, sampling_key

# Mastra's own `hashToUnitInterval` (its source, run under the Node in tests/differential/node) on these keys.
MASTRA_HASHES = {"run-1": 0.30624127292746905, "trace-abc": 0.35016757427903755, "ünïcode": 0.721657359947919,
                 "4bf92f3577b34da6a3ce929d0e0e4736": 0.22477405853511812}


def test_the_hash_is_mastras() -> None:
    assert {key: hash_to_unit_interval(key) for key in MASTRA_HASHES} == MASTRA_HASHES


def test_a_ratio_samples_by_the_trace_id_else_the_run_id() -> None:
    sampler = Sampler({"type": "ratio", "rate": 0.3})
    assert sampling_key({"traceId": "trace-abc", "run_id": "run-1"}) == "trace-abc"
    assert sampler({"run_id": "run-1", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"})  # 0.22 < 0.3
    assert not sampler({"run_id": "run-1"})  # 0.306 >= 0.3
    assert not sampler({"runId": "trace-abc"}) and Sampler(0.31)({"runId": "run-1"})


def test_every_scorer_at_one_rate_picks_the_same_runs_every_time() -> None:
    runs = [{"run_id": f"call-{i}"} for i in range(500)]
    first, second = Sampler(0.2), Sampler({"type": "ratio", "rate": 0.2})
    picked = [first(run) for run in runs]
    assert picked == [second(run) for run in runs] == [first(run) for run in runs]
    assert 60 < sum(picked) < 140
    assert all(Sampler(0.5)(run) for run, chosen in zip(runs, picked, strict=True) if chosen)  # nested rates


def test_the_filter_comes_first_and_fails_closed(caplog: pytest.LogCaptureFixture) -> None:
    asked: list[str] = []

    def gold_only(run: Any) -> bool:
        asked.append(run["run_id"])
        return run["requestContext"]["tier"] == "gold"

    sampler = Sampler(None, filter=gold_only)
    assert sampler({"run_id": "a", "requestContext": {"tier": "gold"}})
    assert not sampler({"run_id": "b", "requestContext": {"tier": "free"}})
    with caplog.at_level(logging.WARNING):
        assert not sampler({"run_id": "c"})  # the filter raised: not scored, logged
    assert asked == ["a", "b", "c"] and "the filter raised on run c" in caplog.text
    with pytest.raises(TypeError, match="a live filter is a function"):
        Sampler(None, filter="tier == gold")  # type: ignore[arg-type]


def test_live_scorer_filters_samples_and_counts_not_scorable_apart(tmp_path: Path) -> None:
    scorer = (create_scorer("long")
              .preprocess(lambda run, results: not_scorable("short") if len(run.output) < 5 else {})
              .generate_score(lambda run, results: 1.0))
    broken = create_scorer("broken").generate_score(lambda run, results: 1 / 0)
    live = LiveScorer({"long": {"scorer": scorer, "filter": lambda run: run.get("tier") == "gold"},
                       "broken": {"scorer": broken, "sampling": {"type": "ratio", "rate": 0.31}}},
                      store=tmp_path / "live.jsonl", max_wait=0.0)
    live.submit({"run_id": "run-1", "tier": "gold", "input": "q", "output": "a long answer"})  # both (0.306)
    live.submit({"run_id": "trace-abc", "tier": "gold", "input": "q", "output": "no"})  # long only (0.35)
    live.submit({"run_id": "run-1", "tier": "free", "input": "q", "output": "fine answer"})  # broken only
    live.close(timeout=60)
    stats = live.stats
    assert (stats.calls, stats.sampled, stats.scored, stats.not_scorable, stats.unscored) == (3, 4, 1, 1, 2)
