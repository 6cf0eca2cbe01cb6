"""Live scores into a Mastra store (`LiveScorer(store=URL)`, `MastraScores`): each scored result one
Mastra live score row, written by the `--mastra-store` writer, on the small SQLite store the
mastra_store tests build. Mastra's own API reading them back is the storage tier's
(tests/storage/test_mastra_storage.py)."""

from __future__ import annotations

import datetime
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from localjudge import LiveScorer, create_scorer, not_scorable, toxicity_scorer
from localjudge.live import LiveStoreError, MastraScores
from localjudge.result import ScoreResult
from tests.fakes import make_fake_judge
from tests.unit.mastra_store.test_mastra_store import make_store, score_rows

CLEAN = {"verdicts": [{"verdict": "no", "severity": "none", "reason": "Polite."}]}


@pytest.fixture
def url(tmp_path: Path) -> str:
    return make_store(tmp_path / "mastra.db")


def live_rows(url: str) -> list[dict[str, Any]]:
    return [r for r in score_rows(url) if r["id"].startswith("localjudge:live:")]


def test_live_results_are_mastra_live_rows(url: str) -> None:
    seen: list[ScoreResult] = []
    code = create_scorer("short").generate_score(lambda run, results: float(len(run.output) < 20))
    live = LiveScorer([toxicity_scorer(make_fake_judge(ToxicityVerdicts=CLEAN)), code], store=url,
                      on_result=lambda run, result: seen.append(result))
    live.submit({"run_id": "call-1", "input": "Hi?", "output": "Hello there.", "trace_id": "tr1", "span_id": "sp1",
                 "entity_id": "support-agent", "entity_name": "Support", "thread_id": "th1", "resource_id": "u1"})
    live.submit({"runId": "call-2", "input": "Bye?", "output": "Goodbye.", "traceId": "tr2", "spanId": "sp2",
                 "entityType": "workflow", "entityId": "checkout"})  # Mastra's camelCase keys
    live.submit({"run_id": "call-3", "input": "Weather?", "output": "Rain.",  # a run read from a Mastra store
                 "mastra": {"traceId": "t1", "spanId": "a1", "entityId": "weather", "experimentId": None}})
    assert live.close(timeout=60)
    assert live.stats.scored == 6 and live.stats.failed_writes == 0
    rows = {(r["runId"], r["scorerId"]): r for r in live_rows(url)}
    assert {(r.run_id, f"localjudge:{r.scorer}") for r in seen} == set(rows)  # one row per (call, scorer)
    for result in seen:
        row = rows[result.run_id, f"localjudge:{result.scorer}"]
        assert (row["score"], row["reason"], row["source"]) == (result.score, result.reason, "LIVE")
        assert row["id"].startswith(f"localjudge:live:{result.run_id}:")
    first, second, third = (rows[run, "localjudge:toxicity"] for run in ("call-1", "call-2", "call-3"))
    assert (first["traceId"], first["spanId"], first["entityType"], first["entityId"], first["entity"],
            first["threadId"], first["resourceId"]) == ("tr1", "sp1", "AGENT", "support-agent",
                                                        {"id": "support-agent", "name": "Support"}, "th1", "u1")
    assert (second["traceId"], second["spanId"], second["entityType"], second["entityId"]) == \
        ("tr2", "sp2", "WORKFLOW", "checkout")
    assert (third["traceId"], third["spanId"], third["entityId"]) == ("t1", "a1", "weather")
    assert first["metadata"]["localjudge"]["judge"] == "fake-judge" and first["output"] == "Hello there."


def test_each_call_is_a_row_of_its_own_written_once(url: str) -> None:
    """Two calls with the same texts are two rows (Mastra writes one per live call); the same call
    written again is not a second."""
    for _ in range(2):
        with LiveScorer(toxicity_scorer(make_fake_judge(ToxicityVerdicts=CLEAN)), store=url) as live:
            for run_id in ("call-1", "call-2"):
                live.submit({"run_id": run_id, "input": "Hi?", "output": "Hello."})
    assert sorted(r["runId"] for r in live_rows(url)) == ["call-1", "call-2"]


def test_results_without_a_score_are_not_written(url: str) -> None:
    seen: list[ScoreResult] = []
    picky = (create_scorer("picky").preprocess(lambda run, results: not_scorable("too short"))
             .generate_score(lambda run, results: 1.0))
    broken = create_scorer("broken").generate_score(lambda run, results: 1 / 0)
    with LiveScorer([picky, broken], store=url, on_result=lambda run, result: seen.append(result)) as live:
        live.submit({"run_id": "call-1", "input": "Hi?", "output": "Hello."})
    stats = live.stats
    assert (stats.not_scorable, stats.unscored, stats.failed_writes) == (1, 1, 0)
    assert len(seen) == 2 and live_rows(url) == []  # as Mastra saves none; the callback still has them


