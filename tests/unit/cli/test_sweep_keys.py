"""A sweep config's keys are checked at every level (issue 57 N9): a misspelt top-level key
(`compt: mastra`, `batch_sise: 1`) was silently ignored, so the sweep ran with the default;
each is now one line naming the known keys, as model, dataset and scorer entries already were."""

from __future__ import annotations

from pathlib import Path

import pytest

from localjudge.cli.main import main
from localjudge.cli.sweep_config import load_config

BASE = "models: [{path: models/m}]\nscorers: [toxicity]\ndatasets: [{path: data.jsonl}]\n"


@pytest.mark.parametrize(("extra", "said"), [
    ("compt: mastra\n", "unknown key(s) 'compt' (known: batch_size, compat,"),
    ("batch_sise: 1\n", "unknown key(s) 'batch_sise'"),
    ("scorer_option: {rubric: {criteria: [a]}}\n", "unknown key(s) 'scorer_option'"),
    ("batch_size: 0\n", "batch_size must be a whole number from 1"),
    ("batch_size: '8'\n", "batch_size must be a whole number from 1"),
    ("batch_size: 1e400\n", "batch_size must be a whole number from 1"),
    ("out_dir: [a]\n", "out_dir must be a folder's path"),
])
def test_a_misspelt_or_bad_top_level_key_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     extra: str, said: str) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(BASE + extra, encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_config(path)
    assert said in str(error.value) and "\n" not in str(error.value)
    assert main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err


@pytest.mark.parametrize(("datasets", "said"), [
    ("[{path: data.jsonl, batch_size: -3}]", "dataset entry {'path': 'data.jsonl', 'batch_size': -3}: batch_size"),
    ("[{path: data.jsonl, limit: 2.5}]", "limit must be a whole number from 0"),
    ("[{path: data.jsonl, scorers: [toxcity]}]", "'scorers' must list names of 'scorers' (toxicity)"),
])
def test_dataset_entries_are_checked_too(tmp_path: Path, datasets: str, said: str) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(BASE.replace("[{path: data.jsonl}]", datasets), encoding="utf-8")
    with pytest.raises(ValueError, match="") as error:
        load_config(path)
    assert said in str(error.value)


def test_a_good_config_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(BASE + "compat: mastra\nbatch_size: 4\nout_dir: out\n", encoding="utf-8")
    config = load_config(path)
    assert config["compat"] == "mastra" and config["batch_size"] == 4
