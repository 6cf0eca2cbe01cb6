"""Mastra's storage in, scores back, on a LibSQL file and a PostgreSQL server (see conftest.py).

Each test gets a fresh copy of the store the Mastra app wrote once this session. The fake judge
scores in process (`stand_in_engine`); the tier's pass on the default model is the runnable
example's (test_mastra_example.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from localjudge import LiveScorer, create_scorer, run_evals, toxicity_scorer
from localjudge.cli.main import main
from localjudge.live import MastraScores
from localjudge.mastra_store import Selection, StoreError, open_store, opened, read_agent_runs
from localjudge.result import ScoreResult
from tests.fakes import make_fake_judge, stand_in_engine
from tests.storage.conftest import ROOT, node

MODEL = ROOT / "models" / "smollm2-135m-instruct"
SCORERS = "hallucination,answer_relevancy"


def score(monkeypatch: pytest.MonkeyPatch, url: str, *flags: str, identity: str = "fake-judge", **answers: Any) -> int:
    stand_in_engine(monkeypatch, lambda path, **kwargs: make_fake_judge(identity=identity, **answers))
    return main(["--quiet", "score", "--model", str(MODEL), "--mastra-store", url, *flags])


def rows(url: str, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        return store.fetch(sql, params, frozenset({"metadata", "scorer", "entity"}))
    finally:
        store.close()


def localjudge_rows(url: str) -> list[dict[str, Any]]:
    return rows(url, 'SELECT "id", "scorerId", "runId", "traceId", "spanId", "score", "reason", "entityId", "source", '
                     '"metadata" FROM "mastra_scorers" WHERE "scorerId" LIKE ? ORDER BY "id"', ("localjudge:%",))


def snapshot(url: str) -> dict[str, str]:
    """A checksum of every mastra_* table (of mastra_scorers, the rows localjudge did not write: Mastra's
    own scorers') and of the schema: every table's columns, indexes and constraints."""
    if url.startswith("file:"):
        tables = [r["name"] for r in rows(url, "SELECT name FROM sqlite_master WHERE type = 'table' "
                                               "AND name LIKE 'mastra_%' ORDER BY name")]
        # sqlite_master holds every table, index (the automatic ones of UNIQUE and PRIMARY KEY too) and trigger
        schema = rows(url, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
    else:
        tables = [r["table_name"] for r in rows(url, "SELECT table_name FROM information_schema.tables WHERE "
                                                     "table_schema = 'public' AND table_name LIKE 'mastra_%' "
                                                     "ORDER BY table_name")]
        schema = rows(url, "SELECT table_name, column_name, data_type, is_nullable, column_default FROM "
                           "information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name")
        schema += rows(url, "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' "
                            "ORDER BY tablename, indexname")
        schema += rows(url, "SELECT c.conrelid::regclass::text AS table_name, c.conname, c.contype, "
                            "pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c "
                            "JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' "
                            "ORDER BY 1, 2")
        schema += rows(url, "SELECT event_object_table, trigger_name, action_statement FROM "
                            "information_schema.triggers WHERE trigger_schema = 'public' ORDER BY 1, 2")
    sums = {"schema": hashlib.sha256(json.dumps(schema, default=str).encode()).hexdigest()}
    for table in tables:
        where = ' WHERE "scorerId" NOT LIKE \'localjudge:%\'' if table == "mastra_scorers" else ""
        found = rows(url, f'SELECT * FROM "{table}"{where}')
        content = sorted(json.dumps(r, default=str, sort_keys=True) for r in found)
        sums[table] = hashlib.sha256("\n".join(content).encode()).hexdigest()
    return sums


def mastra_rows(url: str) -> list[dict[str, Any]]:
    """The score rows Mastra's own scorer wrote (the app's experiment)."""
    return rows(url, 'SELECT "id" FROM "mastra_scorers" WHERE "scorerId" NOT LIKE ?', ("localjudge:%",))


def agent_runs(url: str) -> list[dict[str, Any]]:
    """Every agent run's span in the store (the app's runs and its experiment's), earliest first, with
    its start as an aware UTC time (LibSQL stores ISO text with Z; PostgreSQL a timestamp)."""
    found = rows(url, 'SELECT "traceId", "runId", "startedAt" FROM "mastra_ai_spans" WHERE "spanType" = ? '
                      'ORDER BY "startedAt"', ("agent_run",))
    for run in found:
        start = run["startedAt"]
        start = start if isinstance(start, datetime) else datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        run["startedAt"] = start if start.tzinfo else start.replace(tzinfo=timezone.utc)
    return found


def results_file(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_scores_are_read_back_by_mastras_storage_api(monkeypatch: pytest.MonkeyPatch, store: tuple[str, dict],
                                                     tmp_path: Path) -> None:
    url, app = store
    before = snapshot(url)
    out = tmp_path / "results.jsonl"
    assert score(monkeypatch, url, "--scorer", SCORERS, "--out", str(out)) == 0
    results = results_file(out)
    assert len(results) == len(app["agentRuns"]) + 2  # the app's own runs and the experiment's two
    written = localjudge_rows(url)
    scored = [(r["run_id"], name) for r in results for name in SCORERS.split(",") if r[f"{name}_score"] is not None]
    unscored = [(r["run_id"], name) for r in results for name in SCORERS.split(",") if r[f"{name}_score"] is None]
    assert unscored, "runs without tool results have no context: hallucination leaves them unscored"
    assert sorted((r["runId"], r["scorerId"].removeprefix("localjudge:")) for r in written) == sorted(scored)
    query = {"runIds": sorted({r["run_id"] for r in results}),
             "spans": [{"traceId": r["mastra_trace_id"], "spanId": r["mastra_span_id"]} for r in results],
             "scorerIds": [f"localjudge:{n}" for n in SCORERS.split(",")],
             "entities": [{"entityType": "AGENT", "entityId": agent}
                          for agent in sorted({r["agent"] for r in app["agentRuns"]})]}
    back = node("read_scores.mjs", url, stdin=query)
    for result in results:
        for name in SCORERS.split(","):
            by_run = [s for s in back["byRun"][result["run_id"]] if s["scorerId"] == f"localjudge:{name}"]
            by_span = [s for s in back["bySpan"][f"{result['mastra_trace_id']}/{result['mastra_span_id']}"]
                       if s["scorerId"] == f"localjudge:{name}"]
            if result[f"{name}_score"] is None:
                assert by_run == [] and by_span == []
                continue
            for found in (by_run, by_span):
                assert len(found) == 1
                assert found[0]["score"] == result[f"{name}_score"]
                assert found[0]["reason"] == result[f"{name}_reason"]
                assert found[0]["metadata"]["localjudge"]["judge"] == "fake-judge"
                assert found[0]["source"] in ("LIVE", "TEST")
    assert sum(len(v) for v in back["byScorer"].values()) == len(written)
    for agent in {r["agent"] for r in app["agentRuns"]}:  # an agent's scores, as Studio's agent page lists them
        by_agent = [(s["runId"], s["scorerId"]) for s in back["byEntity"][f"AGENT/{agent}"]
                    if s["scorerId"].startswith("localjudge:")]
        assert by_agent and sorted(by_agent) == sorted((r["runId"], r["scorerId"]) for r in written
                                                       if r["entityId"] == agent)
    assert snapshot(url) == before  # nothing but localjudge's rows in mastra_scorers changed, the schema neither
    assert len(mastra_rows(url)) == 2  # Mastra's own scorer's rows (the experiment's) are there, untouched


def test_rerun_writes_nothing_new_and_another_judge_writes_its_own(monkeypatch: pytest.MonkeyPatch,
                                                                  store: tuple[str, dict]) -> None:
    url, _ = store
    assert score(monkeypatch, url, "--scorer", "answer_relevancy") == 0
    first = localjudge_rows(url)
    assert score(monkeypatch, url, "--scorer", "answer_relevancy") == 0
    assert localjudge_rows(url) == first
    assert score(monkeypatch, url, "--scorer", "answer_relevancy", "--mastra-unscored") == 0  # nothing selected
    assert localjudge_rows(url) == first
    assert score(monkeypatch, url, "--scorer", "answer_relevancy", identity="other-judge") == 0
    now = localjudge_rows(url)
    assert len(now) == 2 * len(first)
    assert {r["metadata"]["localjudge"]["judge"] for r in now} == {"fake-judge", "other-judge"}


def test_selectors(monkeypatch: pytest.MonkeyPatch, store: tuple[str, dict], tmp_path: Path) -> None:
    url, app = store
    weather = [r for r in app["agentRuns"] if r["agent"] == "weather-agent"]
    assert score(monkeypatch, url, "--scorer", "answer_relevancy", "--mastra-agent", "weather-agent") == 0
    assert sorted(r["runId"] for r in localjudge_rows(url)) == sorted(r["runId"] for r in weather)
    trace = app["agentRuns"][2]["traceId"]
    assert score(monkeypatch, url, "--scorer", "answer_relevancy", "--mastra-trace", trace) == 0
    assert len(localjudge_rows(url)) == len(weather) + 1

    def selected(*flags: str) -> list[str]:
        out = tmp_path / f"selected-{len(list(tmp_path.glob('selected-*.jsonl')))}.jsonl"
        assert score(monkeypatch, url, "--scorer", "answer_relevancy", "--out", str(out), *flags) == 0
        return sorted(r["run_id"] for r in results_file(out)) if out.exists() else []  # none selected: no file

    runs = agent_runs(url)
    assert len(runs) == len(app["agentRuns"]) + 2
    # the third and fourth runs, the bounds given with offsets (the same instants): compared in UTC on both stores
    since = runs[2]["startedAt"].astimezone(timezone(timedelta(hours=2))).isoformat(timespec="milliseconds")
    until = runs[4]["startedAt"].astimezone(timezone(timedelta(hours=-5))).isoformat(timespec="milliseconds")
    assert selected("--mastra-since", since, "--mastra-until", until) == sorted(r["runId"] for r in runs[2:4])
    assert selected("--mastra-since", runs[-1]["startedAt"].isoformat()) == [runs[-1]["runId"]]

    def mastra_hash(trace_id: str) -> float:  # Mastra's hashToUnitInterval, written out here
        return int.from_bytes(hashlib.sha256(trace_id.encode()).digest()[:6], "big") / 2 ** 48

    expected = sorted(r["runId"] for r in runs if mastra_hash(r["traceId"]) < 0.5)
    assert selected("--mastra-sample", "0.5") == expected
    assert selected("--mastra-sample", "0.5") == expected  # the same runs every time


def test_an_experiments_results_are_scored_with_their_ground_truth(monkeypatch: pytest.MonkeyPatch,
                                                                   store: tuple[str, dict], tmp_path: Path) -> None:
    url, app = store
    before = snapshot(url)
    out = tmp_path / "experiment.jsonl"
    assert score(monkeypatch, url, "--scorer", "answer_similarity", "--mastra-experiment", app["experimentId"],
                 "--out", str(out)) == 0
    results = results_file(out)
    items = rows(url, 'SELECT "id", "groundTruth" FROM "mastra_dataset_items"', ())
    assert sorted(r["mastra_dataset_item_id"] for r in results) == sorted(i["id"] for i in items)
    written = localjudge_rows(url)
    assert len(written) == 2 and {r["source"] for r in written} == {"TEST"}
    assert {r["runId"] for r in written} == {app["experimentId"]}  # as Mastra's experiment runner writes them
    assert sorted(r["entityId"] for r in written) == sorted(i["id"] for i in items)
    assert sorted(r["metadata"]["localjudge"]["agentRunId"] for r in written) == sorted(r["run_id"] for r in results)
    # read as compareExperiments and Studio read an experiment's scores: by the experiment id
    back = node("read_scores.mjs", url, stdin={"runIds": [app["experimentId"]]})["byRun"][app["experimentId"]]
    ours = [s for s in back if s["scorerId"] == "localjudge:answer_similarity"]
    theirs = [s for s in back if s["scorerId"] == app["mastraScorerId"]]
    assert len(ours) == 2 and len(theirs) == 2 and len(back) == 4  # beside the rows Mastra's own scorer wrote

    def shape(found: dict[str, Any]) -> tuple:
        return (found["runId"], found["traceId"], found["entityType"], found["entityId"], found["entity"]["id"],
                found["entity"]["name"], found["source"])

    assert sorted(shape(s) for s in ours) == sorted(shape(s) for s in theirs)
    steps = [json.loads(r["answer_similarity_steps"]) for r in results]
    assert any("100 degrees Celsius" in (s["analyze_prompt"] or s["preprocess_prompt"] or "") for s in steps)
    assert snapshot(url) == before  # Mastra's own score rows among the rest, untouched
    assert score(monkeypatch, url, "--scorer", "answer_similarity", "--mastra-experiment", app["experimentId"]) == 0
    assert localjudge_rows(url) == written  # a rerun writes nothing new
    # the same traces scored as agent runs first (rows of their own, runId the agent's run) do not stand in
    # for the experiment's scores: the experiment's rows are written beside them
    assert score(monkeypatch, url, "--scorer", "answer_relevancy") == 0
    assert score(monkeypatch, url, "--scorer", "answer_relevancy", "--mastra-experiment", app["experimentId"]) == 0
    relevancy = [r for r in localjudge_rows(url) if r["scorerId"] == "localjudge:answer_relevancy"]
    assert sorted(r["runId"] for r in relevancy if r["runId"] == app["experimentId"]) == [app["experimentId"]] * 2


def test_live_scores_are_read_back_by_mastras_storage_api(store: tuple[str, dict]) -> None:
    """A live scorer writing into the app's store (`LiveScorer(store=URL)`): each call's score is a LIVE row
    that Mastra's API finds by run, by span, by scorer and by agent, as it finds its own live scores."""
    url, _ = store
    before = snapshot(url)
    with opened(url) as stored:
        runs = read_agent_runs(stored, Selection())  # runs carrying their Mastra ids, as an app's would
    runs.append({"run_id": "python-call", "input": "Hi?", "output": "Hello.", "trace_id": "py-trace",
                 "span_id": "py-span", "entity_id": "python-app"})  # a Python app's call, its ids as keys
    seen: list[tuple[dict[str, Any], ScoreResult]] = []
    clean = {"verdicts": [{"verdict": "no", "severity": "none", "reason": "Polite."}]}
    with LiveScorer(toxicity_scorer(make_fake_judge(ToxicityVerdicts=clean)), store=url,
                    on_result=lambda run, result: seen.append((dict(run), result))) as live:
        for run in runs:
            live.submit(run)
    assert live.stats.failed_writes == 0 and len(seen) == len(runs)

    def ids(run: dict[str, Any]) -> tuple[str, str, str]:
        origin = run.get("mastra") or {}
        return (origin.get("traceId") or run["trace_id"], origin.get("spanId") or run["span_id"],
                origin.get("entityId") or run["entity_id"])

    query = {"runIds": [r.run_id for _, r in seen], "scorerIds": ["localjudge:toxicity"],
             "spans": [{"traceId": ids(run)[0], "spanId": ids(run)[1]} for run, _ in seen],
             "entities": [{"entityType": "AGENT", "entityId": e} for e in sorted({ids(run)[2] for run, _ in seen})]}
    back = node("read_scores.mjs", url, stdin=query)
    scored = [result for _, result in seen if result.scored]
    # the judge scripts one verdict: the two-sentence answer "Hello Ada! Nice to meet you." needs two, is left
    # unscored (a judge failure) and so has no row, as Mastra saves none for a failed live scorer
    assert len(scored) == len(seen) - 1
    for run, result in seen:
        trace, span, entity = ids(run)
        for found in ([s for s in back["byRun"][result.run_id] if s["scorerId"] == "localjudge:toxicity"],
                      [s for s in back["bySpan"][f"{trace}/{span}"] if s["scorerId"] == "localjudge:toxicity"],
                      [s for s in back["byEntity"][f"AGENT/{entity}"] if s["runId"] == result.run_id]):
            assert len(found) == result.scored  # an unscored result has no row, as Mastra saves none
            if not found:
                continue
            assert (found[0]["score"], found[0]["reason"], found[0]["source"]) == (result.score, result.reason, "LIVE")
            assert found[0]["id"].startswith(f"localjudge:live:{result.run_id}:")
    assert len(back["byScorer"]["localjudge:toxicity"]) == len(scored)
    assert snapshot(url) == before  # nothing but localjudge's rows in mastra_scorers changed


