"""Faithfulness: the share of the output's claims that the context supports.

Inputs: `output` (judged) and `context` (required: run field, `context=`, `get_context=`, or,
as in Mastra, the results of the tools the run called). Steps: preprocess extracts the output's
claims (a terse output is one claim read with its question, by rule); analyze gives one
verdict per claim: ``yes`` (supported), ``no`` (contradicted) or ``unsure`` (cannot be
verified from the context).
Score: supported claims / claims x scale. Higher is better; ``unsure`` counts as not supported.
An output with no claims scores `scale` (nothing in it is unfaithful).
``mode="direct"``: one yes/no question on the whole output instead (see `localjudge.scorers.judged.direct`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.samples import tool_result_context
from localjudge.scorers.judged.claims import ClaimExample, claim_verdict_scorer
from localjudge.scorers.judged.direct import Question, direct_scorer
from localjudge.scoring import DATA_NOTE, Build, ContextArg, MastraNumbers, ReasonText, Scorer, Strict

VERSION = "faithfulness-v5"
DIRECT_VERSION = "faithfulness-direct-v1"
DIRECT = Question(
    rules='Answer "yes" (faithful) if the context supports everything the response claims; "no" if the '
          'context contradicts any of it, or cannot confirm it. Judge only by the context, not by your own '
          'knowledge.',
    ask="Does the context support everything the response claims?",
    show_context=True,
)
IF_EMPTY = (1.0, "The output is empty, so it makes no claim that could be unfaithful.")


class FaithfulnessVerdict(Strict):
    verdict: Literal["yes", "no", "unsure"]
    reason: ReasonText


class FaithfulnessVerdicts(Strict):
    verdicts: list[FaithfulnessVerdict]


ANALYZE_SYSTEM = f"""You check whether each claim is supported by the given context, and only by it.
For each claim answer verdict "yes", "no" or "unsure", then a short reason.
- "yes": the context supports the claim.
- "no": the context contradicts the claim.
- "unsure": the context neither supports nor contradicts it.
Do not use your own knowledge. Give exactly one verdict per claim, in the claims' order.
{DATA_NOTE}"""

EXAMPLE = ClaimExample(
    question="Who was Ada Lovelace?",
    context="Ada Lovelace wrote the first published computer program, for Babbage's Analytical Engine, in 1843.",
    claims=["Ada Lovelace wrote a program for the Analytical Engine.", "She wrote it in 1853.",
            "She had two children."],
    answer='{"verdicts":[{"verdict":"yes","reason":"Stated."},{"verdict":"no","reason":"1843, not 1853."},'
           '{"verdict":"unsure","reason":"Children are not mentioned."}]}',
    reason="One of the three claims is supported: the context says she wrote the program for the Analytical "
           "Engine, but it gives 1843, not 1853, and it does not mention her children.",
)


def _tool_results(run: Any) -> list[str]:
    return tool_result_context(run.get("output"))


def _mastra_tool_results(run: Any) -> list[str]:
    """Mastra 1.10.2's fallback (`getToolInvocationContext`): the results in the assistant
    messages' legacy `content.toolInvocations` only, each `JSON.stringify`'d (a string quoted);
    tool invocations in message parts and OpenAI `tool` messages are not read."""
    output = run.get("output")
    if not isinstance(output, list):
        return []
    invocations = [call for message in output
                   if isinstance(message, Mapping) and message.get("role") == "assistant"
                   and isinstance(message.get("content"), Mapping)
                   for call in message["content"].get("toolInvocations") or []]
    return [json.dumps(call.get("result"), ensure_ascii=False, separators=(",", ":"))
            for call in invocations if isinstance(call, Mapping) and call.get("state") == "result"]


def faithfulness_scorer(
    judge: Judge,
    *,
    context: ContextArg = None,
    get_context: Callable[..., Any] | None = None,
    scale: float = 1.0,
    mode: str = "pipeline",
    compat: str = "localjudge",
) -> Scorer:
    """Build the faithfulness scorer (higher is better).

    Args:
        judge: The local model judging.
        context: Static context for every run (replaces the run's own `context` field).
        get_context: Called once per run, Mastra's way (``get_context(run=..., results=...,
            step=...)``, or with the run alone), sync or async; takes precedence over `context`.
            With none of these and no `context` field, the tool results in the run's output
            are the context (Mastra's fallback).
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (claims, a verdict per claim, a reason) or ``"direct"`` (one
            yes/no on the whole output: `scale` if faithful, else 0).
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`), Mastra's 0 for an
            output with no claims, a run with no context judged against an empty one, and the
            tool-result fallback read from the legacy `toolInvocations` only, as Mastra reads it.
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    mastra = build.mastra
    if build.direct:
        return direct_scorer("faithfulness", judge, build, version=DIRECT_VERSION, question=DIRECT,
                             positive="faithful", higher_is_better=True, if_empty=IF_EMPTY, context=context,
                             get_context=get_context, fallback_context=_tool_results)
    return claim_verdict_scorer(
        "faithfulness", judge, build, version=VERSION, verdict=FaithfulnessVerdict, verdicts=FaithfulnessVerdicts,
        instructions=ANALYZE_SYSTEM, example=EXAMPLE, subject="claim", counted="yes",
        meaning="higher is better; the share of the output's claims that the context supports, "
                "yes = supported, no = contradicted, unsure = not verifiable",
        positive="faithful", higher_is_better=True,
        if_empty=MASTRA_NO_CLAIMS if mastra else IF_EMPTY,
        if_no_claims=MASTRA_NO_CLAIMS if mastra else
        (1.0, "The output makes no factual claims, so nothing in it is unfaithful to the context."),
        context=context, get_context=get_context,
        fallback_context=_mastra_tool_results if mastra else _tool_results, needs_context=not mastra,
    )


MASTRA_NO_CLAIMS = (0.0, "The output makes no claims: Mastra scores no claims 0.")
# createFaithfulnessScorer: roundToTwoDecimals, `options?.scale || 1`
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_is_one")


__all__ = ["faithfulness_scorer", "FaithfulnessVerdict", "FaithfulnessVerdicts"]
