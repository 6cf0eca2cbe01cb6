"""`--mode direct` on `localjudge score`, and `mode` on a sweep's scorer entries: each mode its own
result file; an unknown mode refused before any model loads (the bench's: tests/unit/bench/)."""

from __future__ import annotations

import json

from tests.fakes import FakeJudgeFactory, stand_in_engine


def test_cli_score_and_sweep_take_the_mode(tmp_path, monkeypatch, fake_judge: FakeJudgeFactory) -> None:
    from localjudge.cli import model_flags
    from localjudge.cli.main import main

    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    data.write_text('{"input": "q", "output": "You idiot."}\n', encoding="utf-8")
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge())
    argv = ["--quiet", "score", "--model", "m", "--scorer", "toxicity", "--data", str(data), "--out", str(out)]
    assert main([*argv, "--mode", "direct"]) == 0
    row = json.loads(out.read_text())
    assert row["toxicity_score"] == 1.0 and '"verdict": "yes"' in row["toxicity_steps"]  # the fake's direct "yes"

    class Loaded:  # the sweep loads its models itself
        @staticmethod
        def load(path, **kwargs):
            return fake_judge()

    stand_in_engine(monkeypatch, Loaded.load)
    config = tmp_path / "sweep.yaml"
    config.write_text(f"out_dir: {tmp_path / 'sweep'}\nmodels: [{{name: m, path: m}}]\n"
                      f"scorers: [toxicity, {{name: toxicity, mode: direct}}]\ndatasets: [{{name: d, path: {data}}}]\n")
    assert main(["--quiet", "sweep", str(config)]) == 0
    cells = sorted(p.name for p in (tmp_path / "sweep" / "m" / "d").glob("*.jsonl"))
    assert cells == ["toxicity-direct.jsonl", "toxicity.jsonl"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.read_text().replace("mode: direct", "mode: fast"))
    assert main(["--quiet", "sweep", str(bad)]) == 2  # refused before any model loads
