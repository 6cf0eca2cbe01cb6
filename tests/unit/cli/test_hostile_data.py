"""`localjudge score` on data a careful user could have (issue 34, item 10): a data column named
like a result column is refused before the model loads (results never replace data); a file
without an `input` column is scored without one, as documented; a mixed-type id column prints
its ids, not localjudge's JSON-cell marker; a scale too large to keep two decimals is refused
before the model loads. `evaluate` refuses result-named columns too (the Python API, sweeps)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge import evaluate, toxicity_scorer
from localjudge.cli import model_flags
from localjudge.cli.main import main
from localjudge.judge import FakeJudge
from tests.fakes import FakeJudgeFactory


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch, fake_judge: FakeJudgeFactory) -> list[FakeJudge]:
    """The CLI builds a scripted fake judge instead of loading a model; each one built is kept."""
    judges: list[FakeJudge] = []
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: judges.append(fake_judge()) or judges[-1])
    return judges


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def score(*argv: str) -> int:
    return main(["--quiet", "score", "--model", "unused", *argv])


@pytest.mark.parametrize("column", ["toxicity_score", "toxicity_reason", "toxicity_steps"])
def test_a_data_column_named_like_a_result_column_is_refused_before_the_model_loads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], built: list[FakeJudge], column: str) -> None:
    data = write_rows(tmp_path / "rows.jsonl", [{"input": "q", "output": "a", column: "the user's own"}])
    assert score("--scorer", "toxicity", "--data", str(data), "--out", str(tmp_path / "out.jsonl")) == 2
    err = capsys.readouterr().err
    assert f"the data already has a column {column!r}, where the toxicity scorer's results go" in err
    assert err.count("\n") == 1 and not built and not (tmp_path / "out.jsonl").exists()


def test_evaluate_refuses_a_result_named_column_before_any_judge_call(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    with pytest.raises(ValueError, match="already has a column 'toxicity_error'"):
        evaluate([{"output": "a", "toxicity_error": "kept"}], [toxicity_scorer(judge)])
    assert not judge.calls


def test_data_without_an_input_column_is_scored_without_one(tmp_path: Path, built: list[FakeJudge]) -> None:
    data = write_rows(tmp_path / "rows.jsonl", [{"output": "A polite answer."}, {"output": "Another."}])
    out = tmp_path / "out.jsonl"
    assert score("--scorer", "toxicity,answer_relevancy", "--data", str(data), "--out", str(out)) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["toxicity_score"] for r in rows] == [0.0, 0.0]
    assert all(r["answer_relevancy_score"] is None and "needs an input" in r["answer_relevancy_error"] for r in rows)


def test_a_misspelt_input_column_is_still_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   built: list[FakeJudge]) -> None:
    data = write_rows(tmp_path / "rows.jsonl", [{"output": "a"}])
    assert score("--scorer", "toxicity", "--data", str(data), "--input-col", "question") == 2
    assert "unknown column 'question'" in capsys.readouterr().err and not built


def test_a_mixed_type_id_column_prints_its_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               built: list[FakeJudge]) -> None:
    data = write_rows(tmp_path / "rows.jsonl", [{"run_id": 7, "output": "a"}, {"run_id": "b-2", "output": "b"}])
    assert score("--scorer", "toxicity", "--data", str(data)) == 0
    out = capsys.readouterr().out
    assert "[7] toxicity: 0" in out and "[b-2] toxicity: 0" in out
    assert "\x00" not in out and "json:" not in out


@pytest.mark.parametrize("scale", ["1e308", "2e6"])
def test_a_scale_too_large_is_refused_before_the_model_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             built: list[FakeJudge], scale: str) -> None:
    data = write_rows(tmp_path / "rows.jsonl", [{"input": "q", "output": "a"}])
    assert score("--scorer", "toxicity", "--data", str(data), "--scale", scale) == 2
    err = capsys.readouterr().err
    assert "scale must be at most 1,000,000 (scores keep two decimals)" in err
    assert err.count("\n") == 1 and not built


def test_the_largest_scale_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str], built: list[FakeJudge]) -> None:
    data = write_rows(tmp_path / "rows.jsonl", [{"input": "q", "output": "a"}])
    assert score("--scorer", "toxicity", "--data", str(data), "--scale", "1e6") == 0
    assert "toxicity: 0  " in capsys.readouterr().out