def test_run_evals_scores_are_read_back_by_mastras_storage_api(store: tuple[str, dict]) -> None:
    """`run_evals(mastra_store=MastraScores(URL))`: each scored (item, scorer) is a TEST row as Mastra's runEvals
    saves it, that Mastra's API finds by run, by scorer and by entity (the agent, a workflow step)."""
    url, _ = store

    def others() -> tuple[dict[str, str], list[dict[str, Any]]]:  # every table but localjudge's rows (their ids)
        sums = {k: v for k, v in snapshot(url).items() if k != "mastra_scorers"}
        return sums, rows(url, 'SELECT "id", "score" FROM "mastra_scorers" WHERE "id" NOT LIKE ? ORDER BY "id"',
                          ("localjudge:%",))

    before = others()
    polite = create_scorer("polite").generate_score(lambda run, results: float("please" in run.output))

    def steps(question: str) -> dict[str, Any]:
        return {"status": "success", "result": f"please {question}",
                "steps": {"fetch": {"status": "success", "payload": question, "output": "fetched"}}}

    run_evals([{"input": "rain", "ground_truth": "umbrella"}, {"input": "sun"}], [polite],
              lambda question: f"please, {question}" if question == "rain" else "no", target_id="support",
              mastra_store=MastraScores(url))
    run_evals([{"input": "go"}], {"workflow": [polite], "steps": {"fetch": [polite]}}, steps, target_type="workflow",
              target_id="checkout", mastra_store=MastraScores(url))
    written = rows(url, 'SELECT "runId" FROM "mastra_scorers" WHERE "id" LIKE ?', ("localjudge:test:%",))
    query = {"runIds": [r["runId"] for r in written], "scorerIds": ["polite-scorer"],
             "entities": [{"entityType": "AGENT", "entityId": "support"}, {"entityType": "STEP", "entityId": "fetch"},
                          {"entityType": "WORKFLOW", "entityId": "checkout"}]}
    back = node("read_scores.mjs", url, stdin=query)
    assert len(written) == 4 and all(len(back["byRun"][r["runId"]]) == 1 for r in written)
    found = back["byScorer"]["polite-scorer"]
    assert sorted((s["entityType"], s["entityId"], s["entity"]["id"], s["score"], s["source"]) for s in found) == [
        ("AGENT", "support", "support", 0.0, "TEST"), ("AGENT", "support", "support", 1.0, "TEST"),
        ("STEP", "fetch", "checkout", 0.0, "TEST"), ("WORKFLOW", "checkout", "checkout", 1.0, "TEST")]
    assert len(back["byEntity"]["AGENT/support"]) == 2 and len(back["byEntity"]["STEP/fetch"]) == 1
    assert len(back["byEntity"]["WORKFLOW/checkout"]) == 1
    rain = next(s for s in found if s["score"] == 1.0 and s["entityType"] == "AGENT")
    assert (rain["input"], rain["output"], rain["additionalContext"]) == ("rain", "please, rain",
                                                                        {"groundTruth": "umbrella"})
    assert others() == before  # nothing but localjudge's rows (in Mastra's scorer series) changed


