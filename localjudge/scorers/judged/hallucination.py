"""Hallucination: the share of the output's claims that the context does not back.

Inputs: `output` (judged) and `context` (required: run field, `context=` or `get_context=`).
Steps: preprocess extracts the output's claims (a terse output, at most 4 words, is one claim
read with its question, by rule); analyze gives one verdict per claim, where
``yes`` means hallucinated (contradicted by, or not supported by, the context). The judge
answers in words, ``unsupported`` / ``supported``, mapped to Mastra's ``yes`` / ``no``: asked
for ``yes`` = hallucinated, judges answer "yes" where the context supports the claim.
Score: hallucinated claims / claims x scale. Lower is better. Empty output or no claims -> 0.
``mode="direct"``: one yes/no question on the whole output instead (see `localjudge.scorers.judged.direct`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.scorers.judged.claims import ClaimExample, claim_verdict_scorer
from localjudge.scorers.judged.direct import Question, direct_scorer
from localjudge.scoring import DATA_NOTE, Build, ContextArg, MastraNumbers, ReasonText, Scorer, Strict

VERSION = "hallucination-v6"
DIRECT_VERSION = "hallucination-direct-v1"


class HallucinationVerdict(Strict):
    """The judge's verdict on one claim, in words (the result says ``yes`` for ``unsupported``)."""

    verdict: Literal["supported", "unsupported"]
    reason: ReasonText


LABELS = {"unsupported": "yes", "supported": "no"}  # the judge's words -> Mastra's labels (yes = hallucinated)


class HallucinationVerdicts(Strict):
    verdicts: list[HallucinationVerdict]


ANALYZE_SYSTEM = f"""You check whether claims are hallucinated, judging only by the given context.
For each claim answer verdict "supported" or "unsupported", then a short reason.
- "supported": the context supports the claim.
- "unsupported": the claim contradicts the context, or the context does not support it (hallucinated).
- Subjective claims are "unsupported" unless the context supports them.
- Speculative wording ("may", "probably") about facts the context states is fine: "supported".
- Judge approximate numbers with the precision their scale suggests.
Give exactly one verdict per claim, in the claims' order.
{DATA_NOTE}"""

EXAMPLE = ClaimExample(
    question="Tell me about the Eiffel Tower.",
    context="The Eiffel Tower in Paris was completed in 1889 and is 330 metres tall.",
    claims=["The Eiffel Tower is in Paris.", "It was completed in 1925.", "It is about 330 metres tall.",
            "It is the most visited monument in the world."],
    answer='{"verdicts":[{"verdict":"supported","reason":"Paris is stated."},'
           '{"verdict":"unsupported","reason":"1889, not 1925."},'
           '{"verdict":"supported","reason":"Matches 330 metres."},'
           '{"verdict":"unsupported","reason":"Visitors are not mentioned."}]}',
    reason="Two of the four claims are not backed by the context: it says the tower was completed in 1889, not "
           "1925, and it says nothing about visitor numbers. That it is in Paris and about 330 metres tall "
           "matches the context.",
)


DIRECT = Question(
    rules='Answer "yes" (hallucinated) if the response states anything that the context contradicts or does '
          'not support, subjective claims included; "no" if the context supports everything the response '
          'states. Judge only by the context, not by your own knowledge.',
    ask="Does the response state anything that the context contradicts or does not support?",
    show_context=True,
)
IF_EMPTY = (0.0, "The output is empty, so it makes no claims that could be hallucinated.")
# createHallucinationScorer: roundToTwoDecimals, `options?.scale || 1`
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_is_one")


def hallucination_scorer(
    judge: Judge,
    *,
    context: ContextArg = None,
    get_context: Callable[..., Any] | None = None,
    scale: float = 1.0,
    mode: str = "pipeline",
    compat: str = "localjudge",
) -> Scorer:
    """Build the hallucination scorer (lower is better).

    Args:
        judge: The local model judging.
        context: Static context for every run (replaces the run's own `context` field).
        get_context: Called once per run, Mastra's way (``get_context(run=..., results=...,
            step=...)``, or with the run alone), sync or async; takes precedence over `context`.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (claims, a verdict per claim, a reason) or ``"direct"`` (one
            yes/no on the whole output: `scale` if hallucinated, else 0).
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`), and a run with no
            context judged against an empty one, as Mastra's.
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    if build.direct:
        return direct_scorer("hallucination", judge, build, version=DIRECT_VERSION, question=DIRECT,
                             positive="hallucinated", higher_is_better=False, if_empty=IF_EMPTY,
                             context=context, get_context=get_context)
    return claim_verdict_scorer(
        "hallucination", judge, build, version=VERSION, verdict=HallucinationVerdict, verdicts=HallucinationVerdicts,
        instructions=ANALYZE_SYSTEM, example=EXAMPLE, subject="statement", counted="yes",
        meaning="lower is better; the share of the output's claims that the context does not "
                "support, unsupported = hallucinated",
        positive="hallucinated", higher_is_better=False,
        if_empty=IF_EMPTY,
        if_no_claims=(0.0, "The output makes no factual claims, so none of it is hallucinated."),
        context=context, get_context=get_context, labels=LABELS, needs_context=not build.mastra,
    )


__all__ = ["hallucination_scorer", "HallucinationVerdict", "HallucinationVerdicts"]
