"""The scorers, one file each, and the registry that names them for the CLI, `bench` and sweeps.

A new scorer is one file here plus one line in `SCORERS` (or, from outside the package, one
`register_scorer` call): everything else (CLI flags, benchmarks, baselines, reports) reads the
scorer's own facts (`positive`, `higher_is_better`, `shown_fields`, `needs_context`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from localjudge.judge import Judge
from localjudge.scorer import Scorer
from localjudge.scorers.answer_relevancy import answer_relevancy_scorer
from localjudge.scorers.bias import bias_scorer
from localjudge.scorers.context_precision import context_precision_scorer
from localjudge.scorers.direct import check_mode
from localjudge.scorers.faithfulness import faithfulness_scorer
from localjudge.scorers.hallucination import hallucination_scorer
from localjudge.scorers.rubric import rubric_scorer
from localjudge.scorers.toxicity import toxicity_scorer

SCORERS: dict[str, Callable[..., Scorer]] = {
    "hallucination": hallucination_scorer,
    "faithfulness": faithfulness_scorer,
    "toxicity": toxicity_scorer,
    "answer_relevancy": answer_relevancy_scorer,
    "bias": bias_scorer,
    "context_precision": context_precision_scorer,
}


def register_scorer(name: str, factory: Callable[..., Scorer]) -> None:
    """Make a scorer factory (``factory(judge, scale=...) -> Scorer``) known by `name` to the CLI,
    `bench` and sweeps; a name already taken is an error."""
    if name in SCORERS:
        raise ValueError(f"a scorer named {name!r} is already registered")
    SCORERS[name] = factory


def get_scorer_factory(name: str) -> Callable[..., Scorer]:
    """The factory registered under `name`; a clear error for unknown names."""
    try:
        return SCORERS[name]
    except KeyError:
        raise ValueError(f"unknown scorer {name!r}; known scorers: {', '.join(sorted(SCORERS))}") from None


def build_scorer(name: str, judge: Judge, *, scale: float = 1.0, mode: str = "pipeline") -> Scorer:
    """The scorer registered as `name`, on `judge`. `mode` (``"pipeline"`` or ``"direct"``, see
    `localjudge.scorers.direct`) is passed only when it is not the default, so a registered
    factory without a `mode` parameter still builds; asked for a direct mode it has not, it is
    a clear error."""
    factory = get_scorer_factory(name)
    if check_mode(mode) == "pipeline":
        return factory(judge, scale=scale)
    if "mode" not in inspect.signature(factory).parameters:
        raise ValueError(f"scorer {name!r} has no mode parameter, so no direct mode")
    return factory(judge, scale=scale, mode=mode)


__all__ = ["SCORERS", "answer_relevancy_scorer", "bias_scorer", "build_scorer", "context_precision_scorer",
           "faithfulness_scorer", "get_scorer_factory", "hallucination_scorer", "register_scorer", "rubric_scorer",
           "toxicity_scorer"]
