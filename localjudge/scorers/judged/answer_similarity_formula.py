"""Answer similarity's formula, Mastra's: the match points over the best possible, less the
contradiction and (capped) extra-information penalties, with Mastra's options (`Weights`) and
their check (`check_weight`). `localjudge.scorers.judged.answer_similarity` scores with it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

EXTRA_CAP = 0.2  # Mastra's fixed cap on the extra-information penalty (not an option)


class Weights(NamedTuple):
    """Mastra's options for the formula, with its defaults."""

    semantic_threshold: float = 0.8
    exact_match_bonus: float = 0.2
    missing_penalty: float = 0.15
    contradiction_penalty: float = 1.0  # Mastra's comment says 0.3; its default value is 1.0
    extra_info_penalty: float = 0.05

    def points(self, match_type: str) -> float:
        """What one reference statement's match adds to the sum."""
        return {"exact": 1.0 + self.exact_match_bonus, "semantic": self.semantic_threshold,
                "partial": self.semantic_threshold * 0.5, "missing": -self.missing_penalty}[match_type]


def similarity(points: float, units: int, contradictions: float, extras: float, weights: Weights) -> float:
    """Mastra's score as a fraction: the match points over the best possible, less the
    contradiction and (capped) extra-information penalties, clamped to [0, 1]; 0 without units."""
    if units == 0:
        return 0.0
    score = points / (units * (1.0 + weights.exact_match_bonus))
    score -= contradictions * weights.contradiction_penalty
    score -= min(extras * weights.extra_info_penalty, EXTRA_CAP)
    return max(0.0, min(1.0, score))


def check_weight(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number of at least 0, got {value!r}")
    return float(value)
