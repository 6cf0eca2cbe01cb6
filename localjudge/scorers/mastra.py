"""How Mastra 1.10.2 reads `scale` and rounds, scorer by scorer: what `build_scorer` applies
under ``compat="mastra"`` (see `localjudge.scoring.compat`; docs/mastra-parity.md).

Mastra writes ``options?.scale || 1`` in some scorers (a scale of 0 becomes 1) and
``options.scale ?? 1`` in others (0 stays 0: every score is then 0); three LLM scorers and
every code scorer and check take no scale at all (their scores run from 0 to 1, whatever is
asked). Its multi-turn judge and rubric return ``1 x scale`` unrounded, and its code scorers
and checks their raw fraction. Anything else a scorer does differently under Mastra's numbers
is its factory's ``compat`` argument.
"""

from __future__ import annotations

from typing import NamedTuple

from localjudge.scoring import Compat, check_scale

ZERO_IS_ONE = frozenset({"hallucination", "faithfulness", "toxicity", "bias", "context_precision", "context_recall",
                         "context_relevance", "prompt_alignment"})  # options?.scale || 1
ZERO_STAYS = frozenset({"answer_relevancy", "answer_similarity", "summarization", "rubric",
                        "multi_turn_judge"})  # options.scale ?? 1
NO_SCALE = frozenset({"noise_sensitivity", "tool_call_accuracy", "trajectory_accuracy"})
UNROUNDED = frozenset({"multi_turn_judge", "rubric"})


class MastraBuild(NamedTuple):
    """How a scorer is built for Mastra's numbers: the scale its factory gets, the scale it
    keeps (0 where Mastra keeps 0), and its `Compat`."""

    build_scale: float
    scale: float
    compat: Compat


def mastra_build(name: str, scale: float, *, code: bool) -> MastraBuild:
    """`MastraBuild` for the scorer registered as `name` (`code`: a code scorer or check) asked
    for `scale`. A scale of 0 for a scorer Mastra does not have is refused as usual."""
    if code or name in NO_SCALE:  # Mastra has no scale option here: it ignores one
        return MastraBuild(1.0, 1.0, Compat("mastra", rounded=not code))
    compat = Compat("mastra", rounded=name not in UNROUNDED)
    if scale == 0 and not isinstance(scale, bool) and name in ZERO_IS_ONE | ZERO_STAYS:
        return MastraBuild(1.0, 0.0 if name in ZERO_STAYS else 1.0, compat)
    return MastraBuild(check_scale(scale), check_scale(scale), compat)


__all__ = ["NO_SCALE", "UNROUNDED", "ZERO_IS_ONE", "ZERO_STAYS", "MastraBuild", "mastra_build"]
