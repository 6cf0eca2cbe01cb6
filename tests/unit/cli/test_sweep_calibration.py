"""A sweep model entry's `calibration: FILE` (issue 48): the cells of the scorer and mode its map was
fitted for get `<scorer>_calibrated_prob`, as `score --calibration` gives it, the scorer's cells in
another mode none; and `score`'s refusals, each one line: another scorer version before the model
loads, another judge once it has loaded and before any cell is scored, a malformed file, a file
for none of the cells, and Ray. The fake judge's probabilities per row are known
(tests/unit/cli/test_ensemble_cli.py), so the map's output is checked to the digit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge.bench import fit_map, write_calibration
from localjudge.bench.calibration_file import scorer_version
from localjudge.bench.platt import fit_platt, platt
from localjudge.cli.main import main
from localjudge.judge import FakeJudge
from localjudge.scorers import build_scorer
from tests.fakes import FakeJudgeFactory, stand_in_engine
from tests.unit.cli.test_ensemble_cli import LABELS, MEANS, known_probs_judge, labeled_data


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return labeled_data(tmp_path)


def calibration(tmp_path: Path, judge: FakeJudge, mode: str = "ensemble", version: str | None = None,
                identity: str | None = None) -> Path:
    """A file with hallucination's map in `mode`, fitted on the ensemble's mean probabilities and
    the labels (as `bench --fit-calibration` fits it), for `judge` (or `identity`) and the scorer's
    version (or `version`)."""
    scorer = build_scorer("hallucination", judge, mode=mode)
    fitted = fit_map(MEANS, LABELS, scorer="hallucination", mode=mode, judge=identity or judge.identity,
                     scorer_version=version or scorer_version(scorer), n_boot=10)
    return write_calibration(tmp_path / "cal.json", [fitted])


def sweep(tmp_path: Path, data: Path, cal: Any, *, more: str = "") -> int:
    """The sweep of hallucination direct, then ensemble, on one model whose entry names `cal`."""
    config = tmp_path / "sweep.yaml"
    config.write_text(f"out_dir: {tmp_path / 'sweep'}\nmodels: [{{name: m, path: m, calibration: {cal}}}]\n"
                      "scorers: [{name: hallucination, mode: direct}, {name: hallucination, mode: ensemble}]\n"
                      f"datasets: [{{name: d, path: {data}}}]\n{more}")
    return main(["--quiet", "sweep", str(config)])


def rows(tmp_path: Path, stem: str) -> list[dict[str, Any]]:
    cell = tmp_path / "sweep" / "m" / "d" / f"{stem}.jsonl"
    return [json.loads(line) for line in cell.read_text(encoding="utf-8").splitlines()]


def test_the_cells_of_the_maps_scorer_and_mode_get_the_calibrated_prob(
        tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        fake_judge: FakeJudgeFactory) -> None:
    judge = known_probs_judge(fake_judge)
    stand_in_engine(monkeypatch, lambda path, **kwargs: judge)
    assert sweep(tmp_path, data, calibration(tmp_path, judge)) == 0
    ensemble = rows(tmp_path, "hallucination-ensemble")
    a, b = fit_platt(MEANS, LABELS)
    assert [r["hallucination_prob_score"] for r in ensemble] == MEANS
    assert [r["hallucination_calibrated_prob"] for r in ensemble] == pytest.approx(platt(MEANS, a, b).tolist(),
                                                                                    abs=1e-4)
    assert all("hallucination_calibrated_prob" not in r for r in rows(tmp_path, "hallucination-direct"))
    cell = tmp_path / "sweep" / "m" / "d" / "hallucination-ensemble.jsonl"
    assert f"hallucination_calibrated_prob added to each row of {cell}" in capsys.readouterr().err


def refused(capsys: pytest.CaptureFixture[str], *named: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("localjudge: error: "), err
    assert all(name in err for name in named), err
    return err


def test_another_scorer_version_is_refused_before_the_model_loads(
        tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        fake_judge: FakeJudgeFactory) -> None:
    judge = known_probs_judge(fake_judge)
    stand_in_engine(monkeypatch, lambda path, **kwargs: pytest.fail("the model was loaded"))
    cal = calibration(tmp_path, judge, version="hallucination-v0@0123abcd")
    assert sweep(tmp_path, data, cal) == 2
    refused(capsys, "hallucination-v0@0123abcd", "(ensemble mode", "+hallucination-direct-v")
    assert not (tmp_path / "sweep").exists()


def test_another_judge_is_refused_before_any_cell_is_scored(
        tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        fake_judge: FakeJudgeFactory) -> None:
    judge = known_probs_judge(fake_judge)
    loads: list[Any] = []
    stand_in_engine(monkeypatch, lambda path, **kwargs: loads.append(path) or judge)
    assert sweep(tmp_path, data, calibration(tmp_path, judge, identity="another-model@1234")) == 2
    refused(capsys, "'another-model@1234'", "'fake-judge'")
    assert len(loads) == 1  # the judge's identity is known once it has loaded
    assert judge.calls == []  # not even the direct cell, which comes first and the file does not reach


@pytest.mark.parametrize(("cal", "more", "named"), [
    ("missing.json", "", ["missing.json", "cannot read it"]),
    ("[1, 2]", "", ["'calibration' is the path of a calibration file"]),
    ("PIPELINE", "", ["holds maps for hallucination (pipeline mode), none for its cells' scorers: "
                      "hallucination (direct mode), hallucination (ensemble mode)"]),
    ("ENSEMBLE", "ray: true\n", ["calibration is not applied on Ray"]),
])
def test_a_file_the_sweep_cannot_apply_is_one_line_before_the_model(
        tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        fake_judge: FakeJudgeFactory, cal: str, more: str, named: list[str]) -> None:
    stand_in_engine(monkeypatch, lambda path, **kwargs: pytest.fail("the model was loaded"))
    if cal in ("PIPELINE", "ENSEMBLE"):
        cal = str(calibration(tmp_path, known_probs_judge(fake_judge), mode=cal.lower()))
    assert sweep(tmp_path, data, cal if cal.startswith("[") else tmp_path / cal, more=more) == 2
    refused(capsys, *named)
    assert not (tmp_path / "sweep").exists()
