"""The scorers, one file each, and the registry that names them for the CLI and `evaluate`."""

from __future__ import annotations

from collections.abc import Callable

from localjudge.scorer import Scorer
from localjudge.scorers.faithfulness import faithfulness_scorer
from localjudge.scorers.hallucination import hallucination_scorer
from localjudge.scorers.toxicity import toxicity_scorer

SCORERS: dict[str, Callable[..., Scorer]] = {
    "hallucination": hallucination_scorer,
    "faithfulness": faithfulness_scorer,
    "toxicity": toxicity_scorer,
}


def get_scorer_factory(name: str) -> Callable[..., Scorer]:
    """The factory registered under `name`; a clear error for unknown names."""
    try:
        return SCORERS[name]
    except KeyError:
        raise ValueError(f"unknown scorer {name!r}; known scorers: {', '.join(sorted(SCORERS))}") from None


__all__ = ["SCORERS", "faithfulness_scorer", "get_scorer_factory", "hallucination_scorer", "toxicity_scorer"]
