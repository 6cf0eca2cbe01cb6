"""What the hallucination and faithfulness scorers share: claims, then one verdict per claim.

`claim_verdict_scorer` is their one definition: preprocess extracts the output's claims (the
`CLAIMS_STEP` below), analyze gives one verdict per claim against the context (exactly as many
as there are claims, by the grammar), the score is the share of claims with the counted label,
and the reason step sees the texts and the verdicts. Each scorer's file gives its labels,
prompt, example, and what an empty output or no claims scores.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple

from pydantic import BaseModel, Field

from localjudge.judge import Judge
from localjudge.prompting import DATA_NOTE, block, numbered
from localjudge.runs import Sample
from localjudge.schemas import MAX_ITEMS, StatementText, Strict, exactly
from localjudge.scorer import Scorer, check_scale, create_scorer
from localjudge.scorers.verdicts import mean_label_prob, reason_step, verdict_lines
from localjudge.steps import ContextArg, JudgeStep, Results, Shortcut, UnscorableError


class Claims(Strict):
    """Claims extracted from the output (at most MAX_ITEMS)."""

    claims: Annotated[list[StatementText], Field(max_length=MAX_ITEMS)]

CLAIMS_SYSTEM = f"""You list the claims a text makes.
A claim is one statement of fact or speculation, rewritten as a short sentence that stands on its own.
Rules:
- Include every factual and speculative claim. Keep numbers, dates and names exactly.
- Split a compound statement into separate claims. List each claim once.
- Skip greetings, questions and opinions that state no fact.
- Add nothing that the text does not say. At most {MAX_ITEMS} claims.
{DATA_NOTE}"""

def claims_prompt(question: str, text: str) -> str:
    """User message of the claims step: the question answered (if any), then the text."""
    asked = f"The text answers this question:\n{block('QUESTION', question)}\n" if question.strip() else ""
    return f"{asked}List the claims of this text, each a full sentence.\n{block('TEXT', text)}"


def render_claims(sample: Sample, results: Results) -> str:
    return claims_prompt(sample.input, sample.output)


CLAIMS_EXAMPLE = (
    claims_prompt(
        "What is Marie Curie known for?",
        "Two Nobel Prizes, in 1903 and 1911. She was probably the greatest scientist ever.",
    ),
    '{"claims":["Marie Curie won two Nobel Prizes.","Marie Curie won a Nobel Prize in 1903.",'
    '"Marie Curie won a Nobel Prize in 1911.","Marie Curie was probably the greatest scientist ever."]}',
)


def dedupe_claims(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    """Drop repeated claims (same words, ignoring case and spacing): a repeat adds nothing."""
    seen: set[str] = set()
    claims = []
    for claim in parsed["claims"]:
        key = " ".join(claim.lower().split())
        if key not in seen:
            seen.add(key)
            claims.append(claim)
    return {"claims": claims}


CLAIMS_STEP = JudgeStep(
    instructions=CLAIMS_SYSTEM, prompt=render_claims, schema=Claims, examples=(CLAIMS_EXAMPLE,), finish=dedupe_claims
)


def claims_of(results: Results) -> list[str]:
    """The claims found by the preprocess step."""
    return list(results["preprocess_step_result"]["claims"])


def claim_check_prompt(context: str, claims: list[str], question: str = "") -> str:
    """User message for verdict steps: the question (if any), the context, the numbered claims."""
    asked = f"The claims answer this question:\n{block('QUESTION', question)}\n" if question.strip() else ""
    return (
        f"{asked}{block('CONTEXT', context)}\n"
        f"Claims to check against the context:\n{numbered(claims)}\n"
        f"Give exactly {len(claims)} verdicts, one per claim, in order."
    )


def render_claim_check(sample: Sample, results: Results) -> str:
    return claim_check_prompt("\n".join(sample.context or ()), claims_of(results), sample.input)


def attach_claims(key: str) -> Any:
    """A step `finish` that checks one verdict per claim and writes each claim into its verdict."""

    def finish(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        claims, verdicts = claims_of(results), parsed["verdicts"]
        if len(verdicts) != len(claims):
            raise UnscorableError(f"judge gave {len(verdicts)} verdicts for {len(claims)} claims")
        return {"verdicts": [{key: c, **v} for c, v in zip(claims, verdicts, strict=True)]}

    return finish


class ClaimExample(NamedTuple):
    """A worked example of a claim scorer: the texts, the claims, the judge's verdicts (JSON, as
    the analyze step's example answer) and the reason the reason step's example gives."""

    question: str
    context: str
    claims: list[str]
    answer: str
    reason: str

    def analyze_turn(self) -> tuple[str, str]:
        """The analyze step's example turn: (user message, assistant JSON)."""
        return claim_check_prompt(self.context, self.claims, self.question), self.answer


