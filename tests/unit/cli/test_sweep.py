"""`localjudge sweep`'s config (`localjudge.cli.sweep.load_config`) in TOML without tomllib is a
clear error (model entries: tests/unit/cli/test_max_context.py, tests/unit/engines/test_choice.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_toml_sweep_without_tomllib_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    """Python 3.10 has no tomllib: a TOML sweep says what to do instead of a traceback."""
    import sys

    from localjudge.cli.sweep import load_config

    config = tmp_path / "sweep.toml"
    config.write_text('out_dir = "x"\n')
    monkeypatch.setitem(sys.modules, "tomllib", None)  # import tomllib now raises ImportError
    monkeypatch.setitem(sys.modules, "tomli", None)
    with pytest.raises(ValueError, match="needs Python 3.11\\+ or `pip install tomli`"):
        load_config(config)
