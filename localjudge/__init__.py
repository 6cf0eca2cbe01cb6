"""localjudge: offline LLM-as-judge scorers on locally stored models.

Importing the package is light: torch, transformers and outlines load only when a
`TransformersJudge` is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localjudge.judge import FakeJudge, Generation, Judge, UnscriptedCallError
from localjudge.result import ScoreResult
from localjudge.runs import InvalidRunError, Sample
from localjudge.scorer import Scorer, UnscorableError
from localjudge.scorers import SCORERS, faithfulness_scorer, hallucination_scorer, toxicity_scorer

if TYPE_CHECKING:
    from localjudge.transformers_judge import TransformersJudge

__version__ = "0.1.0"

__all__ = [
    "SCORERS",
    "FakeJudge",
    "Generation",
    "InvalidRunError",
    "Judge",
    "ScoreResult",
    "Sample",
    "Scorer",
    "TransformersJudge",
    "UnscorableError",
    "UnscriptedCallError",
    "faithfulness_scorer",
    "hallucination_scorer",
    "toxicity_scorer",
]


def __getattr__(name: str) -> Any:
    if name == "TransformersJudge":  # heavy: torch, transformers, outlines
        from localjudge.transformers_judge import TransformersJudge

        return TransformersJudge
    raise AttributeError(f"module 'localjudge' has no attribute {name!r}")