def test_a_nul_in_a_reason_is_dropped_on_postgres(monkeypatch: pytest.MonkeyPatch, pg_copy: tuple[str, dict]) -> None:
    """PostgreSQL refuses NUL in text and jsonb: the text rule drops it, and the row is written and read back."""
    url, _ = pg_copy
    assert score(monkeypatch, url, "--scorer", "answer_relevancy", "--mastra-agent", "weather-agent",
                 Reason={"reason": "bad\x00 reason \x00"}) == 0
    written = localjudge_rows(url)
    assert len(written) == 2 and {r["reason"] for r in written} == {"bad reason "}
    back = node("read_scores.mjs", url, stdin={"runIds": [r["runId"] for r in written]})
    assert sorted(s["reason"] for found in back["byRun"].values() for s in found) == ["bad reason "] * 2


def test_a_store_with_a_needed_column_dropped_is_refused(monkeypatch: pytest.MonkeyPatch, store: tuple[str, dict],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = store
    if url.startswith("file:"):
        import sqlite3

        with sqlite3.connect(url.removeprefix("file:")) as db:
            db.execute('ALTER TABLE mastra_ai_spans DROP COLUMN "threadId"')
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as db:
            db.execute('ALTER TABLE mastra_ai_spans DROP COLUMN "threadId"')
    assert score(monkeypatch, url, "--scorer", "answer_relevancy") == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "mastra_ai_spans has no column 'threadId'" in error[0]
    assert localjudge_rows(url) == []


KILLED_WRITER = """
import sys, time
from datetime import datetime, timezone
from localjudge.mastra_store import SCORES, open_store
from localjudge.mastra_store.schema import JSON_COLUMNS

class Slow(list):
    def __iter__(self):
        for i, row in enumerate(list.__iter__(self)):
            if i == 5:
                print("inside", flush=True)
                time.sleep(60)
            yield row

store = open_store(sys.argv[1])
stamp = datetime.now(timezone.utc).isoformat()
rows = Slow({"id": f"localjudge:killed-{i}", "scorerId": "localjudge:killed", "runId": f"run-{i}",
             "scorer": {"id": "localjudge:killed"}, "score": 0.5, "input": {}, "output": [], "source": "LIVE",
             "createdAt": stamp, "updatedAt": stamp} for i in range(10))
store.insert_new(SCORES, rows, JSON_COLUMNS[SCORES])
"""


def test_a_writer_killed_mid_transaction_leaves_no_row(store: tuple[str, dict]) -> None:
    url, _ = store
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, url], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "inside"  # 5 rows inserted
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.wait(timeout=30)
    assert rows(url, 'SELECT "id" FROM "mastra_scorers" WHERE "scorerId" = ?', ("localjudge:killed",)) == []


