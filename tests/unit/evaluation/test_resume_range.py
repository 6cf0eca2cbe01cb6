"""One rule for numbers read back (issue 57 N10): a resume-log line whose score (or prob_score)
lies outside its scorer's [0, scale] (edited, corrupt) is no reading: the row is scored again,
with a warning, never written to the output as it is."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from localjudge import create_scorer, evaluate
from localjudge.evaluation import ResultStore

ROWS = [{"run_id": f"r{i}", "input": "q", "output": "x" if i % 2 else "no"} for i in range(4)]


def scorers(calls: list[str]) -> list[object]:
    def has_x(run: object, results: object) -> float:
        calls.append(run.output)  # type: ignore[attr-defined]
        return float("x" in run.output)  # type: ignore[attr-defined]

    return [create_scorer("has_x").generate_score(has_x),
            create_scorer("anything", score_returns="score").generate_score(lambda run, results: 87.5)]


@pytest.mark.parametrize(("field", "value"), [("score", 5.0), ("score", -1.0), ("prob_score", 3.0)])
def test_an_edited_score_out_of_range_is_scored_again(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                      field: str, value: float) -> None:
    calls: list[str] = []
    first = evaluate(ROWS, scorers(calls), store=ResultStore(tmp_path / "log"))  # type: ignore[arg-type]
    log = tmp_path / "log" / "rank-0.jsonl"
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    edited = next(r for r in lines if r["result"]["scorer"] == "has_x" and r["result"]["score"] == 1.0)
    edited["result"][field] = value
    log.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    calls.clear()
    with caplog.at_level(logging.WARNING):
        again = evaluate(ROWS, scorers(calls), store=ResultStore(tmp_path / "log"))  # type: ignore[arg-type]
    assert again.results == first.results  # that row scored again, not read as edited
    assert [c for c in calls if c in ("x", "no")] == ["x"]  # (a scorer's key is made on a probe run too)
    assert "outside [0, scale]" in caplog.text
    assert {n: s.resumed for n, s in again.summary.items()} == {"has_x": 3, "anything": 4}  # 87.5 is its score
