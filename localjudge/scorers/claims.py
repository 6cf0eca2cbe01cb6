"""The claim-extraction step shared by the hallucination and faithfulness scorers."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from localjudge.prompting import DATA_NOTE, block, numbered
from localjudge.runs import Sample
from localjudge.schemas import MAX_ITEMS, STATEMENT_CHARS, Strict, text
from localjudge.scorer import LLMStep, State, UnscorableError


class Claims(Strict):
    """Claims extracted from the output (at most MAX_ITEMS)."""

    claims: Annotated[list[text(STATEMENT_CHARS)], Field(max_length=MAX_ITEMS)]  # type: ignore[valid-type]

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


def render_claims(sample: Sample, state: State) -> str:
    return claims_prompt(sample.input, sample.output)


CLAIMS_EXAMPLE = (
    claims_prompt(
        "What is Marie Curie known for?",
        "Two Nobel Prizes, in 1903 and 1911. She was probably the greatest scientist ever.",
    ),
    '{"claims":["Marie Curie won two Nobel Prizes.","Marie Curie won a Nobel Prize in 1903.",'
    '"Marie Curie won a Nobel Prize in 1911.","Marie Curie was probably the greatest scientist ever."]}',
)


def dedupe_claims(sample: Sample, state: State, parsed: dict[str, Any]) -> dict[str, Any]:
    """Drop repeated claims (same words, ignoring case and spacing): a repeat adds nothing."""
    seen: set[str] = set()
    claims = []
    for claim in parsed["claims"]:
        key = " ".join(claim.lower().split())
        if key not in seen:
            seen.add(key)
            claims.append(claim)
    return {"claims": claims}


CLAIMS_STEP = LLMStep(
    system=CLAIMS_SYSTEM, render=render_claims, schema=Claims, examples=(CLAIMS_EXAMPLE,), finish=dedupe_claims
)


def claims_of(state: State) -> list[str]:
    """The claims found by the preprocess step."""
    return list(state["preprocess"]["claims"])


def claim_check_prompt(context: str, claims: list[str], question: str = "") -> str:
    """User message for verdict steps: the question (if any), the context, the numbered claims."""
    asked = f"The claims answer this question:\n{block('QUESTION', question)}\n" if question.strip() else ""
    return (
        f"{asked}{block('CONTEXT', context)}\n"
        f"Claims to check against the context:\n{numbered(claims)}\n"
        f"Give exactly {len(claims)} verdicts, one per claim, in order."
    )


def render_claim_check(sample: Sample, state: State) -> str:
    return claim_check_prompt("\n".join(sample.context or ()), claims_of(state), sample.input)


def attach_claims(key: str) -> Any:
    """A step `finish` that checks one verdict per claim and writes each claim into its verdict."""

    def finish(sample: Sample, state: State, parsed: dict[str, Any]) -> dict[str, Any]:
        claims, verdicts = claims_of(state), parsed["verdicts"]
        if len(verdicts) != len(claims):
            raise UnscorableError(f"judge gave {len(verdicts)} verdicts for {len(claims)} claims")
        return {"verdicts": [{key: c, **v} for c, v in zip(claims, verdicts)]}

    return finish
