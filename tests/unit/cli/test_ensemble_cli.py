"""`--mode ensemble` from the command line: `score` (and refused under --compat mastra before the
model loads), a sweep's `mode: ensemble` cell, `bench` reporting its cost beside the other modes,
and calibration: a map fitted on the ensemble's mean probabilities, applied to an ensemble run and
refused for a pipeline run. The fake judge's probabilities per row are known, so the mean and the
map are checked to the digit (the ensemble itself: tests/unit/scorers/test_ensemble.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from localjudge.bench.metrics import roc_auc
from localjudge.bench.platt import fit_platt, platt
from localjudge.cli.main import main
from localjudge.judge import FakeJudge, Generation
from tests.fakes import FakeJudgeFactory, cli_judge, stand_in_engine

LABELS = [i % 2 for i in range(40)]
DIRECT = [0.9 if (y == 1) == (i % 4 != 3) else 0.2 for i, y in enumerate(LABELS)]  # P(yes), right on 3 rows of 4
PIPELINE = [0.6 if (y == 1) == (i % 5 != 4) else 0.3 for i, y in enumerate(LABELS)]  # P(unsupported)
MEANS = [round((d + p) / 2, 4) for d, p in zip(DIRECT, PIPELINE, strict=True)]


def item(prompt: list[dict[str, str]]) -> int:
    return int(re.findall(r"item-(\d+)", prompt[-1]["content"])[-1])


def known_probs_judge(fake_judge: FakeJudgeFactory) -> FakeJudge:
    """Hallucination in both modes, on the output ``item-N`` (one claim, by rule): the pipeline's
    verdict with P(unsupported) = PIPELINE[N], the direct one with P(yes) = DIRECT[N]."""

    def verdicts(prompt: list[dict[str, str]]) -> Generation:
        p = PIPELINE[item(prompt)]
        answer = {"verdicts": [{"verdict": "unsupported" if p >= 0.5 else "supported", "reason": "r"}]}
        return Generation(json.dumps(answer), label_probs=({"supported": round(1 - p, 6), "unsupported": p},))

    def direct(prompt: list[dict[str, str]]) -> Generation:
        p = DIRECT[item(prompt)]
        return Generation(json.dumps({"verdict": "yes" if p >= 0.5 else "no", "reason": "r"}),
                          label_probs=({"yes": p, "no": round(1 - p, 6)},))

    return fake_judge(HallucinationVerdicts=verdicts, DirectVerdict=direct)


def labeled_data(folder: Path) -> Path:
    """A labeled JSONL file of the LABELS rows, each output naming its row."""
    path = folder / "mine.jsonl"
    path.write_text("".join(json.dumps({"output": f"item-{i}", "context": "The context.", "label": y}) + "\n"
                            for i, y in enumerate(LABELS)), encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return labeled_data(tmp_path)


def score(data: Path, out: Path, *flags: str) -> int:
    return main(["--quiet", "score", "--model", "m", "--data", str(data), "--scorer", "hallucination",
                 "--out", str(out), *flags])


def bench(tmp_path: Path, data: Path, mode: str, *flags: str) -> dict[str, Any]:
    out_dir = tmp_path / f"bench-{mode}"
    code = main(["--quiet", "bench", "--model", "m", "--data", str(data), "--scorer", "hallucination", "--positive",
                 "1", "--mode", mode, "--bootstrap", "20", "--no-html", "--out-dir", str(out_dir), *flags])
    assert code == 0
    assert "Cost (" + mode + " mode)" in (out_dir / "report.md").read_text()
    return json.loads((out_dir / "report.json").read_text())["results"][0]


def test_score_keeps_the_pipelines_score_and_the_mean_probability(tmp_path: Path, data: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  fake_judge: FakeJudgeFactory) -> None:
    cli_judge(monkeypatch, known_probs_judge(fake_judge))
    out = tmp_path / "scored.jsonl"
    assert score(data, out, "--mode", "ensemble") == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["hallucination_prob_score"] for r in rows] == MEANS
    assert [r["hallucination_score"] for r in rows] == [1.0 if p >= 0.5 else 0.0 for p in PIPELINE]
    steps = json.loads(rows[3]["hallucination_steps"])["analyze"]
    assert (steps["pipeline"]["probability"], steps["direct"]["probability"]) == (PIPELINE[3], DIRECT[3])


def test_mastras_compat_refuses_the_ensemble_before_the_model_loads(tmp_path: Path, data: Path,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cli_judge(monkeypatch, None)
    assert score(data, tmp_path / "out.jsonl", "--mode", "ensemble", "--compat", "mastra") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Mastra has no such mode" in err, err


def test_a_sweep_cell_takes_the_ensemble(tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch,
                                         fake_judge: FakeJudgeFactory) -> None:
    judge = known_probs_judge(fake_judge)
    stand_in_engine(monkeypatch, lambda path, **kwargs: judge)
    config = tmp_path / "sweep.yaml"
    config.write_text(f"out_dir: {tmp_path / 'sweep'}\nmodels: [{{name: m, path: m}}]\n"
                      "scorers: [{name: hallucination, mode: ensemble}, {name: hallucination, mode: direct}]\n"
                      f"datasets: [{{name: d, path: {data}}}]\n")
    assert main(["--quiet", "sweep", str(config)]) == 0
    cell = tmp_path / "sweep" / "m" / "d" / "hallucination-ensemble.jsonl"
    assert [json.loads(line)["hallucination_prob_score"] for line in cell.read_text().splitlines()] == MEANS
    assert (cell.parent / "hallucination-direct.jsonl").exists()


def test_bench_reports_each_modes_cost_and_fits_the_ensembles_own_calibration(
        tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        fake_judge: FakeJudgeFactory) -> None:
    cli_judge(monkeypatch, known_probs_judge(fake_judge))
    cal = tmp_path / "cal.json"
    costs = {mode: bench(tmp_path, data, mode)["cost"] for mode in ("pipeline", "direct")}
    ensemble = bench(tmp_path, data, "ensemble", "--fit-calibration", str(cal))
    costs["ensemble"] = ensemble["cost"]
    assert {m: (c["mode"], c["rows_judged"]) for m, c in costs.items()} == {m: (m, 40) for m in costs}
    # 40 rows in batches of 8: the direct verdict rides in the pipeline's calls (verdicts, then reasons)
    assert [costs[m]["judge_calls"] for m in ("pipeline", "direct", "ensemble")] == [10, 5, 10]
    assert all(c["rows_per_s"] is None or c["rows_per_s"] > 0 for c in costs.values())
    fitted = json.loads(cal.read_text())["maps"]
    assert [(m["scorer"], m["mode"]) for m in fitted] == [("hallucination", "ensemble")]
    # the ensemble's report measures each mode's probability beside their mean, on the same rows
    aucs = {row["name"]: (row["n"], row["auc"]["value"]) for row in ensemble["table"] if row["kind"] == "judge"}
    assert aucs["pipeline prob score"] == (40, pytest.approx(roc_auc(PIPELINE, LABELS), abs=1e-4))
    assert aucs["direct prob score"] == (40, pytest.approx(roc_auc(DIRECT, LABELS), abs=1e-4))
    assert aucs["judge prob score"] == (40, pytest.approx(roc_auc(MEANS, LABELS), abs=1e-4))

    out = tmp_path / "calibrated.jsonl"  # the map, applied to an ensemble run: fitted on the means
    assert score(data, out, "--mode", "ensemble", "--calibration", str(cal)) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    a, b = fit_platt(MEANS, LABELS)
    assert [r["hallucination_calibrated_prob"] for r in rows] == pytest.approx(platt(MEANS, a, b).tolist(), abs=1e-4)
    capsys.readouterr()

    for mode in ("pipeline", "direct"):  # and refused for either mode alone, in one line naming both
        assert score(data, tmp_path / f"{mode}.jsonl", "--mode", mode, "--calibration", str(cal)) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "(ensemble mode" in err and "+hallucination-direct-v" in err, err
