"""Test tiers: the fast tier runs on the scripted FakeJudge; `slow` tests run the real model.

`pytest` runs both (CI does). `pytest -m "not slow"` runs the fast tier alone, in seconds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "models" / "smollm2-135m-instruct"

os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")  # no kernel compile warm-up in tests


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The default model's directory; fails (never skips) when it has not been set up."""
    if not (DEFAULT_MODEL / "model.safetensors").exists():
        pytest.fail(f"{DEFAULT_MODEL} is missing: run `python scripts/get_default_model.py` first")
    return DEFAULT_MODEL


@pytest.fixture(scope="session")
def real_judge(model_dir: Path):  # type: ignore[no-untyped-def]
    """The real SmolLM2-135M judge, loaded once per test session."""
    from localjudge.transformers_judge import TransformersJudge

    return TransformersJudge(model_dir)
