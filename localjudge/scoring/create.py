"""`create_scorer`: a scorer started Mastra's way, its steps added one call at a time
(``create_scorer(...).preprocess(...).analyze(...).generate_score(...).generate_reason(...)``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scoring.compat import AS_RETURNED, Compat, MastraNumbers, ScoreReturns, check_compat
from localjudge.scoring.scorer import Scorer, no_shortcut
from localjudge.scoring.steps import ContextArg, Results, Shortcut


def create_scorer(
    name: str,
    *,
    judge: Judge | None = None,
    instructions: str = "",
    description: str = "",
    version: str = "v1",
    scale: float = 1.0,
    id: str = "",
    needs_context: bool = False,
    requires: Sequence[str] = (),
    context: ContextArg = None,
    get_context: Callable[..., Any] | None = None,
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None,
    shortcut: Callable[[Sample, Results], Shortcut | None] | None = None,
    prob_score: Callable[[Results, Mapping[str, Any]], float | None] | None = None,
    positive: str = "positive",
    higher_is_better: bool | None = None,
    score_returns: ScoreReturns | None = None,
    prepare_run: Callable[[Mapping[str, Any]], Any] | None = None,
    compat: str = "localjudge",
    mastra_numbers: MastraNumbers = AS_RETURNED,
) -> Scorer:
    """Start a scorer, Mastra's way: ``create_scorer(...).preprocess(...).analyze(...)
    .generate_score(...).generate_reason(...)``; each step a function of (run, results) or a
    `JudgeStep` (see `localjudge.scoring.steps`). Only `generate_score` is required.

    Args:
        name: Registry name and column prefix (``<name>_score``...).
        judge: The model for judge steps (a step may name its own).
        instructions: System message of judge steps that give none.
        description: What it measures.
        version: A readable label for reports (result keys use `prompt_hash`).
        scale: Scores lie in [0, scale] (see `Scorer.scale`).
        id: Mastra's id (default ``"<name>-scorer"``).
        needs_context: Reject runs without context before any model call.
        requires: Other `Sample` fields a run must carry (see `Scorer.requires`).
        context, get_context, fallback_context: Where context comes from (see `Scorer`).
        shortcut: A rule deciding a run without the judge: ``shortcut(run, results)`` returns
            (fraction, reason) or None; called before each step (an empty output, no claims).
        prob_score: A score from the label probabilities the backend measured at the analyze
            step's verdicts (see `Scorer.prob_score_fn`).
        positive, higher_is_better: What a high score means, and its direction (see `Scorer`).
        score_returns: How `generate_score`'s number is read: ``"fraction"`` (in [0, 1], times
            `scale`) or ``"score"`` (the score itself, any finite number: Mastra's contract). By
            default ``"fraction"``, but ``"score"`` under ``compat="mastra"`` where the scorer's
            `mastra_numbers` are createScorer's own (`AS_RETURNED`): a Mastra scorer ported as
            written (``generateScore(() => 4)``) scores 4. A built-in factory declares its own.
        prepare_run: Rewrites each run before anything reads it (Mastra's ``prepareRun``).
        compat: ``"localjudge"`` (the default) or ``"mastra"``: score as Mastra 1.10.2 does, by
            `mastra_numbers` (part of the scorer's key).
        mastra_numbers: How Mastra makes this scorer's score (`MastraNumbers`: rounding, how it
            reads `scale`, NaN); the default is Mastra's ``createScorer``'s own rule, the number
            as it is. A built-in factory declares its own.
    """
    setting = Compat(check_compat(compat), mastra_numbers)
    return Scorer(name=name, judge=judge, instructions=instructions, description=description, version=version,
                  scale=scale, id=id, needs_context=needs_context, requires=tuple(requires), context=context,
                  get_context=get_context,
                  fallback_context=fallback_context, shortcut=shortcut or no_shortcut, prob_score_fn=prob_score,
                  positive=positive, higher_is_better=higher_is_better,
                  score_returns=score_returns or _default_returns(setting),
                  prepare_run=prepare_run, compat=setting)


def _default_returns(setting: Compat) -> ScoreReturns:
    """`create_scorer`'s `score_returns` when none is given: Mastra's score contract (the number
    is the score, as returned) under ``compat="mastra"`` for createScorer's own numbers."""
    return "score" if setting.mastra and setting.numbers == AS_RETURNED else "fraction"


__all__ = ["create_scorer"]
