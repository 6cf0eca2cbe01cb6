"""A short bench on the real SmolLM2-135M: plumbing, not accuracy."""

from __future__ import annotations

import json
from pathlib import Path

from localjudge.bench.run import run_bench


def test_short_real_bench(real_judge, tmp_path: Path) -> None:
    report = run_bench(real_judge, ["toxigen"], limit=4, batch_size=4, out_dir=tmp_path, n_boot=50)
    (result,) = report.results
    assert (result.benchmark, result.scorer, result.rows, result.positives) == ("toxigen", "toxicity", 4, 2)
    assert (result.scored, result.unscored) == (4, 0), result.errors  # every row scored
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["identity"]["judge"] == real_judge.identity
    assert (tmp_path / "report.md").read_text().count("toxigen") >= 1
    assert (tmp_path / "toxigen-roc.png").exists()
