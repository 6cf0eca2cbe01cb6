"""A Mastra store with bad parts: one bad cell or a broken span tree costs its run (recorded
`invalid_run`, the table, row and column named), never the store; a store that cannot take the
scores is refused before any model loads. SQLite files built here (see test_mastra_store.py);
PostgreSQL's lock timeout is the storage tier's."""

from __future__ import annotations

import json
import signal
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from localjudge.cli.main import main
from localjudge.mastra_store import SCORES, StoreError, open_store, read_agent_runs
from localjudge.mastra_store.connection import SqliteStore
from localjudge.mastra_store.preflight import probe_row
from localjudge.mastra_store.schema import JSON_COLUMNS
from tests.fakes import make_fake_judge, stand_in_engine
from tests.unit.mastra_store.test_mastra_store import make_store, score_rows


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[str, sqlite3.Connection]]:
    url = make_store(tmp_path / "mastra.db")
    connection = sqlite3.connect(url.removeprefix("file:"), isolation_level=None)
    yield url, connection
    connection.close()


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail, instead of looping until memory runs out, when the block takes longer than `seconds`."""
    def stop(*_: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def read(url: str) -> dict[str, dict[str, Any]]:
    with within(2):
        return {str(r["run_id"]): r for r in read_agent_runs(open_store(url))}


def add_span(db: sqlite3.Connection, **fields: Any) -> None:
    db.execute(f'INSERT INTO mastra_ai_spans ({", ".join(chr(34) + k + chr(34) for k in fields)}) '
               f'VALUES ({", ".join("?" for _ in fields)})', list(fields.values()))


def deep_jsonb(levels: int) -> bytes:
    """SQLite JSONB of `levels` arrays, each inside the next: [[[...]]]."""
    data = bytes([0x0B])  # an empty array
    for _ in range(levels - 1):
        data = (bytes([(len(data) << 4) | 0x0B]) if len(data) <= 11
                else bytes([0xEB]) + len(data).to_bytes(4, "big")) + data
    return data


def test_a_span_repeating_the_roots_id_under_itself_is_one_unreadable_run(db: tuple[str, sqlite3.Connection]) -> None:
    url, connection = db
    add_span(connection, traceId="t1", spanId="a1", parentSpanId="a1", spanType="model_step",
             startedAt="2026-01-01T10:00:03.000Z")
    runs = read(url)
    assert sorted(runs) == ["r1", "r2", "r3"] and "unreadable" not in runs["r2"] and "output" in runs["r3"]
    assert runs["r1"]["unreadable"] == ("mastra_ai_spans row (traceId 't1', spanId 'a1'), column parentSpanId: span "
                                        "'a1' is met twice below agent span 'a1' (a parentSpanId cycle or a repeated "
                                        "spanId)")
    assert "output" not in runs["r1"] and runs["r1"]["mastra"]["traceId"] == "t1"


def test_a_parent_cycle_through_the_root_is_reported_not_dropped(db: tuple[str, sqlite3.Connection]) -> None:
    url, connection = db
    connection.execute("UPDATE mastra_ai_spans SET \"parentSpanId\" = 'c2' WHERE \"spanId\" = 'a2'")  # a2 <-> c2
    runs = read(url)
    assert sorted(runs) == ["r1", "r2", "r3"]
    assert runs["r2"]["unreadable"] == ("mastra_ai_spans row (traceId 't2', spanId 'a2'), column parentSpanId: the "
                                        "spans above agent span 'a2' form a cycle")


@pytest.mark.parametrize("where", ["c1", "a1"])
def test_a_null_span_id_is_named(db: tuple[str, sqlite3.Connection], where: str) -> None:
    url, connection = db
    connection.execute(f"UPDATE mastra_ai_spans SET \"spanId\" = NULL WHERE \"spanId\" = '{where}'")
    runs = read(url)
    assert sorted(runs) == ["r1", "r2", "r3"] and "unreadable" not in runs["r2"]
    assert runs["r1"]["unreadable"] == "mastra_ai_spans row (traceId 't1', spanId NULL), column spanId: NULL (a span " \
                                       "has an id)"


@pytest.mark.parametrize(("cell", "value", "why"), [
    ("output", bytes([0xC7, 0x09]) + b"cut", "column output: JSONB element runs past the end"),
    ("output", deep_jsonb(5000), "column output: JSONB nested deeper than 200 levels"),
    ("input", "[" * 200_000, "column input: JSON nested deeper than 200 levels"),
    ("input", json.dumps(json.loads("[" * 300 + "]" * 300)), "column input: JSON nested deeper than 200 levels"),
    ("entityId", b"get\xffWeather", "column entityId: not UTF-8 text (byte 0xff at offset 3)"),
])
def test_a_bad_cell_costs_its_run_with_table_row_and_column(db: tuple[str, sqlite3.Connection], cell: str, value: Any,
                                                            why: str) -> None:
    url, connection = db
    cast = "CAST(? AS TEXT)" if isinstance(value, bytes) and cell == "entityId" else "?"
    connection.execute(f'UPDATE mastra_ai_spans SET "{cell}" = {cast} WHERE "spanId" = \'c1\'', [value])
    runs = read(url)
    assert sorted(runs) == ["r1", "r2", "r3"] and "unreadable" not in runs["r2"] and "unreadable" not in runs["r3"]
    assert runs["r1"]["unreadable"] == f"mastra_ai_spans row (traceId 't1', spanId 'c1'), {why}"


def test_a_bad_key_cell_is_named_as_unreadable(db: tuple[str, sqlite3.Connection]) -> None:
    url, connection = db
    connection.execute("UPDATE mastra_ai_spans SET \"traceId\" = CAST(X'74ff32' AS TEXT) WHERE \"spanId\" = 'a2'")
    runs = read(url)
    assert runs["r2"]["unreadable"] == ("mastra_ai_spans row (traceId unreadable, spanId 'a2'), column traceId: not "
                                        "UTF-8 text (byte 0xff at offset 1)")
    assert "unreadable" not in runs["r1"] and "unreadable" not in runs["r3"]


def score(monkeypatch: pytest.MonkeyPatch, url: str, *flags: str) -> tuple[int, list[str]]:
    """`localjudge score --mastra-store`; its status and the models it loaded."""
    loads: list[str] = []
    stand_in_engine(monkeypatch, lambda path, **kwargs: loads.append(path) or make_fake_judge())
    status = main(["--quiet", "score", "--model", "m", "--scorer", "answer_relevancy", "--mastra-store", url, *flags])
    return status, loads


def test_the_rest_of_the_store_is_scored_and_the_bad_run_recorded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                  db: tuple[str, sqlite3.Connection],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    url, connection = db
    connection.execute("UPDATE mastra_ai_spans SET \"output\" = X'C709' WHERE \"spanId\" = 'c1'")
    out = tmp_path / "scored.jsonl"
    status, loads = score(monkeypatch, url, "--out", str(out))
    assert status == 0 and loads == ["m"]
    err = capsys.readouterr().err
    assert "read 3 runs from the Mastra store; 1 of them cannot be read" in err
    assert [r["runId"] for r in score_rows(url)] == ["r2", "r3"]
    rows = {r["run_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["r1"]["answer_relevancy_error_kind"] == "invalid_run" and rows["r1"]["answer_relevancy_score"] is None
    assert rows["r1"]["answer_relevancy_error"] == ("invalid run: mastra_ai_spans row (traceId 't1', spanId 'c1'), "
                                                    "column output: JSONB element runs past the end")
    assert rows["r1"]["mastra_trace_id"] == "t1" and rows["r2"]["answer_relevancy_score"] is not None


def one_line_refusal(monkeypatch: pytest.MonkeyPatch, url: str, capsys: pytest.CaptureFixture[str]) -> str:
    status, loads = score(monkeypatch, url)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and loads == [] and len(err) == 1, (status, loads, err)  # refused before the model loads
    return err[0]


def test_a_read_only_store_is_refused_before_the_model_loads(monkeypatch: pytest.MonkeyPatch,
                                                             db: tuple[str, sqlite3.Connection],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = db
    connect = sqlite3.connect
    # SQLite opens a file it may not write read-only (root may write any file: the test asks for it directly)
    monkeypatch.setattr(sqlite3, "connect", lambda name, *a, **k: connect(name.replace("mode=rw", "mode=ro"), *a, **k))
    assert "could not write to mastra_scorers: attempt to write a readonly database" in \
        one_line_refusal(monkeypatch, url, capsys)


def test_a_score_table_without_a_unique_id_is_refused_before_the_model_loads(
        monkeypatch: pytest.MonkeyPatch, db: tuple[str, sqlite3.Connection],
        capsys: pytest.CaptureFixture[str]) -> None:
    url, connection = db
    connection.execute(f'ALTER TABLE "{SCORES}" RENAME TO old')
    connection.execute(f'CREATE TABLE "{SCORES}" AS SELECT * FROM old')  # the same columns, no key
    assert "mastra_scorers has no primary key or unique index on id alone" in one_line_refusal(monkeypatch, url, capsys)
    store = SqliteStore(Path(url.removeprefix("file:")))
    assert not store.unique_key(SCORES, "id")
    connection.execute(f'CREATE UNIQUE INDEX partial ON "{SCORES}" ("id") WHERE "score" > 0')
    connection.execute(f'CREATE UNIQUE INDEX pair ON "{SCORES}" ("id", "runId")')
    assert not store.unique_key(SCORES, "id")  # neither makes ON CONFLICT ("id") work
    connection.execute(f'CREATE UNIQUE INDEX by_id ON "{SCORES}" ("id")')
    assert store.unique_key(SCORES, "id") and store.unique_key("old", "id")  # an index; the primary key
    store.probe_insert(SCORES, probe_row(), JSON_COLUMNS[SCORES])
    assert connection.execute(f'SELECT COUNT(*) FROM "{SCORES}"').fetchone() == (0,)  # rolled back


def test_the_pre_flight_write_gives_up_on_a_held_lock_in_one_line(db: tuple[str, sqlite3.Connection]) -> None:
    url, connection = db
    connection.execute("BEGIN IMMEDIATE")  # a live app holds the write lock throughout
    store = SqliteStore(Path(url.removeprefix("file:")), busy_seconds=0.05, retries=2)
    with within(5), pytest.raises(StoreError, match="could not write to mastra_scorers: the store's write lock is "
                                                    "held by another connection .*: gave up after 2 tries"):
        store.probe_insert(SCORES, probe_row(), JSON_COLUMNS[SCORES])
    connection.execute("ROLLBACK")
