"""docs/python-api.md's calibration example (issue 48), run as the docs' tests run it (the page's
blocks in order, tests/unit/test_docs.py) but on a judge whose direct toxicity verdict has a known
P(yes), so each documented way to apply a calibration file is checked to the digit: an `evaluate`
result (`apply_calibration`), row dicts (`calibrate_rows`) and one `ScoreResult` (a map from
`check_calibration`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.bench.platt import fit_platt, platt
from localjudge.judge import Generation
from localjudge.scorers import SCORERS
from tests.conftest import ROOT
from tests.fakes import make_fake_judge, stand_in_engine
from tests.unit.test_docs import NEEDS_GPU, NEEDS_RAY, python_blocks

PAGE = ROOT / "docs" / "python-api.md"
# the prob scores and labels the page fits its map on
PROBS = [0.97, 0.91, 0.88, 0.35, 0.93, 0.62, 0.12, 0.81, 0.05, 0.2, 0.09, 0.74]
LABELS = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
P_YES = 0.3  # the judge's P(yes) on every direct verdict


def test_the_documented_calibration_example_adds_the_maps_probability(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    judge = make_fake_judge(DirectVerdict=Generation(json.dumps({"verdict": "no", "reason": "r"}),
                                                     label_probs=({"yes": P_YES, "no": 1 - P_YES},)))
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(SCORERS))
    stand_in_engine(monkeypatch, lambda *args, **kwargs: judge)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_python_api", "judge": judge}
    blocks = [b for b in python_blocks(PAGE) if b.marker not in (NEEDS_GPU, NEEDS_RAY)]
    last = next(i for i, b in enumerate(blocks) if "load_calibration(" in b.code)
    for block in blocks[:last + 1]:
        exec(compile(block.code, f"{PAGE.name}:{block.line}", "exec", dont_inherit=True), namespace)  # noqa: S102
    a, b = fit_platt(PROBS, LABELS)
    fitted = namespace["fitted"]
    assert (fitted.a, fitted.b) == pytest.approx((a, b), abs=1e-9)  # type: ignore[attr-defined]
    assert a > 0 and (tmp_path / "toxicity-cal.json").is_file()
    want = pytest.approx(float(platt([P_YES], a, b)[0]), abs=1e-4)
    assert namespace["ev"].dataset["toxicity_calibrated_prob"] == [want]  # type: ignore[attr-defined]
    assert namespace["calibrated"] == [{"toxicity_prob_score": 0.9,
                                        "toxicity_calibrated_prob": pytest.approx(float(platt([0.9], a, b)[0]),
                                                                                  abs=1e-4)}]
    assert namespace["chance"] == want
