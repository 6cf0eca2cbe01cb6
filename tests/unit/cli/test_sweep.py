"""`localjudge sweep`: its config (`localjudge.cli.sweep_config.load_config`) in TOML without tomllib is a
clear error, and every scorer entry writes its own file (issue 34, item 9: named by what differs,
today's name where nothing collides; collisions refused before any model loads). Model entries:
tests/unit/cli/test_max_context.py, tests/unit/engines/test_choice.py."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_toml_sweep_without_tomllib_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    """Python 3.10 has no tomllib: a TOML sweep says what to do instead of a traceback."""
    import sys

    from localjudge.cli.sweep_config import load_config

    config = tmp_path / "sweep.toml"
    config.write_text('out_dir = "x"\n')
    monkeypatch.setitem(sys.modules, "tomllib", None)  # import tomllib now raises ImportError
    monkeypatch.setitem(sys.modules, "tomli", None)
    with pytest.raises(ValueError, match="needs Python 3.11\\+ or `pip install tomli`"):
        load_config(config)


def cells(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "sweep" / "m" / "d").glob("*.jsonl"))


def test_entries_of_one_scorer_and_mode_get_a_file_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34, item 9: two rubrics with different criteria (an entry's own `options`) and two
    toxicity scales each write their own file, named by what differs, with their own results;
    an entry no other shares keeps today's name (an existing sweep resumes, nothing rescored)."""
    import json

    from localjudge.cli.main import main
    from tests.fakes import stand_in_engine
    from tests.unit.cli.test_scorer_options import Loaded, sweep_config

    stand_in_engine(monkeypatch, Loaded.load)
    body = ("scorers: [toxicity, {name: toxicity, scale: 10}, hallucination, {name: hallucination, mode: direct},\n"
            "  {name: rubric, options: {criteria: [Names the shop.]}},\n"
            "  {name: rubric, options: {criteria: [Is short.]}}]")
    assert main(["--quiet", "sweep", str(sweep_config(tmp_path, body))]) == 0
    assert cells(tmp_path) == ["hallucination-direct.jsonl", "hallucination.jsonl", "rubric-criteria-0b8e6429.jsonl",
                               "rubric-criteria-a9e718e3.jsonl", "toxicity-scale-1.jsonl", "toxicity-scale-10.jsonl"]
    folder = tmp_path / "sweep" / "m" / "d"
    shop = [json.loads(line)["rubric_reason"] for line in (folder / "rubric-criteria-0b8e6429.jsonl").open()]
    short = [json.loads(line)["rubric_reason"] for line in (folder / "rubric-criteria-a9e718e3.jsonl").open()]
    assert all("Names the shop." in r for r in shop) and all("Is short." in r and "shop" not in r for r in short)
    assert {json.loads(line)["toxicity_score"] for line in (folder / "toxicity-scale-10.jsonl").open()} <= {0.0, 10.0}


@pytest.mark.parametrize(("body", "message"), [
    ("scorers: [toxicity, toxicity]", "scorer entries 'toxicity' and 'toxicity' are the same scorer, mode, scale and "
                                      "options: they would write one file (toxicity.jsonl)"),
    ("scorers: [{name: rubric, options: {criteria: [A.]}}, {name: rubric, options: {criteria: [A.]}, scale: 1}]",
     "are the same scorer, mode, scale and options"),
    ("scorers: [toxicity]\ndatasets: [{path: a/rows.jsonl}, {path: b/rows.jsonl}]", "would write one file"),
])
def test_a_sweep_whose_cells_collide_is_refused_before_any_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str], body: str,
                                                                message: str) -> None:
    from localjudge.cli.main import main
    from tests.fakes import stand_in_engine
    from tests.unit.cli.test_scorer_options import Loaded

    stand_in_engine(monkeypatch, Loaded.load)
    Loaded.loads = []
    config = tmp_path / "sweep.yaml"
    config.write_text(f"out_dir: {tmp_path / 'sweep'}\nmodels: [{{name: m, path: m}}]\n" +
                      ("" if "datasets" in body else "datasets: [{name: d, path: rows.jsonl}]\n") + body + "\n")
    assert main(["sweep", str(config)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert Loaded.loads == [] and not (tmp_path / "sweep").exists()