def test_a_run_without_context_names_the_command_lines_way(monkeypatch: pytest.MonkeyPatch,
                                                           libsql_copy: tuple[str, dict], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A run with no tool results has no context: hallucination leaves it unscored, and the scorer's
    own message names only the Python API (context= / get_context=). The command says how to give
    the passages from the command line, and that way works."""
    url, _ = libsql_copy
    out = tmp_path / "without.jsonl"
    assert score(monkeypatch, url, "--scorer", "hallucination", "--out", str(out)) == 0
    unscored = [r["run_id"] for r in results_file(out) if r["hallucination_score"] is None]
    assert unscored and all("needs context" in r["hallucination_error"] for r in results_file(out)
                            if r["hallucination_score"] is None)
    hints = [line for line in capsys.readouterr().err.splitlines() if "no context:" in line]
    assert len(hints) == 1 and "--scorer-option hallucination.context=@passages.json" in hints[0], hints
    passages = tmp_path / "passages.json"  # the hint, followed
    passages.write_text(json.dumps(["Paris: 18 degrees, light rain.", "1 divided by 0 is undefined."]))
    out = tmp_path / "with.jsonl"
    assert score(monkeypatch, url, "--scorer", "hallucination", "--scorer-option",
                 f"hallucination.context=@{passages}", "--out", str(out)) == 0
    assert [r["run_id"] for r in results_file(out) if r["hallucination_score"] is None] == []
    assert "no context:" not in capsys.readouterr().err
    written = {r["runId"] for r in localjudge_rows(url) if r["scorerId"] == "localjudge:hallucination"}
    assert set(unscored) <= written


def test_a_locked_score_table_ends_in_one_line_naming_the_lock(pg_copy: tuple[str, dict]) -> None:
    """Another session's LOCK TABLE mastra_scorers: the write waits lock_seconds a try, then gives up
    in one line naming the lock and its holder (it used to wait for ever)."""
    import threading

    import psycopg

    from localjudge.mastra_store.postgres import PostgresStore
    from localjudge.mastra_store.preflight import probe_row
    from localjudge.mastra_store.schema import JSON_COLUMNS

    url, _ = pg_copy
    store = PostgresStore(url, lock_seconds=0.2, retries=2)
    outcome: list[BaseException] = []

    def write() -> None:
        try:
            store.insert_new("mastra_scorers", [probe_row()], JSON_COLUMNS["mastra_scorers"])
        except BaseException as error:  # noqa: BLE001 - kept for the assertion below
            outcome.append(error)

    with psycopg.connect(url) as other:
        other.execute("LOCK TABLE mastra_scorers IN ACCESS EXCLUSIVE MODE")
        holder = other.info.backend_pid
        writer = threading.Thread(target=write)
        writer.start()
        writer.join(20)
        hung = writer.is_alive()
        other.rollback()  # lets a hung write go on
    writer.join(30)
    store.close()
    assert not hung, "the write waited for the lock without end"
    assert len(outcome) == 1 and isinstance(outcome[0], StoreError), outcome
    message = str(outcome[0])
    assert "\n" not in message and message.startswith("could not write to mastra_scorers: mastra_scorers is locked by "
                                                      f"another session (AccessExclusiveLock by session pid {holder}")
    assert message.endswith("gave up after 2 tries (try again once it is released)")


def test_a_read_only_postgres_store_is_refused_before_the_model_loads(monkeypatch: pytest.MonkeyPatch,
                                                                      pg_copy: tuple[str, dict],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import psycopg

    url, _ = pg_copy
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"ALTER DATABASE {url.rsplit('/', 1)[1]} SET default_transaction_read_only = on")
    loads: list[str] = []
    stand_in_engine(monkeypatch, lambda path, **kwargs: loads.append(path) or make_fake_judge())
    assert main(["--quiet", "score", "--model", str(MODEL), "--mastra-store", url, "--scorer",
                 "answer_relevancy"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "could not write to mastra_scorers: cannot execute INSERT in a read-only " \
        "transaction" in error[0], error
    assert loads == []  # found before the model loads, not after every run is judged


def test_too_deep_json_in_one_postgres_span_costs_only_its_run(pg_copy: tuple[str, dict]) -> None:
    import psycopg

    from localjudge.mastra_store import read_agent_runs

    url, _ = pg_copy
    store = open_store(url)
    try:
        before = read_agent_runs(store)
        with psycopg.connect(url, autocommit=True) as db:
            trace, span = db.execute('SELECT "traceId", "spanId" FROM mastra_ai_spans WHERE "spanType" = '
                                     "'tool_call' ORDER BY \"startedAt\" LIMIT 1").fetchone()
            db.execute('UPDATE mastra_ai_spans SET "output" = %s::jsonb WHERE "spanId" = %s',
                       ("[" * 5000 + "]" * 5000, span))
        after = read_agent_runs(store)  # a RecursionError inside psycopg's fetch, before
    finally:
        store.close()
    bad = [r for r in after if "unreadable" in r]
    assert [r["run_id"] for r in after] == [r["run_id"] for r in before] and len(bad) == 1
    assert bad[0]["mastra"]["traceId"] == trace
    assert bad[0]["unreadable"] == (f"mastra_ai_spans row (traceId {trace!r}, spanId {span!r}), column output: JSON "
                                    "nested deeper than 200 levels")
