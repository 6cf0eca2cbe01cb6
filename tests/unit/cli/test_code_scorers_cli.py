"""Mastra's code scorers and checks from the command line: a run of only model-free scorers needs
no --model and loads no judge; one judge scorer among them loads it as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge.cli import model_flags
from localjudge.cli.main import main
from tests.fakes import FakeJudgeFactory

ROWS = [{"run_id": "a", "input": "What is the capital of France?", "output": "Paris is the capital of France."},
        {"run_id": "b", "input": "Name a red fruit.", "output": "A strawberry."}]


def no_model(args: Any, device: Any = None) -> Any:
    pytest.fail("a model was loaded for model-free scorers")


def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_code_scorers_and_checks_run_without_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(model_flags, "build_judge", no_model)
    out = tmp_path / "out.jsonl"
    assert main(["--quiet", "score", "--data", str(rows_file(tmp_path)), "--out", str(out), "--scorer",
                 "keyword_coverage,check_includes,tone", "--scorer-option", "check_includes.expected=paris"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["keyword_coverage_score"], r["check_includes_score"], r["tone_score"]) for r in rows] == [
        (1.0, 1.0, 1.0), (0.0, 0.0, 1.0)]
    assert "judge: none (every scorer is model-free)" in capsys.readouterr().err


def test_a_judge_scorer_among_them_loads_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   fake_judge: FakeJudgeFactory) -> None:
    loaded: list[Any] = []
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: loaded.append(fake_judge()) or loaded[-1])
    assert main(["--quiet", "score", "--model", "m", "--data", str(rows_file(tmp_path)), "--scorer",
                 "toxicity,completeness"]) == 0
    assert len(loaded) == 1 and loaded[0].calls
    # without a model, a judge scorer's run is the usual one-line error
    assert main(["--quiet", "score", "--data", str(rows_file(tmp_path)), "--scorer", "toxicity,completeness"]) == 2


def test_a_check_without_its_option_fails_before_anything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(model_flags, "build_judge", no_model)
    assert main(["--quiet", "score", "--data", str(rows_file(tmp_path)), "--scorer", "check_called_tool"]) == 2
    assert "needs option 'tool_name'" in capsys.readouterr().err
