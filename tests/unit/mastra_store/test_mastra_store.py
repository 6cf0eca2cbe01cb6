"""localjudge.mastra_store on a small SQLite store built here (the columns localjudge reads, as
Mastra 1.x declares them; one span's JSON as LibSQL's JSONB bytes). The real Mastra app, LibSQL
and PostgreSQL are the storage tier's (tests/storage)."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from localjudge.cli.main import main
from localjudge.mastra_store import (
    SCORES,
    SPANS,
    Selection,
    StoreError,
    check_columns,
    open_store,
    read_agent_runs,
    read_experiment_runs,
    sampled,
)
from localjudge.mastra_store.connection import SqliteStore
from localjudge.mastra_store.jsonb import JsonbError, decode_jsonb
from localjudge.mastra_store.schema import NEEDED
from localjudge.samples import to_sample
from tests.fakes import make_fake_judge, stand_in_engine

# {"city":"Paris","temperature":18,"conditions":"light rain"} as @mastra/libsql 1.23.1 stored it
JSONB_RESULT = bytes.fromhex("cc304763697479575061726973b774656d7065726174757265233138a7636f6e646974696f6e73"
                             "a76c69676874207261696e")


def make_store(path: Path) -> str:
    db = sqlite3.connect(path)
    for table in NEEDED:
        columns = ", ".join(f'"{c}" {"REAL" if k == "number" else "TEXT"}' for c, k in NEEDED[table].items())
        key = ', PRIMARY KEY ("id")' if "id" in NEEDED[table] else ""
        db.execute(f'CREATE TABLE "{table}" ({columns}{key})')

    def span(**fields: Any) -> None:
        fields = {k: json.dumps(v) if k in ("input", "output", "attributes", "error") and not isinstance(v, bytes)
                  else v for k, v in fields.items()}
        db.execute(f'INSERT INTO "{SPANS}" ({", ".join(chr(34) + k + chr(34) for k in fields)}) '
                   f'VALUES ({", ".join("?" for _ in fields)})', list(fields.values()))

    span(traceId="t1", spanId="a1", spanType="agent_run", entityType="agent", entityId="weather", runId="r1",
         input="Weather in Paris?", output={"text": "18 degrees and rain."}, startedAt="2026-01-01T10:00:00.000Z")
    span(traceId="t1", spanId="m1", parentSpanId="a1", spanType="model_generation",
         startedAt="2026-01-01T10:00:01.000Z",
         input={"messages": [{"role": "system", "content": "Be brief."},
                             {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}]})
    span(traceId="t1", spanId="s1", parentSpanId="m1", spanType="model_step", startedAt="2026-01-01T10:00:01.500Z")
    span(traceId="t1", spanId="c1", parentSpanId="s1", spanType="tool_call", entityId="getWeather",
         input={"city": "Paris"},
         output=JSONB_RESULT, attributes={"toolCallId": "call-1"}, startedAt="2026-01-01T10:00:02.000Z")
    span(traceId="t2", spanId="a2", spanType="agent_run", entityType="agent", entityId="math", runId="r2",
         input="1/0?", output={"text": "Undefined."}, startedAt="2026-01-02T10:00:00.000Z")
    span(traceId="t2", spanId="c2", parentSpanId="a2", spanType="tool_call", entityId="divide", input={"a": 1, "b": 0},
         error={"message": "division by zero"}, startedAt="2026-01-02T10:00:01.000Z")
    span(traceId="t3", spanId="a3", spanType="agent_run", entityType="agent", entityId="chat", runId="r3",
         threadId="th", input="My name?", output={"text": "Ada."}, startedAt="2026-01-03T10:00:00.000Z")
    span(traceId="t3", spanId="m3", parentSpanId="a3", spanType="model_generation",
         startedAt="2026-01-03T10:00:01.000Z",
         input={"messages": [{"role": "user", "content": "I am Ada."}, {"role": "assistant", "content": "Hi Ada."},
                             {"role": "user", "content": "My name?"}]})
    span(traceId="t3", spanId="a4", parentSpanId="m3", spanType="agent_run", entityId="inner", runId="r4",
         input="inner", output={"text": "inner"}, startedAt="2026-01-03T10:00:02.000Z")
    db.commit()
    db.close()
    return f"file:{path}"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return make_store(tmp_path / "mastra.db")


def test_jsonb_is_decoded_and_bad_bytes_refused() -> None:
    assert decode_jsonb(JSONB_RESULT) == {"city": "Paris", "temperature": 18, "conditions": "light rain"}
    assert decode_jsonb(bytes([0x13]) + b"7") == 7 and decode_jsonb(bytes([0x00])) is None
    with pytest.raises(JsonbError):
        decode_jsonb(bytes([0xC7, 0x09]) + b"cut")


def test_agent_runs_are_read_with_tool_results_as_context_and_the_thread(url: str) -> None:
    with_store = open_store(url)
    runs = {r["run_id"]: r for r in read_agent_runs(with_store)}
    assert sorted(runs) == ["r1", "r2", "r3"]  # r4 is an agent called inside r3's run: part of it
    weather = to_sample(runs["r1"])
    assert (weather.input, weather.output, weather.system) == ("Weather in Paris?", "18 degrees and rain.", "Be brief.")
    assert weather.context == ('{"city": "Paris", "temperature": 18, "conditions": "light rain"}',)
    assert [(c.name, c.state) for c in weather.tool_calls] == [("getWeather", "result")]
    math = to_sample(runs["r2"])
    assert math.context is None and [(c.name, c.state) for c in math.tool_calls] == [("divide", "output-error")]
    chat = to_sample(runs["r3"])
    assert chat.input == "My name?" and chat.turns[0] == ("user", "I am Ada.")
    assert runs["r3"]["mastra"]["threadId"] == "th" and runs["r3"]["mastra"]["spanId"] == "a3"


def test_selection(url: str) -> None:
    store = open_store(url)

    def ids(**selection: Any) -> list[str]:
        return [r["run_id"] for r in read_agent_runs(store, Selection(**selection))]

    assert ids(entity_ids=("math", "chat")) == ["r2", "r3"]
    assert ids(since="2026-01-02T00:00:00Z") == ["r2", "r3"] and ids(until="2026-01-02T00:00:00Z") == ["r1"]
    # an offset is the same instant in UTC: Mastra's "...T10:00:00.000Z" text compares with it as a time
    assert ids(since="2026-01-02T12:00:00+02:00") == ["r2", "r3"] and ids(until="2026-01-02T05:00:00-05:00") == ["r1"]
    assert ids(since="2026-01-02T11:59:59.9999+02:00") == ["r2", "r3"]  # rounded up to the millisecond
    assert ids(since="2026-01-02T10:00:00") == ["r2", "r3"]  # no offset: UTC
    assert ids(since="2026-01-02T10:00:00.0001Z") == ["r3"] and ids(until="2026-01-02T10:00:00.0001Z") == ["r1", "r2"]
    with pytest.raises(ValueError, match="'yesterday' is not an ISO 8601 time"):
        Selection(since="yesterday")
    assert ids(trace_ids=("t3",)) == ["r3"] and ids(limit=1) == ["r1"]
    assert ids(sample_rate=1.0) == ["r1", "r2", "r3"]
    assert ids(sample_rate=0.5) == [r for r, t in (("r1", "t1"), ("r2", "t2"), ("r3", "t3")) if sampled(t, 0.5)]
    with pytest.raises(ValueError, match="sample rate"):
        Selection(sample_rate=0)


def test_a_missing_or_retyped_column_is_refused_in_one_line() -> None:
    columns = {c: "text" for c in NEEDED[SPANS]}
    check_columns(SPANS, {**columns, "extra": "integer"})  # extra columns are fine
    with pytest.raises(StoreError, match="mastra_ai_spans has no column 'runId'"):
        check_columns(SPANS, {c: t for c, t in columns.items() if c != "runId"})
    with pytest.raises(StoreError, match=r"mastra_scorers.score is text, not number"):
        check_columns(SCORES, {**{c: "text" for c in NEEDED[SCORES]}})


def score(monkeypatch: pytest.MonkeyPatch, url: str, *flags: str, identity: str = "fake-judge",
          **answers: Any) -> int:
    stand_in_engine(monkeypatch, lambda path, **kwargs: make_fake_judge(identity=identity, **answers))
    return main(["--quiet", "score", "--model", "models/smollm2-135m-instruct", "--mastra-store", url, *flags])


def score_rows(url: str) -> list[dict[str, Any]]:
    return open_store(url).fetch(f'SELECT * FROM "{SCORES}" ORDER BY "runId"', (),
                                 frozenset({"metadata", "scorer", "entity", "input", "output"}))


def test_scores_are_written_once_in_mastras_shape(monkeypatch: pytest.MonkeyPatch, url: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert score(monkeypatch, url, "--scorer", "hallucination", Reason={"reason": "bad\x00 reason"}) == 0
    rows = score_rows(url)
    assert [r["runId"] for r in rows] == ["r1"]  # r2 and r3 have no tool result: no context, unscored, not written
    row = rows[0]
    assert (row["scorerId"], row["traceId"], row["spanId"], row["entityId"], row["entityType"], row["source"]) == \
        ("localjudge:hallucination", "t1", "a1", "weather", "AGENT", "LIVE")
    assert row["reason"] == "bad reason" and row["metadata"]["localjudge"]["judge"] == "fake-judge"
    assert row["metadata"]["localjudge"]["promptVersion"] and row["createdAt"].endswith("Z")
    err = capsys.readouterr().err.splitlines()
    assert any("2 unscored, not written" in line for line in err)
    assert re.fullmatch(r"scored and written back in \d+\.\d s \(the model's load not counted\)", err[-1])
    assert score(monkeypatch, url, "--scorer", "hallucination") == 0
    assert score_rows(url) == rows  # the same judge never writes a run twice
    assert score(monkeypatch, url, "--scorer", "hallucination", identity="another-judge") == 0
    assert len(score_rows(url)) == 2


def test_cli_errors_are_one_line(monkeypatch: pytest.MonkeyPatch, url: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["--data", "x.jsonl"], "give --data FILE or --mastra-store URL"),
        (["--mastra-store", "mysql://x"], "unknown Mastra store URL"),
        (["--mastra-store", f"file:{tmp_path}/none.db"], "the file does not exist"),
        (["--mastra-store", url, "--mastra-experiment", "nope"], "no experiment 'nope'"),
    ]
    for flags, message in cases:
        stand_in_engine(monkeypatch, lambda path, **kwargs: make_fake_judge())
        argv = ["--quiet", "score", "--model", "m", "--scorer", "answer_relevancy", *flags]
        if flags[0] == "--data":
            argv += ["--mastra-store", url]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
    assert main(["score", "--model", "m", "--scorer", "answer_relevancy", "--data", "x.jsonl",
                 "--mastra-agent", "a"]) == 2
    assert "need --mastra-store" in capsys.readouterr().err


@pytest.mark.parametrize("selector", [["--mastra-agent", "weather"], ["--mastra-since", "2026-01-01T00:00:00Z"],
                                      ["--mastra-until", "2026-01-01T00:00:00Z"], ["--mastra-trace", "t1"],
                                      ["--mastra-sample", "0.5"], ["--mastra-unscored"]])
def test_an_experiment_refuses_the_agent_run_selectors(monkeypatch: pytest.MonkeyPatch, url: str, selector: list[str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    loads: list[str] = []
    stand_in_engine(monkeypatch, lambda path, **kwargs: loads.append(path) or make_fake_judge())
    argv = ["--quiet", "score", "--model", "m", "--scorer", "answer_relevancy", "--mastra-store", url,
            "--mastra-experiment", "e1", *selector]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"takes no agent-run selector: drop {selector[0]}" in err[0], err
    assert loads == [] and score_rows(url) == []


def test_an_experiments_results_carry_ground_truth_and_a_failed_item_is_unscored(url: str) -> None:
    db = sqlite3.connect(url.removeprefix("file:"))
    db.execute('INSERT INTO mastra_experiments ("id", "datasetId", "targetType", "targetId") '
               "VALUES ('e1', 'd1', 'agent', 'weather')")
    for rid, item, trace, output, error in (("x1", "i1", "t1", '{"text": "18 degrees and rain."}', None),
                                            ("x2", "i2", None, None, '{"message": "boom"}')):
        db.execute('INSERT INTO mastra_experiment_results ("id", "experimentId", "itemId", "input", "output", '
                   '"groundTruth", "error", "traceId") VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                   (rid, "e1", item, '"Weather in Paris?"', output, '"Rainy, 18"', error, trace))
    db.commit()
    runs = read_experiment_runs(open_store(url), "e1")
    assert [r["mastra"]["datasetItemId"] for r in runs] == ["i1", "i2"]
    assert [r["ground_truth"] for r in runs] == ["Rainy, 18", "Rainy, 18"]
    assert runs[0]["run_id"] == "r1" and to_sample(runs[0]).context  # read from its trace: the tool result
    assert runs[1]["output"] is None  # the target failed: recorded unscored, never written
    with pytest.raises(StoreError, match="no experiment 'nope'"):
        read_experiment_runs(open_store(url), "nope")


def test_runs_already_scored_by_every_scorer_are_skipped(url: str) -> None:
    db = sqlite3.connect(url.removeprefix("file:"))
    db.execute('INSERT INTO mastra_scorers ("id", "scorerId", "runId") VALUES (?, ?, ?)', ("s1", "localjudge:a", "r1"))
    db.execute('INSERT INTO mastra_scorers ("id", "scorerId", "runId") VALUES (?, ?, ?)', ("s2", "localjudge:b", "r1"))
    db.execute('INSERT INTO mastra_scorers ("id", "scorerId", "runId") VALUES (?, ?, ?)', ("s3", "localjudge:a", "r2"))
    db.commit()
    store = open_store(url)
    assert [r["run_id"] for r in read_agent_runs(store, Selection(unscored_by=("localjudge:a",)))] == ["r3"]
    assert [r["run_id"] for r in read_agent_runs(store, Selection(unscored_by=("localjudge:a", "localjudge:b")))] \
        == ["r2", "r3"]


def test_a_write_waits_for_a_live_apps_lock(url: str) -> None:
    path = Path(url.removeprefix("file:"))
    app = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    app.execute("BEGIN IMMEDIATE")  # a live app holds the write lock...
    releaser = threading.Timer(0.6, lambda: app.execute("COMMIT"))
    releaser.start()  # ...for 0.6 s
    store = SqliteStore(path, busy_seconds=0.05)
    row = {"id": "x", "scorerId": "localjudge:a", "runId": "r1", "score": 1.0}
    try:
        assert store.insert_new(SCORES, [row], frozenset()) == 1
    finally:
        releaser.join()
    assert store.insert_new(SCORES, [row], frozenset()) == 0  # there already: left as it is


def test_postgres_without_psycopg_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError, match=r"needs psycopg: pip install 'localjudge-evals\[postgres\]'"):
        open_store("postgresql://user@127.0.0.1:1/db")
