"""Direct mode: one yes/no question about the whole output, in one judge step.

Every built-in scorer takes ``mode="direct"``: instead of its pipeline (claims, one verdict per
claim or statement, then a reason step) the judge answers one question about the whole output,
``{"verdict": "yes" | "no", "reason": ...}``, verdict first, so its label probability is read
before any reason is written. ``yes`` is the scorer's positive class (hallucinated, faithful,
toxic). Score: `scale` for ``yes``, 0 for ``no``; prob score: the probability of ``yes`` x scale.
The reason is the verdict's own. One step instead of three, so it is far cheaper; what it gives
up is the pipeline's per-claim breakdown and its graded score (see the README for when to use
which). The same shortcuts apply (an empty output is decided without the judge).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.verdicts import mean_label_prob
from localjudge.scoring import (
    DATA_NOTE,
    MODES,
    Build,
    ContextArg,
    JudgeStep,
    Mode,
    ReasonText,
    Results,
    Scorer,
    Shortcut,
    Strict,
    block,
    check_mode,
    create_scorer,
)


class DirectVerdict(Strict):
    """The direct step's answer: the verdict on the whole output, then why."""

    verdict: Literal["yes", "no"]
    reason: ReasonText


class Question(NamedTuple):
    """What a scorer asks in direct mode.

    Attributes:
        rules: The system message's middle: what ``yes`` and ``no`` mean.
        ask: The question closing the user message (``"Is the response hallucinated?"``).
        show_context: Whether the prompt shows the context (claim scorers) or not (toxicity).
    """

    rules: str
    ask: str
    show_context: bool


def direct_prompt(question: Question, run: Sample) -> str:
    """User message: the input (if any), the context (if shown), the response, the question."""
    shown = [block("INPUT", run.input)] if run.input.strip() else []
    if question.show_context:
        shown.append(block("CONTEXT", "\n".join(run.context or ())))
    shown.append(block("RESPONSE", run.output))
    return "\n".join([*shown, f"{question.ask} Answer yes or no, then give a short reason."])


def direct_scorer(
    name: str,
    judge: Judge,
    build: Build,
    *,
    version: str,
    question: Question,
    positive: str,
    higher_is_better: bool,
    if_empty: Shortcut,
    context: ContextArg = None,
    get_context: Callable[..., Any] | None = None,
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None,
) -> Scorer:
    """A one-step scorer: the judge's yes/no on the whole output (see the module docstring).

    Args:
        build: The named scorer's scale, setting and Mastra numbers (`Build`).
        version: The readable prompt label (``"hallucination-direct-v1"``).
        question: What is asked, and whether the context is shown (and so required).
        positive, higher_is_better: What ``yes`` (a high score) means, and the direction.
        if_empty: (fraction, reason) for an empty output.
    """
    instructions = (f"You answer one question about a response, with a verdict and a short reason.\n"
                    f"{question.rules}\nThe reason says what in the response decides the verdict"
                    f"{' and what the context says about it' if question.show_context else ''}.\n{DATA_NOTE}")

    def shortcut(run: Sample, results: Results) -> Shortcut | None:
        return if_empty if not run.output.strip() else None

    step = JudgeStep(instructions=instructions, prompt=lambda run, results: direct_prompt(question, run),
                     schema=DirectVerdict)
    return one_question_scorer(name, judge, step, build, version=version, positive=positive,
                               higher_is_better=higher_is_better, needs_context=question.show_context,
                               context=context, get_context=get_context, fallback_context=fallback_context,
                               shortcut=shortcut)


def verdict_score(run: Sample, results: Results) -> float:
    """A one-question scorer's score: 1 for ``yes``, 0 for ``no``."""
    return 1.0 if results["analyze_step_result"]["verdict"] == "yes" else 0.0


def verdict_prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
    """A one-question scorer's prob score: P(``yes``) at its verdict."""
    return mean_label_prob(label_probs["analyze"], "yes", 1)


def verdict_reason(run: Sample, results: Results) -> str:
    """A one-question scorer's reason: the verdict's own."""
    return str(results["analyze_step_result"]["reason"])


def one_question_scorer(name: str, judge: Judge, step: JudgeStep, build: Build, *, version: str, positive: str,
                        higher_is_better: bool, **options: Any) -> Scorer:
    """A scorer of one judge step answering `DirectVerdict` (yes/no, then why): the scale for
    ``yes``, P(``yes``) as its prob score, the verdict's reason as its reason. The direct modes
    are built with it; `step` shows what the scorer needs (a reference, a source, tool calls),
    `build` its scale and setting, and `options` go to `create_scorer` (``requires=``,
    ``shortcut=``, ``context=``...)."""
    return (
        create_scorer(name, judge=judge, version=version, prob_score=verdict_prob_score, positive=positive,
                      higher_is_better=higher_is_better, **build.create_keywords(), **options)
        .analyze(step)
        .generate_score(verdict_score)
        .generate_reason(verdict_reason)
    )


__all__ = ["MODES", "DirectVerdict", "Mode", "Question", "check_mode", "direct_prompt", "direct_scorer",
           "one_question_scorer", "verdict_prob_score", "verdict_reason", "verdict_score"]
