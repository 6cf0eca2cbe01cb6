"""`--compat mastra` on `localjudge score`, `compat` in a sweep's config, and the plugin's
`--localjudge-compat`: Mastra 1.10.2's numbers on request; a bad value is a one-line error."""

from __future__ import annotations

import json

import pytest

from tests.fakes import FakeJudgeFactory, stand_in_engine

pytest_plugins = ["pytester"]


def test_score_takes_compat(tmp_path, monkeypatch, fake_judge: FakeJudgeFactory, capsys) -> None:
    from localjudge.cli import model_flags
    from localjudge.cli.main import main

    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    data.write_text('{"input": "q", "output": ""}\n', encoding="utf-8")  # toxicity: 0 here, 1 in Mastra
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge())
    argv = ["--quiet", "score", "--model", "m", "--scorer", "toxicity", "--data", str(data), "--out", str(out)]
    assert main(argv) == 0
    assert json.loads(out.read_text())["toxicity_score"] == 0
    assert main([*argv, "--compat", "mastra"]) == 0  # the same --out: scored again, not resumed
    assert json.loads(out.read_text())["toxicity_score"] == 1
    assert main([*argv, "--compat", "mastra", "--scale", "0"]) == 0  # Mastra reads toxicity's 0 as 1
    assert main([*argv, "--scale", "0"]) == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--compat", "js"])
    assert exited.value.code == 2
    assert "argument --compat: invalid choice: 'js'" in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_sweep_takes_compat(tmp_path, monkeypatch, fake_judge: FakeJudgeFactory) -> None:
    from localjudge.cli.main import main

    data = tmp_path / "rows.jsonl"
    data.write_text('{"input": "q", "output": ""}\n', encoding="utf-8")

    stand_in_engine(monkeypatch, lambda path, **kwargs: fake_judge())  # the sweep loads its models itself
    config = tmp_path / "sweep.yaml"
    config.write_text(f"out_dir: {tmp_path / 'sweep'}\ncompat: mastra\nmodels: [{{name: m, path: m}}]\n"
                      f"scorers: [toxicity, {{name: toxicity, compat: localjudge}}]\n"
                      f"datasets: [{{name: d, path: {data}}}]\n")
    assert main(["--quiet", "sweep", str(config)]) == 0
    folder = tmp_path / "sweep" / "m" / "d"
    cells = {p.name: json.loads(p.read_text())["toxicity_score"] for p in folder.glob("*.jsonl")}
    assert cells == {"toxicity-compat-mastra.jsonl": 1, "toxicity-compat-localjudge.jsonl": 0}
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.read_text().replace("compat: mastra", "compat: js"))
    assert main(["--quiet", "sweep", str(bad)]) == 2  # refused before any model loads


def test_the_plugin_gives_the_compat_setting(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="def test_compat(localjudge_compat):\n    assert localjudge_compat == 'mastra'\n")
    assert pytester.runpytest("--localjudge-compat", "mastra").ret == 0
    assert pytester.runpytest().ret == 1  # the default: "localjudge"
    result = pytester.runpytest("--localjudge-compat", "js")
    assert result.ret == 4 and "invalid choice: 'js'" in result.stderr.str()


def test_a_nan_score_is_written_and_summarised(tmp_path, monkeypatch, fake_judge: FakeJudgeFactory, capsys) -> None:
    """Mastra's NaN (answer relevancy's options without the weight, an unsure verdict) goes through
    the CLI: "NaN" in the JSONL output, nan in the printed summary, exit 0."""
    from localjudge.cli import model_flags
    from localjudge.cli.main import main
    from tests.fakes import toxicity_statements

    unsure = {"RelevancyVerdicts": lambda prompt: {"verdicts": [{"verdict": "unsure", "reason": "r"}] * len(
        toxicity_statements(prompt))}}
    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    data.write_text('{"input": "Where is Paris?", "output": "In France. It is big."}\n', encoding="utf-8")
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge(unsure))
    assert main(["--quiet", "score", "--model", "m", "--scorer", "answer_relevancy", "--data", str(data), "--out",
                 str(out), "--compat", "mastra", "--scorer-option", "answer_relevancy.uncertainty_weight=null"]) == 0
    assert json.loads(out.read_text())["answer_relevancy_score"] == "NaN"
    assert "nan" in capsys.readouterr().out.lower()
