"""Issue 49 items 6 and 7: the first output explains itself. The summary table says which way
each scorer's score is good (`better`); under it, a line explains mean_prob_score and, when the
default model judged, that it proves the plumbing, not the verdicts; a run whose rows were left
unscored by a judge failure says how to resume them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localjudge import Generation
from localjudge.cli import model_flags
from localjudge.cli.main import main
from tests.conftest import EXAMPLES
from tests.fakes import make_fake_judge

EXAMPLE = EXAMPLES / "example.jsonl"
DEFAULT_MODEL = "models/smollm2-135m-instruct"


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, model: str, scorers: str,
        *more: str, judge: Any = None) -> tuple[str, str]:
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: judge or make_fake_judge())
    assert main(["--quiet", "score", "--model", model, "--scorer", scorers, "--data", str(EXAMPLE), *more]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def table(out: str) -> dict[str, dict[str, str]]:
    """The summary table's rows by scorer, each cell by its column."""
    lines = [line for line in out.splitlines() if line.startswith("| ")]
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [dict(zip(head, (cell.strip() for cell in line.strip("|").split("|")), strict=True)) for line in lines[1:]]
    return {row["scorer"]: row for row in rows}


def test_the_summary_says_which_way_is_better(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = run(capsys, monkeypatch, DEFAULT_MODEL, "hallucination,faithfulness,toxicity,completeness")
    rows = table(out)
    assert "| scorer | better | mean_score | mean_prob_score |" in out
    assert {name: row["better"] for name, row in rows.items()} == {
        "hallucination": "lower", "faithfulness": "higher", "toxicity": "lower", "completeness": "higher"}


def test_a_rubric_gets_its_direction_from_its_options(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """rubric cannot be built without its criteria: the direction comes from the run's own options."""
    out, _ = run(capsys, monkeypatch, "my-model", "rubric", "--scorer-option", 'rubric.criteria=["Is polite."]')
    assert table(out)["rubric"]["better"] == "higher"


def test_under_the_summary_prob_score_and_the_default_model_are_explained(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, err = run(capsys, monkeypatch, DEFAULT_MODEL, "toxicity")
    assert "mean_prob_score: the same score from the judge's label probabilities" in err
    assert "the default model (SmolLM2-135M) proves the plumbing" in err and "docs/models.md" in err
    _, err = run(capsys, monkeypatch, "models/qwen2.5-7b-instruct", "toxicity")
    assert "mean_prob_score:" in err and "default model" not in err


def test_a_model_free_run_has_no_word_on_the_model(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: pytest.fail("no judge is needed"))
    assert main(["--quiet", "score", "--scorer", "completeness", "--data", str(EXAMPLE)]) == 0
    err = capsys.readouterr().err
    assert "better: which way" in err and "mean_prob_score" not in err and "default model" not in err


def failing_judge() -> Any:
    """Every judge call fails as a server that went away fails: each row unscored, judge_failed."""
    gone = Generation("", error="server http://127.0.0.1:9/v1: not sent, no server left", error_kind="judge_failed")
    return make_fake_judge(Claims=gone, ToxicityVerdicts=gone)


def test_rows_lost_to_a_judge_failure_say_how_to_resume(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out_file = tmp_path / "scored.jsonl"
    _, err = run(capsys, monkeypatch, "my-model", "toxicity", "--out", str(out_file), judge=failing_judge())
    (hint,) = [line for line in err.splitlines() if "judge_failed" in line]
    assert hint.startswith("7 result(s) unscored by a judge failure")  # 8 rows; one is decided without the judge
    assert f"rerun the same command with --out {out_file} to score only those" in hint
    _, err = run(capsys, monkeypatch, "my-model", "toxicity", judge=failing_judge())
    assert "run with --out FILE to keep what was scored" in err
    _, err = run(capsys, monkeypatch, "my-model", "toxicity")
    assert "rerun" not in err  # nothing failed: no hint


@pytest.mark.parametrize("flags", [
    ["--tokenizer", DEFAULT_MODEL],  # docs/servers.md's command
    ["--model", DEFAULT_MODEL],  # the tokenizer folder given as --model
    ["--served-model", "smollm2-135m-instruct"],  # no tokenizer: the name the server serves it as
])
def test_the_default_model_through_a_server_gets_the_same_word(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               flags: list[str]) -> None:
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: make_fake_judge())
    assert main(["--quiet", "score", "--engine", "server", "--base-url", "http://127.0.0.1:9/v1", *flags,
                 "--scorer", "toxicity", "--data", str(EXAMPLE)]) == 0
    assert "the default model (SmolLM2-135M) proves the plumbing" in capsys.readouterr().err
