"""Answer similarity's schemas, prompts and worked examples: what the judge is asked in each step
and the shape of its answer (`localjudge.scorers.judged.answer_similarity` builds the steps from
them and scores their answers).

Preprocess: one verdict per statement of the output against the reference (`ResponseChecks`);
analyze: one match per statement of the reference (`ReferenceMatches`, in words a small model
reads; `MATCH_TYPES` gives Mastra's for each); direct mode: one yes/no (`DIRECT_SYSTEM`,
`direct_prompt`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from localjudge.samples import Sample
from localjudge.scoring import DATA_NOTE, MAX_ITEMS, ReasonText, Results, Strict, block


class ResponseCheck(Strict):
    verdict: Literal["agrees", "extra", "contradicts"]
    reason: ReasonText


class ResponseChecks(Strict):
    verdicts: Annotated[list[ResponseCheck], Field(min_length=1, max_length=MAX_ITEMS)]


class ReferenceMatch(Strict):
    match: Literal["exact", "reworded", "partial", "missing"]
    reason: ReasonText


class ReferenceMatches(Strict):
    matches: Annotated[list[ReferenceMatch], Field(min_length=1, max_length=MAX_ITEMS)]


MATCH_TYPES = {"exact": "exact", "reworded": "semantic", "partial": "partial", "missing": "missing"}  # -> Mastra's

CHECKS_SYSTEM = f"""You check each statement of a response against a reference answer.
For each numbered statement of the response give:
- verdict "agrees" if the reference says it too, in the same or other words;
- verdict "extra" if the reference does not mention it;
- verdict "contradicts" if the reference says something that conflicts with it (another name, number, date or fact);
- a short reason.
Judge only by the reference, not by your own knowledge. Give exactly one verdict per statement, in order.
{DATA_NOTE}"""

MATCHES_SYSTEM = f"""You check how a response states each statement of a reference answer.
For each numbered statement of the reference give:
- match "exact" if the response says it in the same or nearly the same words;
- match "reworded" if the response says the same thing in other words;
- match "partial" if the response says only part of it, or says it less precisely;
- match "missing" if the response does not say it, or says something different;
- a short reason.
Judge only by the two texts, not by your own knowledge. Give exactly one match per statement, in order.
{DATA_NOTE}"""


def _numbered(statements: list[str], first: int = 1) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(statements, first))


def _question(question: str) -> str:
    return f"Both answer this question:\n{block('QUESTION', question)}\n" if question.strip() else ""


def checks_prompt(question: str, reference: str, statements: list[str], first: int = 1) -> str:
    """Preprocess: the reference whole, the response one numbered statement a line (numbered
    from `first`: a later part of a long response)."""
    return (f"{_question(question)}{block('REFERENCE', reference)}\nThe response, one numbered statement a line:\n"
            f"{block('RESPONSE', _numbered(statements, first))}\n"
            f"Give exactly {len(statements)} verdicts, one per response statement, in order.")


def matches_prompt(question: str, response: str, statements: list[str], first: int = 1) -> str:
    """Analyze: the response whole, the reference one numbered statement a line (numbered from
    `first`: a later part of a long reference)."""
    return (f"{_question(question)}{block('RESPONSE', response)}\nThe reference answer, one numbered statement a "
            f"line:\n{block('REFERENCE', _numbered(statements, first))}\n"
            f"Give exactly {len(statements)} matches, one per reference statement, in order.")


EXAMPLE_QUESTION = "What does a barometer do?"
EXAMPLE_REFERENCE = ["A barometer measures air pressure.", "Falling pressure often means rain is coming.",
                     "Evangelista Torricelli invented it in 1643."]
EXAMPLE_RESPONSE = ["A barometer measures air pressure.", "Its readings change with the weather.",
                    "Galileo invented it.", "Many phones have one."]
CHECKS_EXAMPLE = (
    checks_prompt(EXAMPLE_QUESTION, " ".join(EXAMPLE_REFERENCE), EXAMPLE_RESPONSE),
    '{"verdicts":[{"verdict":"agrees","reason":"Same as the reference."},'
    '{"verdict":"agrees","reason":"The reference links pressure to rain."},'
    '{"verdict":"contradicts","reason":"Torricelli, not Galileo."},'
    '{"verdict":"extra","reason":"Phones are not mentioned."}]}',
)
MATCHES_EXAMPLE = (
    matches_prompt(EXAMPLE_QUESTION, " ".join(EXAMPLE_RESPONSE), EXAMPLE_REFERENCE),
    '{"matches":[{"match":"exact","reason":"Same words."},'
    '{"match":"partial","reason":"Weather, but not rain."},'
    '{"match":"missing","reason":"Names Galileo, no date."}]}',
)
REASON_EXAMPLE = (
    "The response gets the main fact, that a barometer measures air pressure, and half of the weather point, "
    "but it leaves out the date and names Galileo as the inventor where the reference says Torricelli: that "
    "contradiction costs the most."
)


DIRECT_SYSTEM = f"""You compare a response with a reference answer, with a verdict and a short reason.
Answer "yes" if the response says the same as the reference: it gives the reference's facts, in any words, and
contradicts none of them (extra detail that does not conflict is fine). Answer "no" if it leaves out the
reference's main point or says something that conflicts with it.
Judge only by the two texts, not by your own knowledge. The reason says what in the response decides the verdict.
{DATA_NOTE}"""


def direct_prompt(sample: Sample, results: Results) -> str:
    return (f"{_question(sample.input)}{block('REFERENCE', sample.ground_truth or '')}\n"
            f"{block('RESPONSE', sample.output)}\n"
            "Does the response say the same as the reference answer? Answer yes or no, then give a short reason.")