def claim_verdict_scorer(
    name: str,
    judge: Judge,
    *,
    version: str,
    verdict: type[BaseModel],
    verdicts: type[BaseModel],
    instructions: str,
    example: ClaimExample,
    subject: str,
    counted: str,
    meaning: str,
    positive: str,
    higher_is_better: bool,
    if_empty: Shortcut,
    if_no_claims: Shortcut,
    scale: float,
    context: ContextArg,
    get_context: Callable[..., Any] | None,
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None,
) -> Scorer:
    """A claims-then-verdicts scorer; its score is the share of claims whose verdict is `counted`.

    Args:
        verdict, verdicts: One verdict's schema and the list's (its exact-count variant is made
            per item).
        instructions: The analyze step's system message.
        example: The worked example of the analyze step, and (explained) of the reason step.
        subject: The key each claim gets inside its verdict (``"statement"``, ``"claim"``).
        counted: The verdict label the score counts.
        meaning: The reason step's words on what the score means (``lower is better...``).
        positive, higher_is_better: What a high score means, and its direction (see `Scorer`).
        if_empty, if_no_claims: (fraction, reason) for an empty output and for no claims.
    """

    scale = check_scale(scale)

    def schema(run: Sample, results: Results) -> type[BaseModel]:
        return exactly(verdict, len(claims_of(results)), verdicts)

    def shortcut(run: Sample, results: Results) -> Shortcut | None:
        if not run.output.strip():
            return if_empty
        if "preprocess_step_result" in results and not claims_of(results):
            return if_no_claims
        return None

    def score(run: Sample, results: Results) -> float:
        found = results["analyze_step_result"]["verdicts"]
        return sum(v["verdict"] == counted for v in found) / len(found)

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        return mean_label_prob(label_probs["analyze"], counted, len(results["analyze_step_result"]["verdicts"]))

    def summary(run: Sample, results: Results) -> str:
        return (
            f"Score: {results['score']:g} (from 0 to {scale:g}; {meaning}).\n"
            f"Verdicts on the output's claims:\n{verdict_lines(results['analyze_step_result']['verdicts'], subject)}\n"
            "Explain the score: which claims the context supports, and which it contradicts or does not mention."
        )

    answer = json.loads(example.answer)["verdicts"]
    example_run = Sample("example", example.question, " ".join(example.claims), (example.context,))
    example_results: Results = {"analyze_step_result": {"verdicts": [
        {subject: c, **v} for c, v in zip(example.claims, answer, strict=True)]}}
    example_results["score"] = round(score(example_run, example_results) * scale, 2)

    analyze = JudgeStep(instructions=instructions, prompt=render_claim_check, schema=schema,
                        examples=(example.analyze_turn(),), finish=attach_claims(subject))
    return (
        create_scorer(name, judge=judge, version=version, scale=scale, needs_context=True, context=context,
                      get_context=get_context, fallback_context=fallback_context, shortcut=shortcut,
                      prob_score=prob_score, positive=positive, higher_is_better=higher_is_better)
        .preprocess(CLAIMS_STEP)
        .analyze(analyze)
        .generate_score(score)
        .generate_reason(reason_step(summary, example=(example_run, example_results, example.reason)))
    )

