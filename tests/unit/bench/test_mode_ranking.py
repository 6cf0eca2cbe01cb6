"""`localjudge bench --mode ensemble` ends by naming the mode that ranked best on the user's labels,
with its interval, and says "no clear winner" unless that interval lies above every other mode's
(`localjudge.bench.modes`): the docs' mode advice rests on one or two sets per scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.bench.metrics import roc_auc
from localjudge.bench.modes import rank_modes
from localjudge.bench.types import BenchResult, Estimate, ScoreRow
from localjudge.cli.main import main
from tests.fakes import FakeJudgeFactory, cli_judge
from tests.unit.cli.test_ensemble_cli import DIRECT, LABELS, MEANS, PIPELINE, known_probs_judge, labeled_data


def result(*rows: tuple[str, Estimate]) -> BenchResult:
    table = [ScoreRow(name, "judge", 80, auc, None) for name, auc in rows]
    table.append(ScoreRow("word overlap", "baseline", 80, Estimate(0.99, 0.97, 1.0), None))  # never a mode
    return BenchResult("mine", "faithfulness", "v1", "unfaithful", 80, 40, 80, 0, {}, table, [])


def test_a_mode_whose_interval_lies_above_the_others_is_a_clear_winner() -> None:
    ranking = rank_modes(result(("judge prob score", Estimate(0.70, 0.60, 0.79)),
                                ("pipeline prob score", Estimate(0.60, 0.50, 0.69)),
                                ("direct prob score", Estimate(0.90, 0.82, 0.96))))
    assert ranking is not None and ranking.best == "direct" and ranking.clear
    assert ranking.line() == ("mine (faithfulness): direct ranked best by prob AUC, direct 0.90 [0.82, 0.96]; its "
                              "interval above the others' (ensemble 0.70 [0.60, 0.79], pipeline 0.60 [0.50, 0.69])")


def test_overlapping_intervals_are_no_clear_winner() -> None:
    ranking = rank_modes(result(("judge prob score", Estimate(0.86, 0.76, 0.94)),
                                ("pipeline prob score", Estimate(0.79, 0.70, 0.89)),
                                ("direct prob score", Estimate(0.84, 0.75, 0.92))))
    assert ranking is not None and ranking.best == "ensemble" and not ranking.clear
    assert "ensemble ranked best by prob AUC, ensemble 0.86 [0.76, 0.94]; no clear winner" in ranking.line()
    tied = rank_modes(result(("judge prob score", Estimate(0.8, 0.8, 0.8)), ("direct prob score", Estimate(0.8))))
    assert tied is not None and not tied.clear  # equal figures, or no interval: never a winner


def test_a_run_in_one_mode_ranks_nothing() -> None:
    assert rank_modes(result(("judge score", Estimate(0.7, 0.6, 0.8)),
                             ("judge prob score", Estimate(0.75, 0.65, 0.85)))) is None
    assert rank_modes(result(("judge prob score", Estimate(0.75)), ("direct prob score", Estimate(None)))) is None


def test_bench_in_ensemble_mode_ends_naming_the_best_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          fake_judge: FakeJudgeFactory) -> None:
    cli_judge(monkeypatch, known_probs_judge(fake_judge))
    data = labeled_data(tmp_path)
    aucs = {"ensemble": roc_auc(MEANS, LABELS), "pipeline": roc_auc(PIPELINE, LABELS),
            "direct": roc_auc(DIRECT, LABELS)}
    best = max(aucs, key=lambda mode: aucs[mode])
    for mode in ("ensemble", "direct"):
        out_dir = tmp_path / mode
        assert main(["--quiet", "bench", "--model", "m", "--data", str(data), "--scorer", "hallucination",
                     "--positive", "1", "--mode", mode, "--bootstrap", "50", "--no-html",
                     "--out-dir", str(out_dir)]) == 0
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.startswith("modes on ")]
        if mode == "direct":
            assert lines == []  # one mode: nothing to rank
            continue
        (line,) = lines
        table = json.loads((out_dir / "report.json").read_text())["results"][0]["table"]
        auc = next(row["auc"] for row in table if row["name"] == {"ensemble": "judge prob score"}.get(
            best, f"{best} prob score"))
        assert line.startswith(f"modes on mine (hallucination): {best} ranked best by prob AUC, {best} "
                               f"{auc['value']:.2f} [{auc['low']:.2f}, {auc['high']:.2f}]; ")


def test_fit_calibration_records_the_modes_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   fake_judge: FakeJudgeFactory) -> None:
    cli_judge(monkeypatch, known_probs_judge(fake_judge))
    data, cal = labeled_data(tmp_path), tmp_path / "cal.json"
    assert main(["--quiet", "bench", "--model", "m", "--data", str(data), "--scorer", "hallucination",
                 "--positive", "1", "--mode", "ensemble", "--bootstrap", "50", "--no-html",
                 "--out-dir", str(tmp_path / "out"), "--fit-calibration", str(cal)]) == 0
    (fitted,) = json.loads(cal.read_text())["maps"]
    (verdict,) = fitted["fit"]["mode_ranking"]
    aucs = {"ensemble": roc_auc(MEANS, LABELS), "pipeline": roc_auc(PIPELINE, LABELS),
            "direct": roc_auc(DIRECT, LABELS)}
    assert verdict["benchmark"] == "mine" and verdict["ranked_first"] == max(aucs, key=lambda mode: aucs[mode])
    assert set(verdict["auc"]) == set(aucs)
    assert verdict["best"] == (verdict["ranked_first"] if verdict["clear"] else None)
