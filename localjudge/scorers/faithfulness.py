"""Faithfulness: the share of the output's claims that the context supports.

Inputs: `output` (judged) and `context` (required: run field, `context=` or `get_context=`).
Steps: preprocess extracts the output's claims; analyze gives one verdict per claim: ``yes``
(supported), ``no`` (contradicted) or ``unsure`` (cannot be verified from the context).
Score: supported claims / claims x scale. Higher is better; ``unsure`` counts as not supported.
An output with no claims scores `scale` (nothing in it is unfaithful).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.prompting import DATA_NOTE
from localjudge.runs import Sample, tool_result_context
from localjudge.schemas import REASON_CHARS, Strict, exactly, text
from localjudge.scorer import ContextArg, LLMStep, Scorer, Shortcut, State
from localjudge.scorers.claims import (
    CLAIMS_STEP,
    attach_claims,
    claim_check_prompt,
    claims_of,
    render_claim_check,
)
from localjudge.scorers.verdicts import mean_label_prob, verdict_lines

VERSION = "faithfulness-v2"


class FaithfulnessVerdict(Strict):
    verdict: Literal["yes", "no", "unsure"]
    reason: text(REASON_CHARS)  # type: ignore[valid-type]


class FaithfulnessVerdicts(Strict):
    verdicts: list[FaithfulnessVerdict]


ANALYZE_SYSTEM = f"""You check whether each claim is supported by the given context, and only by it.
For each claim answer verdict "yes", "no" or "unsure", then a short reason.
- "yes": the context supports the claim.
- "no": the context contradicts the claim.
- "unsure": the context neither supports nor contradicts it.
Do not use your own knowledge. Give exactly one verdict per claim, in the claims' order.
{DATA_NOTE}"""

ANALYZE_EXAMPLE = (
    claim_check_prompt(
        "Ada Lovelace wrote the first published computer program, for Babbage's Analytical Engine, in 1843.",
        ["Ada Lovelace wrote a program for the Analytical Engine.", "She wrote it in 1853.", "She had two children."],
        "Who was Ada Lovelace?",
    ),
    '{"verdicts":[{"verdict":"yes","reason":"Stated."},{"verdict":"no","reason":"1843, not 1853."},'
    '{"verdict":"unsure","reason":"Children are not mentioned."}]}',
)


def _verdicts_schema(sample: Sample, state: State) -> type[Strict]:
    return exactly(FaithfulnessVerdict, len(claims_of(state)), FaithfulnessVerdicts)  # type: ignore[return-value]


ANALYZE_STEP = LLMStep(
    system=ANALYZE_SYSTEM,
    render=render_claim_check,
    schema=_verdicts_schema,
    finish=attach_claims("claim"),
    examples=(ANALYZE_EXAMPLE,),
)


def shortcut(sample: Sample, state: State) -> Shortcut | None:
    if not sample.output.strip():
        return 1.0, "The output is empty, so it makes no claim that could be unfaithful."
    if "preprocess" in state and not claims_of(state):
        return 1.0, "The output makes no factual claims, so nothing in it is unfaithful to the context."
    return None


def score(state: State) -> float:
    """Supported share of the claims (verdict ``yes``; ``unsure`` is not support)."""
    verdicts = state["analyze"]["verdicts"]
    return sum(v["verdict"] == "yes" for v in verdicts) / len(verdicts)


def prob_score(state: State, label_probs: Mapping[str, Any]) -> float | None:
    """Mean probability the judge gave to ``yes`` (supported) over the claims."""
    return mean_label_prob(label_probs["analyze"], "yes", len(state["analyze"]["verdicts"]))


def reason_prompt(sample: Sample, state: State, value: float, scale: float) -> str:
    return (
        f"Faithfulness score: {value:g} on a scale from 0 to {scale:g}; higher is better. It is "
        f"the share of the output's claims that the context supports, times {scale:g}.\n"
        f"Verdicts (yes = supported, no = contradicted, unsure = not verifiable):\n"
        f"{verdict_lines(state['analyze']['verdicts'], 'claim')}\n"
        "Explain the score in one or two sentences."
    )


def faithfulness_scorer(
    judge: Judge,
    *,
    context: ContextArg = None,
    get_context: Callable[..., Any] | None = None,
    scale: float = 1.0,
) -> Scorer:
    """Build the faithfulness scorer (higher is better).

    Args:
        judge: The local model judging.
        context: Static context for every run (replaces the run's own `context` field).
        get_context: Called once per run, Mastra's way (``get_context(run=..., results=...,
            step=...)``, or with the run alone), sync or async; takes precedence over `context`.
        scale: Scores lie in [0, scale]; must be positive.
    """
    return Scorer(
        name="faithfulness",
        version=VERSION,
        judge=judge,
        preprocess=CLAIMS_STEP,
        analyze=ANALYZE_STEP,
        score_fn=score,
        prob_score_fn=prob_score,
        reason_prompt=reason_prompt,
        shortcut=shortcut,
        scale=scale,
        needs_context=True,
        context=context,
        get_context=get_context,
        fallback_context=lambda run: tool_result_context(run.get("output")),
    )
