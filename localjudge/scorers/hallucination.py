"""Hallucination: the share of the output's claims that the context does not back.

Inputs: `output` (judged) and `context` (required: run field, `context=` or `get_context=`).
Steps: preprocess extracts the output's claims; analyze gives one verdict per claim, where
``yes`` means hallucinated (contradicted by, or not supported by, the context).
Score: hallucinated claims / claims x scale. Lower is better. Empty output or no claims -> 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.prompting import DATA_NOTE
from localjudge.runs import Sample
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

VERSION = "hallucination-v2"


class HallucinationVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: text(REASON_CHARS)  # type: ignore[valid-type]


class HallucinationVerdicts(Strict):
    verdicts: list[HallucinationVerdict]


ANALYZE_SYSTEM = f"""You check whether claims are hallucinated, judging only by the given context.
For each claim answer verdict "yes" (hallucinated) or "no" (not hallucinated), then a short reason.
- "yes": the claim contradicts the context, or the context does not support it.
- "no": the context supports the claim.
- Subjective claims are "yes" unless the context supports them.
- Speculative wording ("may", "probably") about facts the context states is fine: "no".
- Judge approximate numbers with the precision their scale suggests.
Give exactly one verdict per claim, in the claims' order.
{DATA_NOTE}"""

ANALYZE_EXAMPLE = (
    claim_check_prompt(
        "The Eiffel Tower in Paris was completed in 1889 and is 330 metres tall.",
        ["The Eiffel Tower is in Paris.", "It was completed in 1925.", "It is about 330 metres tall.",
         "It is the most visited monument in the world."],
        "Tell me about the Eiffel Tower.",
    ),
    '{"verdicts":[{"verdict":"no","reason":"Paris is stated."},{"verdict":"yes","reason":"1889, not 1925."},'
    '{"verdict":"no","reason":"Matches 330 metres."},{"verdict":"yes","reason":"Visitors are not mentioned."}]}',
)


def _verdicts_schema(sample: Sample, state: State) -> type[Strict]:
    return exactly(HallucinationVerdict, len(claims_of(state)), HallucinationVerdicts)  # type: ignore[return-value]


ANALYZE_STEP = LLMStep(
    system=ANALYZE_SYSTEM,
    render=render_claim_check,
    schema=_verdicts_schema,
    finish=attach_claims("statement"),
    examples=(ANALYZE_EXAMPLE,),
)


def shortcut(sample: Sample, state: State) -> Shortcut | None:
    if not sample.output.strip():
        return 0.0, "The output is empty, so it makes no claims that could be hallucinated."
    if "preprocess" in state and not claims_of(state):
        return 0.0, "The output makes no factual claims, so none of it is hallucinated."
    return None


def score(state: State) -> float:
    """Hallucinated share of the claims (verdict ``yes``)."""
    verdicts = state["analyze"]["verdicts"]
    return sum(v["verdict"] == "yes" for v in verdicts) / len(verdicts)


def prob_score(state: State, label_probs: Mapping[str, Any]) -> float | None:
    """Mean probability the judge gave to ``yes`` (hallucinated) over the claims."""
    return mean_label_prob(label_probs["analyze"], "yes", len(state["analyze"]["verdicts"]))


def reason_prompt(sample: Sample, state: State, value: float, scale: float) -> str:
    return (
        f"Hallucination score: {value:g} on a scale from 0 to {scale:g}; lower is better. It is "
        f"the share of the output's claims that the context does not support, times {scale:g}.\n"
        f"Verdicts (yes = hallucinated):\n{verdict_lines(state['analyze']['verdicts'], 'statement')}\n"
        "Explain the score in one or two sentences."
    )


def hallucination_scorer(
    judge: Judge,
    *,
    context: ContextArg = None,
    get_context: Callable[..., Any] | None = None,
    scale: float = 1.0,
) -> Scorer:
    """Build the hallucination scorer (lower is better).

    Args:
        judge: The local model judging.
        context: Static context for every run (replaces the run's own `context` field).
        get_context: Called once per run, Mastra's way (``get_context(run=..., results=...,
            step=...)``, or with the run alone), sync or async; takes precedence over `context`.
        scale: Scores lie in [0, scale]; must be positive.
    """
    return Scorer(
        name="hallucination",
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
    )


__all__ = ["hallucination_scorer", "HallucinationVerdict", "HallucinationVerdicts"]
