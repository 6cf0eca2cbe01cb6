"""`localjudge bench --fit-calibration FILE` then `localjudge score --calibration FILE`, on a fake
judge whose P(yes) per row is known: the column each row gets, and each refusal as one line (a
malformed file before the model loads; another judge or scorer version before any row is scored)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localjudge.bench.platt import fit_platt, platt
from localjudge.cli.main import main
from localjudge.judge import FakeJudge, Generation
from tests.fakes import FakeJudgeFactory, cli_judge

LABELS = [i % 2 for i in range(40)]
# An overconfident judge: 0.97 or 0.03, right on 3 rows of 4.
PROBS = [0.97 if (y == 1) == (i % 4 != 3) else 0.03 for i, y in enumerate(LABELS)]


def known_probs_judge(fake_judge: FakeJudgeFactory, identity: str = "fake-judge") -> FakeJudge:
    """Direct verdicts with P(yes) = PROBS[N] on the output ``item-N``."""

    def verdict(prompt: list[dict[str, str]]) -> Generation:
        p = PROBS[int(re.findall(r"item-(\d+)", prompt[-1]["content"])[-1])]
        return Generation(json.dumps({"verdict": "yes" if p >= 0.5 else "no", "reason": "r"}),
                          label_probs=({"yes": p, "no": 1 - p},))

    return fake_judge(DirectVerdict=verdict, identity=identity)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({"output": f"item-{i}", "label": y}) + "\n" for i, y in enumerate(LABELS)),
                    encoding="utf-8")
    return path


def fit(tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    cal = tmp_path / "cal.json"
    code = main(["--quiet", "bench", "--model", "m", "--data", str(data), "--scorer", "toxicity", "--positive", "1",
                 "--mode", "direct", "--bootstrap", "20", "--out-dir", str(tmp_path / "bench"),
                 "--fit-calibration", str(cal)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert re.search(r"calibration of toxicity \(40 rows\): ECE 0\.\d\d -> 0\.\d\d, AUC 0\.75 -> 0\.75", err)
    return cal


def score(data: Path, *flags: str) -> int:
    return main(["--quiet", "score", "--model", "m", "--data", str(data), "--scorer", "toxicity", *flags])


def test_bench_fits_then_score_adds_the_calibrated_prob(tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        fake_judge: FakeJudgeFactory) -> None:
    cli_judge(monkeypatch, known_probs_judge(fake_judge))
    cal = fit(tmp_path, data, capsys)
    out = tmp_path / "scored.jsonl"
    assert score(data, "--mode", "direct", "--calibration", str(cal), "--out", str(out)) == 0
    assert f"toxicity_calibrated_prob added to each row of {out}" in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    a, b = fit_platt(PROBS, LABELS)  # the map of the judge's probabilities against the file's labels
    assert a > 0 and [r["toxicity_prob_score"] for r in rows] == pytest.approx(PROBS)
    assert [r["toxicity_calibrated_prob"] for r in rows] == pytest.approx(platt(PROBS, a, b).tolist(), abs=1e-4)
    assert rows[0]["toxicity_calibrated_prob"] < 0.97  # 0.97 is right on 3 rows of 4: softened
    assert score(data, "--mode", "direct", "--out", str(tmp_path / "plain.jsonl")) == 0  # without the flag: no column
    assert "toxicity_calibrated_prob" not in (tmp_path / "plain.jsonl").read_text()


@pytest.mark.parametrize(("flags", "identity", "named"), [
    (["--mode", "direct"], "another-model@1234", ["'fake-judge'", "'another-model@1234'"]),
    (["--mode", "pipeline"], "fake-judge", ["toxicity-direct-v", "direct mode", "toxicity-v"]),
    (["--mode", "direct", "--scale", "10"], "fake-judge", ["scale 1)", "scale 10)"]),
])
def test_a_mismatched_calibration_is_refused_before_scoring(tmp_path: Path, data: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            fake_judge: FakeJudgeFactory, flags: list[str],
                                                            identity: str, named: list[str]) -> None:
    cli_judge(monkeypatch, known_probs_judge(fake_judge))
    cal = fit(tmp_path, data, capsys)
    judge = known_probs_judge(fake_judge, identity)
    cli_judge(monkeypatch, judge)
    out = tmp_path / "scored.jsonl"
    assert score(data, *flags, "--calibration", str(cal), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"localjudge: error: {cal}: its toxicity map"), err
    assert all(name in err for name in named), err
    assert judge.calls == [] and not out.exists()  # refused before any row was scored


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not JSON"),
    ('{"format": "localjudge-calibration", "version": 9}', "format version 9"),
    (None, "cannot read it"),
])
def test_a_malformed_calibration_is_one_line_before_the_model(tmp_path: Path, data: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, text: str | None,
                                                              message: str) -> None:
    cli_judge(monkeypatch, None)
    cal = tmp_path / "cal.json"
    if text is not None:
        cal.write_text(text, encoding="utf-8")
    assert score(data, "--calibration", str(cal)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(cal) in err, err


def test_flags_the_calibration_does_not_reach_are_refused(tmp_path: Path, data: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    cli_judge(monkeypatch, None)
    assert score(data, "--calibration", "cal.json", "--ray", "auto") == 2
    assert "--calibration is not applied to --ray runs" in capsys.readouterr().err
    code = main(["--quiet", "bench", "--model", "m", "--data", str(data), "--scorer", "toxicity", "--positive", "1",
                 "--out-dir", str(tmp_path / "b"), "--fit-calibration", str(tmp_path / "cal.txt")])
    err = capsys.readouterr().err
    assert code == 2 and "--fit-calibration" in err and ".json" in err and err.count("\n") == 1, err


def test_another_scorer_version_is_refused_before_the_model_loads(tmp_path: Path, data: Path,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  fake_judge: FakeJudgeFactory) -> None:
    cli_judge(monkeypatch, known_probs_judge(fake_judge))
    cal = fit(tmp_path, data, capsys)
    cli_judge(monkeypatch, None)  # loading the model fails the test
    assert score(data, "--mode", "pipeline", "--calibration", str(cal)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "toxicity-direct-v" in err and "direct mode" in err, err
