"""`bench` counts rows a scorer declared not scorable apart from failures: in `BenchResult`
(`unscored` holds failures only), its notes, the report's counts line and the error list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge import FakeJudge, create_scorer, not_scorable
from localjudge.bench.data import custom_benchmark
from localjudge.bench.report import render_markdown
from localjudge.bench.run import run_bench
from localjudge.scorers import SCORERS, register_scorer

LENGTHS = [1, 2, 3, 8, 9, 10, 0, 0, 4]  # 0: nothing to judge (not scorable); 4: the score function fails


def length_scorer(judge: Any, scale: float = 1.0) -> Any:
    def score(run: Any, results: Any) -> float:
        words = len(run.output.split())
        if words == 4:
            raise ValueError("four words")
        return float(words <= 5)

    return (create_scorer("brief", scale=scale, positive="short", higher_is_better=True)
            .preprocess(lambda run, results: not_scorable("nothing to judge") if run.output == "-" else {})
            .generate_score(score))


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(SCORERS))  # undone after the test
    register_scorer("brief", length_scorer)


def test_not_scorable_rows_are_counted_apart_from_failures(registered: None, tmp_path: Path) -> None:
    rows = [{"id": str(i), "input": "Q?", "output": " ".join(["w"] * n) or "-", "label": int(0 < n <= 5)}
            for i, n in enumerate(LENGTHS)]
    path = tmp_path / "brief.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = run_bench(FakeJudge({}, identity="no-judge"), [custom_benchmark(path, scorer="brief")], n_boot=20)
    (result,) = report.results
    assert (result.rows, result.scored, result.unscored, result.not_scorable) == (9, 6, 1, 2)
    assert list(result.errors) == ["score: ValueError: four words"]  # failures only
    assert any(note.startswith("2 of 9 rows are not scorable") for note in result.notes)
    assert "6 scored, 1 unscored, 2 not scorable." in render_markdown(report, {})