def test_scorer_ids_join_a_mastra_scorers_series(url: str) -> None:
    sink = MastraScores(url, scorer_ids={"toxicity": "toxicity-scorer"}, entity_id="support-agent")
    with LiveScorer(toxicity_scorer(make_fake_judge(ToxicityVerdicts=CLEAN)), store=sink) as live:
        live.submit({"run_id": "call-1", "input": "Hi?", "output": "Hello."})
    [row] = live_rows(url)
    assert (row["scorerId"], row["scorer"]["name"], row["entityId"]) == \
        ("toxicity-scorer", "localjudge toxicity", "support-agent")
    with pytest.raises(ValueError, match="scorer_ids names bias: not a scorer of this LiveScorer"):
        LiveScorer(toxicity_scorer(make_fake_judge()), store=MastraScores(url, scorer_ids={"bias": "b"}))
    with pytest.raises(ValueError, match="each series one scorer"):
        MastraScores(url, scorer_ids={"toxicity": "s", "bias": "s"})


def no_score_table(path: Path) -> str:
    sqlite3.connect(path).close()
    return f"file:{path}"


def keyless_score_table(path: Path) -> str:
    url = make_store(path)
    db = sqlite3.connect(path)
    db.execute('ALTER TABLE "mastra_scorers" RENAME TO "old"')
    db.execute('CREATE TABLE "mastra_scorers" AS SELECT * FROM "old"')  # the columns, no key
    db.commit()
    db.close()
    return url


@pytest.mark.parametrize("make, message", [
    (lambda path: f"file:{path}", "no Mastra store at"),
    (no_score_table, "has no table mastra_scorers"),
    (keyless_score_table, "has no primary key or unique index on id"),
])
def test_a_mastra_store_that_cannot_be_written_is_refused_when_made(tmp_path: Path, make: Any, message: str) -> None:
    with pytest.raises(LiveStoreError, match=message) as error:
        LiveScorer(toxicity_scorer(make_fake_judge()), store=make(tmp_path / "mastra.db"))
    assert "\n" not in str(error.value) and str(error.value).startswith("Mastra store file:")


def test_a_refused_postgres_store_never_shows_its_password() -> None:
    with pytest.raises(LiveStoreError, match="cannot be written") as error:
        MastraScores("postgresql://app:s3cret@127.0.0.1:1/mastra")
    assert "s3cret" not in str(error.value) and "app:***@127.0.0.1:1" in str(error.value)


def test_values_json_cannot_hold_are_stored_as_text(url: str) -> None:
    code = create_scorer("any").generate_score(lambda run, results: 1.0)
    with LiveScorer(code, store=url) as live:
        asked = [{"role": "user", "content": "Hi?", "sent": datetime.date(2026, 1, 2)}]
        live.submit({"run_id": "call-1", "input": asked,
                     "output": [{"role": "assistant", "content": "Hello.", "confidence": float("nan")}]})
    [row] = live_rows(url)
    assert row["input"] == [{"role": "user", "content": "Hi?", "sent": "2026-01-02"}]  # as JSON holds it: text
    assert row["output"] == "[{'role': 'assistant', 'content': 'Hello.', 'confidence': nan}]"  # no JSON for NaN


def test_a_write_the_store_refuses_costs_its_batch_and_the_next_is_written(url: str,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    path = url.removeprefix("file:")
    with LiveScorer(toxicity_scorer(make_fake_judge(ToxicityVerdicts=CLEAN)), store=url, max_wait=0.0) as live:
        db = sqlite3.connect(path)
        db.execute('ALTER TABLE "mastra_scorers" RENAME TO "away"')  # gone after the checks
        db.commit()
        with caplog.at_level(logging.ERROR):
            live.submit({"run_id": "call-1", "input": "Hi?", "output": "Hello."})
            live.flush(timeout=60)
        db.execute('ALTER TABLE "away" RENAME TO "mastra_scorers"')
        db.commit()
        db.close()
        live.submit({"run_id": "call-2", "input": "Hi?", "output": "Hello."})
    assert live.stats.failed_writes == 1 and "1 results not stored" in caplog.text
    assert [r["runId"] for r in live_rows(url)] == ["call-2"]
