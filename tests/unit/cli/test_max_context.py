"""`--max-context` and a sweep model's `max_context` reach the judge's loader; bad values and
unknown keys are refused (what the engine makes of the limit: tests/engines/test_context_window.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from localjudge import FakeJudge
from localjudge.cli import build_parser, model_flags, shared
from localjudge.cli.sweep_config import load_config
from tests.fakes import stand_in_engine


def test_max_context_reaches_the_judge_from_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    stand_in_engine(monkeypatch, lambda path, **kwargs: seen.update(kwargs) or FakeJudge({}))
    args = build_parser().parse_args(["score", "--model", "m", "--scorer", "toxicity", "--data", "d.jsonl",
                                          "--max-context", "4096"])
    model_flags.build_judge(args)
    assert seen["max_context"] == 4096
    with pytest.raises(ValueError, match="--max-context must be at least 1"):
        shared.check_numbers(argparse.Namespace(**{**vars(args), "max_context": 0}))


def test_sweep_model_entries_take_max_context_and_refuse_unknown_keys(tmp_path: Path) -> None:
    config = tmp_path / "sweep.yaml"
    body = "scorers: [toxicity]\ndatasets: [{path: d.jsonl}]\nmodels: [{path: m, %s}]\n"
    config.write_text(body % "max_context: 4096")
    assert load_config(config)["models"][0]["max_context"] == 4096
    config.write_text(body % "max_ctx: 4096")
    with pytest.raises(ValueError, match=r"unknown keys \['max_ctx'\]"):
        load_config(config)
