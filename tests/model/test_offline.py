"""The offline guarantee on the real model: it loads and scores with every socket connection and
DNS lookup failing (the `block_network` fixture, tests/conftest.py); the unit tier's checks are
tests/unit/test_offline.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localjudge import hallucination_scorer, toxicity_scorer
from tests.unit.test_offline import ROWS


def test_real_judge_scores_with_network_blocked(block_network: list[str], real_judge: Any) -> None:
    """Generation on the real model (loaded by the session fixture) with the network blocked."""
    for factory in (hallucination_scorer, toxicity_scorer):
        results = factory(real_judge).run_batch(ROWS)
        assert all(r.scored for r in results), [r.error for r in results]


def test_real_model_loads_with_network_blocked(block_network: list[str], model_dir: Path) -> None:
    """Loading too: a fresh TransformersJudge built after the network is blocked (the session
    fixture may have been built before this test's block)."""
    from localjudge.engines.transformers.judge import TransformersJudge

    judge = TransformersJudge.load(model_dir)
    (result,) = toxicity_scorer(judge).run_batch(ROWS[1:])
    assert result.scored or result.error
