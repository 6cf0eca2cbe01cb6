"""Calibration maps: Platt's fit on hand-computed cases, monotone, cross-validated figures on a
known case, the file read back (a malformed one is one line), a map refused for another judge or
scorer version, and `run_bench(..., fit_calibration=...)` on a fake judge with known probabilities."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from localjudge.bench import (
    apply_calibration,
    calibrate_rows,
    check_calibration,
    custom_benchmark,
    fit_map,
    load_calibration,
    run_bench,
    write_calibration,
)
from localjudge.bench.calibration_file import CalibrationFile, CalibrationMap, scorer_version
from localjudge.bench.platt import fit_platt, folds, out_of_fold, platt
from localjudge.evaluation import evaluate
from localjudge.judge import Generation
from localjudge.scorers import build_scorer
from tests.fakes import FakeJudgeFactory

# 4 rows at 0.2 (one of label 1), 4 at 0.8 (three of label 1). Platt's targets: 5/6 for label 1,
# 1/6 for label 0; two distinct scores and two parameters, so the fit gives each score its rows'
# mean target: (5/6 + 3/6) / 4 = 1/3 at 0.2 and (3 * 5/6 + 1/6) / 4 = 2/3 at 0.8. On the log-odds,
# logit(0.2) = -2 ln 2 -> logit(1/3) = -ln 2: a = 1/2, b = 0.
HAND_PROBS, HAND_LABELS = [0.2] * 4 + [0.8] * 4, [1, 0, 0, 0, 1, 1, 1, 0]


def test_platt_on_a_hand_computed_case() -> None:
    a, b = fit_platt(HAND_PROBS, HAND_LABELS)
    assert a == pytest.approx(0.5, abs=1e-9) and b == pytest.approx(0.0, abs=1e-9)
    assert platt([0.2, 0.8], a, b).tolist() == pytest.approx([1 / 3, 2 / 3], abs=1e-9)


def test_a_reversed_score_gets_the_base_rate_not_a_reversed_map() -> None:
    # the same rows with the labels swapped between the two scores: the best fit has a < 0
    a, b = fit_platt(HAND_PROBS, [0, 1, 1, 1, 0, 0, 0, 1])
    assert (a, b) == (0.0, pytest.approx(0.0, abs=1e-12))  # base rate 1/2 for every row
    assert platt([0.01, 0.99], a, b).tolist() == pytest.approx([0.5, 0.5])


def test_perfectly_separated_labels_give_a_finite_map() -> None:
    a, b = fit_platt([0.9] * 20 + [0.1] * 20, [1] * 20 + [0] * 20)
    assert math.isfinite(a) and a > 0
    assert platt([0.9, 0.1], a, b).tolist() == pytest.approx([21 / 22, 1 / 22], abs=1e-9)  # Platt's targets


@pytest.mark.parametrize("seed", range(5))
def test_the_map_is_monotone(seed: int) -> None:
    rng = np.random.default_rng(seed)
    probs = rng.uniform(size=60)
    labels = (rng.uniform(size=60) < probs ** 3).astype(int).tolist()  # an overconfident judge
    a, b = fit_platt(probs.tolist(), labels)
    grid = platt(np.linspace(0, 1, 501), a, b)
    assert a >= 0 and np.all(np.diff(grid) >= 0)


def test_fit_refuses_one_label_and_bad_probabilities() -> None:
    with pytest.raises(ValueError, match="both labels"):
        fit_platt([0.1, 0.2], [1, 1])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fit_platt([0.1, 1.2], [0, 1])


def test_folds_are_stratified_and_deterministic() -> None:
    labels = [1, 0, 1, 1, 0, 0, 1]
    # label 1 at rows 0, 2, 3, 6 -> folds 0, 1, 2, 0; label 0 at rows 1, 4, 5 -> folds 0, 1, 2
    assert folds(labels, 3) == [0, 0, 1, 2, 1, 2, 0]
    assert folds(labels, 3) == folds(list(labels), 3)


def test_cross_validation_on_a_known_case() -> None:
    # 20 rows of label 1 at 0.9, 20 of label 0 at 0.1; each of 5 folds trains on 16 + 16 rows,
    # whose Platt targets are 17/18 and 1/18: every held-out row at 0.9 gets 17/18, at 0.1 1/18.
    probs, labels = [0.9] * 20 + [0.1] * 20, [1] * 20 + [0] * 20
    calibrated = out_of_fold(probs, labels)
    assert calibrated == pytest.approx([17 / 18] * 20 + [1 / 18] * 20, abs=1e-9)
    fitted = fit_map(probs, labels, scorer="toxicity", mode="direct", scorer_version="v@h", judge="j", n_boot=50)
    fit = fitted.fit
    assert fit["auc_before"]["value"] == 1.0 and fit["auc_after"]["value"] == 1.0
    assert fit["ece_before"]["value"] == pytest.approx(0.1) and fit["ece_after"]["value"] == pytest.approx(1 / 18)
    assert (fit["rows"], fit["positives"], fit["folds"]) == (40, 20, 5)
    assert fitted.prob(0.9) == pytest.approx(21 / 22, abs=1e-4)  # the map written: fitted on all 40 rows


def test_each_row_is_calibrated_by_the_map_of_the_other_folds() -> None:
    rng = np.random.default_rng(1)
    probs = rng.uniform(size=30).tolist()
    labels = [int(rng.uniform() < p) for p in probs]
    fold = folds(labels)
    calibrated = out_of_fold(probs, labels)
    for f in range(5):
        others = [i for i in range(30) if fold[i] != f]
        a, b = fit_platt([probs[i] for i in others], [labels[i] for i in others])
        held = [i for i in range(30) if fold[i] == f]
        assert [calibrated[i] for i in held] == pytest.approx(platt([probs[i] for i in held], a, b).tolist())
    assert calibrated != pytest.approx(platt(probs, *fit_platt(probs, labels)).tolist())  # not the in-sample map


def test_cross_validation_needs_each_label_in_every_fold() -> None:
    with pytest.raises(ValueError, match="at least 5 rows of each label, got 4"):
        out_of_fold([0.5] * 10, [1] * 4 + [0] * 6)


def a_map(**changes: Any) -> CalibrationMap:
    fields = {"scorer": "toxicity", "mode": "direct", "scorer_version": "v@h", "scale": 1.0, "judge": "fake-judge",
              "a": 0.5, "b": 0.0, "fit": {"rows": 8}}
    return CalibrationMap(**{**fields, **changes})


def test_the_file_round_trips_as_json(tmp_path: Path) -> None:
    path = write_calibration(tmp_path / "cal.json", [a_map(), a_map(scorer="hallucination", mode="pipeline")])
    data = json.loads(path.read_text())
    assert (data["format"], data["version"], data["method"]) == ("localjudge-calibration", 1, "platt-logit")
    read = load_calibration(path)
    assert read.maps == {"toxicity": a_map(), "hallucination": a_map(scorer="hallucination", mode="pipeline")}
    assert read.maps["toxicity"].prob(0.2) == pytest.approx(1 / 3, abs=1e-4)
    assert read.maps["toxicity"].prob(None) is None
    assert a_map(scale=10.0).prob(2.0) == pytest.approx(1 / 3, abs=1e-4)  # a prob score on its scorer's scale


GOOD = {"format": "localjudge-calibration", "version": 1, "method": "platt-logit",
        "maps": [{"scorer": "toxicity", "mode": "direct", "scorer_version": "v@h", "scale": 1, "judge": "j",
                  "a": 0.5, "b": 0.0, "fit": {}}]}


def with_map(**changes: Any) -> dict[str, Any]:
    return {**GOOD, "maps": [{**GOOD["maps"][0], **changes}]}


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "not JSON"),
    ("[]", "not a localjudge calibration file"),
    (json.dumps({**GOOD, "format": "other"}), "not a localjudge calibration file"),
    (json.dumps({**GOOD, "version": 2}), "format version 2; this localjudge reads version 1"),
    (json.dumps({**GOOD, "method": "isotonic"}), "method 'isotonic'"),
    (json.dumps({**GOOD, "maps": []}), "non-empty list"),
    (json.dumps({**GOOD, "maps": ["x"]}), r"maps\[0\] is not an object"),
    (json.dumps(with_map(a="1")), r"maps\[0\]: 'a' is missing or not a number"),
    (json.dumps(with_map(judge=None)), "'judge' is missing or not a string"),
    (json.dumps(with_map(fit=[])), "'fit' is missing or not an object"),
    (json.dumps(with_map(a=-1)), "a >= 0"),
    (json.dumps(with_map(scale=0)), "scale > 0"),
    (json.dumps(with_map(a=True)), "'a' is missing or not a number"),
    (json.dumps({**GOOD, "maps": GOOD["maps"] * 2}), "two maps for the toxicity scorer"),
])
def test_a_malformed_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "cal.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as caught:
        load_calibration(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_the_good_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    assert load_calibration(path).maps["toxicity"].a == 0.5


def test_a_missing_or_binary_file_is_one_line(tmp_path: Path) -> None:
    for path in (tmp_path / "none.json", tmp_path / "bin.json"):
        if path.name == "bin.json":
            path.write_bytes(b"\xff\xfe\x00")
        with pytest.raises(ValueError, match="cannot read it") as caught:
            load_calibration(path)
        assert "\n" not in str(caught.value)


def calibration_for(scorer: Any, **changes: Any) -> CalibrationFile:
    fitted = a_map(scorer=scorer.name, scorer_version=scorer_version(scorer), judge=scorer.judge.identity,
                   scale=scorer.scale)
    return CalibrationFile("cal.json", {scorer.name: CalibrationMap(**{**fitted.__dict__, **changes})})


def test_a_map_is_refused_for_another_judge(fake_judge: FakeJudgeFactory) -> None:
    scorer = build_scorer("toxicity", fake_judge(identity="model-b@1234"), mode="direct")
    calibration = calibration_for(scorer, judge="model-a@abcd")
    with pytest.raises(ValueError) as caught:
        check_calibration(calibration, [scorer])
    message = str(caught.value)
    assert "'model-a@abcd'" in message and "'model-b@1234'" in message and "\n" not in message


def test_a_map_is_refused_for_another_scorer_version(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    direct = build_scorer("toxicity", judge, mode="direct")
    pipeline = build_scorer("toxicity", judge)
    with pytest.raises(ValueError) as caught:
        check_calibration(calibration_for(direct), [pipeline])
    message = str(caught.value)
    assert scorer_version(direct) in message and scorer_version(pipeline) in message and "\n" not in message
    assert "direct mode" in message
    tenfold = build_scorer("toxicity", judge, mode="direct", scale=10)
    with pytest.raises(ValueError, match=r"scale 1\).*scale 10\)"):
        check_calibration(calibration_for(direct), [tenfold])
    with pytest.raises(ValueError, match="holds maps for toxicity, none for hallucination"):
        check_calibration(calibration_for(direct), [build_scorer("hallucination", judge)])


def known_probs_judge(fake_judge: FakeJudgeFactory, probs: dict[str, float]) -> Any:
    """A judge whose direct verdict on the output ``item-N`` has P(yes) = probs["item-N"]."""

    def verdict(prompt: list[dict[str, str]]) -> Generation:
        item = re.findall(r"item-\d+", prompt[-1]["content"])[-1]
        p = probs[item]
        text = json.dumps({"verdict": "yes" if p >= 0.5 else "no", "reason": "r"})
        return Generation(text, label_probs=({"yes": p, "no": 1 - p},))

    return fake_judge(DirectVerdict=verdict)


def test_apply_to_an_evaluation_and_to_rows(fake_judge: FakeJudgeFactory) -> None:
    judge = known_probs_judge(fake_judge, {"item-0": 0.2, "item-1": 0.8})
    scorer = build_scorer("toxicity", judge, mode="direct")
    evaluation = evaluate([{"output": "item-0"}, {"output": "item-1"}, {"output": ""}], [scorer])
    calibrated = apply_calibration(evaluation, calibration_for(scorer), [scorer])
    column = calibrated.dataset["toxicity_calibrated_prob"]
    # a = 1/2, b = 0: 0.2 -> 1/3, 0.8 -> 2/3; an empty output is decided by rule (prob score 0 -> EPS)
    assert column[:2] == pytest.approx([1 / 3, 2 / 3], abs=1e-4)
    assert column[2] == round(0.01 / (0.01 + math.sqrt(1 - 1e-4)), 4)  # sigmoid(logit(1e-4) / 2)
    rows = calibrate_rows(evaluation.dataset.to_list(), calibration_for(scorer), [scorer])
    assert [r["toxicity_calibrated_prob"] for r in rows] == column
    with pytest.raises(ValueError, match="already has a column 'toxicity_calibrated_prob'"):
        calibrate_rows(rows, calibration_for(scorer), [scorer])


def labeled_file(tmp_path: Path, probs: list[float], labels: list[int]) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({"output": f"item-{i}", "label": y}) + "\n" for i, y in enumerate(labels)),
                    encoding="utf-8")
    return path


def test_run_bench_fits_writes_and_reports_the_map(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    labels = [i % 2 for i in range(40)]
    probs = [0.95 if (y and i % 3) or (not y and i % 4 == 0) else 0.05 for i, y in enumerate(labels)]
    judge = known_probs_judge(fake_judge, {f"item-{i}": p for i, p in enumerate(probs)})
    bench = custom_benchmark(labeled_file(tmp_path, probs, labels), scorer="toxicity")
    report = run_bench(judge, [bench], out_dir=tmp_path / "out", mode="direct", n_boot=50,
                       fit_calibration=tmp_path / "cal.json")
    (fitted,) = report.calibration_maps
    expected = fit_map(probs, labels, scorer="toxicity", mode="direct", scorer_version=fitted.scorer_version,
                       judge="fake-judge", benchmarks=["mine"], n_boot=50)
    assert fitted == expected  # the map from the judge's prob scores and the file's labels
    assert (fitted.mode, fitted.judge) == ("direct", "fake-judge")
    assert fitted.scorer_version == scorer_version(build_scorer("toxicity", judge, mode="direct"))
    assert load_calibration(tmp_path / "cal.json").maps == {"toxicity": fitted}
    assert fitted.fit["ece_after"]["value"] < fitted.fit["ece_before"]["value"]  # 0.95 / 0.05 overconfident
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## Calibration maps" in markdown and "5 stratified folds" in markdown
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["calibration_maps"][0]["a"] == fitted.a and data["files"]["calibration"] == str(tmp_path / "cal.json")


def test_run_bench_without_prob_scores_writes_no_file(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    labels = [i % 2 for i in range(10)]
    bench = custom_benchmark(labeled_file(tmp_path, [0.5] * 10, labels), scorer="toxicity")
    with pytest.raises(ValueError, match="no calibration written .*no label probabilities"):
        run_bench(fake_judge(), [bench], out_dir=tmp_path / "out", mode="direct", n_boot=20,
                  fit_calibration=tmp_path / "cal.json")
    assert not (tmp_path / "cal.json").exists() and (tmp_path / "out" / "report.md").exists()
