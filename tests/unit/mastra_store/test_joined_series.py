"""``--mastra-scorer-id NAME=ID``: localjudge's rows join a Mastra scorer's series (its `scorerId`),
and are still told apart by their ``localjudge:`` row id, `scorer.name` and `metadata.localjudge`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from localjudge.cli.main import main
from localjudge.mastra_store import Selection, joined_series, open_store, read_agent_runs
from tests.fakes import make_fake_judge, stand_in_engine
from tests.unit.mastra_store.test_mastra_store import make_store, score, score_rows


@pytest.fixture
def url(tmp_path: Path) -> str:
    return make_store(tmp_path / "mastra.db")


def test_rows_join_the_named_series_and_stay_marked(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    assert score(monkeypatch, url, "--scorer", "hallucination,check_no_tool_errors",
                 "--mastra-scorer-id", "hallucination=hallucination-scorer") == 0
    rows = {(r["runId"], r["scorerId"]): r for r in score_rows(url)}
    joined = rows["r1", "hallucination-scorer"]  # Mastra's own scorer id: its series in Studio
    assert joined["scorer"]["id"] == "hallucination-scorer"
    assert joined["id"].startswith("localjudge:") and joined["scorer"]["name"] == "localjudge hallucination"
    assert joined["metadata"]["localjudge"]["judge"] == "fake-judge"  # what tells it apart from Mastra's rows
    assert ("r1", "localjudge:check_no_tool_errors") in rows  # a scorer not named keeps its own id
    assert not any(sid == "localjudge:hallucination" for _, sid in rows)
    before = len(rows)
    assert score(monkeypatch, url, "--scorer", "hallucination", "--mastra-scorer-id",
                 "hallucination=hallucination-scorer") == 0
    assert len(score_rows(url)) == before  # the same row ids: nothing written twice


def test_unscored_selection_reads_the_joined_series(url: str) -> None:
    """With a series joined, `--mastra-unscored` skips runs that series holds a row for, Mastra's own too."""
    db = sqlite3.connect(url.removeprefix("file:"))
    db.execute('INSERT INTO mastra_scorers ("id", "scorerId", "runId") VALUES (?, ?, ?)',
               ("mastra-row", "hallucination-scorer", "r1"))
    db.commit()
    selection = Selection(unscored_by=("hallucination-scorer",))
    assert [r["run_id"] for r in read_agent_runs(open_store(url), selection)] == ["r2", "r3"]


def test_unscored_flag_uses_the_joined_id(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    db = sqlite3.connect(url.removeprefix("file:"))
    db.execute('INSERT INTO mastra_scorers ("id", "scorerId", "runId") VALUES (?, ?, ?)',
               ("mastra-row", "hallucination-scorer", "r1"))
    db.commit()
    assert score(monkeypatch, url, "--scorer", "hallucination", "--mastra-unscored",
                 "--mastra-scorer-id", "hallucination=hallucination-scorer") == 0
    assert [r["id"] for r in score_rows(url)] == ["mastra-row"]  # r1 skipped; r2, r3 have no context


@pytest.mark.parametrize("pairs, message", [
    (["hallucination"], "takes NAME=MASTRA_SCORER_ID, got 'hallucination'"),
    (["hallucination="], "takes NAME=MASTRA_SCORER_ID"),
    (["toxicity=x"], "'toxicity' is not a scorer asked for (hallucination, bias)"),
    (["hallucination=x", "bias=x"], "each scorer joins one series, and each series one scorer"),
    (["hallucination=x", "hallucination=y"], "each scorer joins one series"),
])
def test_bad_pairs_are_one_line_errors(pairs: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        joined_series(pairs, ["hallucination", "bias"])


def test_the_flag_needs_a_store_and_a_bad_pair_stops_before_the_model(monkeypatch: pytest.MonkeyPatch, url: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    loads: list[str] = []
    stand_in_engine(monkeypatch, lambda path, **kwargs: loads.append(path) or make_fake_judge())
    assert main(["--quiet", "score", "--model", "m", "--scorer", "bias", "--mastra-store", url,
                 "--mastra-scorer-id", "toxicity=toxicity-scorer"]) == 2
    assert "'toxicity' is not a scorer asked for" in capsys.readouterr().err and loads == []
    assert main(["score", "--model", "m", "--scorer", "bias", "--data", "x.jsonl",
                 "--mastra-scorer-id", "bias=bias-scorer"]) == 2
    assert "need --mastra-store" in capsys.readouterr().err
