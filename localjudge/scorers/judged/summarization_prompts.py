"""Summarization's schemas, prompts and worked examples: what the judge is asked in each step and
the shape of its answer (`localjudge.scorers.judged.summarization` builds the steps from them and
scores their answers).

The preprocess step writes closed questions about the source and one alignment verdict per
summary statement (`SourceJudgement`, bounded per run by `judgement_schema`; a later part of a
long summary answers `AlignmentOnly`); the analyze step one coverage verdict per question
(`CoverageAnswers`); direct mode one yes/no (`DIRECT_SYSTEM`, `direct_prompt`).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from localjudge.samples import Sample
from localjudge.scoring import DATA_NOTE, MAX_ITEMS, ReasonText, Results, Strict, block, numbered

QUESTION_LIMIT = 20  # the most `max_questions` may be here (Mastra sets none): every list is bounded
QUESTION_CHARS = 150

QuestionText = Annotated[str, Field(min_length=1, max_length=QUESTION_CHARS)]


class AlignmentVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


class SourceJudgement(Strict):
    """Preprocess: questions about the source, then one verdict per summary statement (both
    bounded per item and per scorer: see `judgement_schema`)."""

    questions: Annotated[list[QuestionText], Field(min_length=1, max_length=QUESTION_LIMIT)]
    alignment: Annotated[list[AlignmentVerdict], Field(min_length=1, max_length=MAX_ITEMS)]


class CoverageVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


class CoverageAnswers(Strict):
    coverage: Annotated[list[CoverageVerdict], Field(min_length=1, max_length=QUESTION_LIMIT)]


@functools.cache
def judgement_schema(statements: int, max_questions: int) -> type[BaseModel]:
    """`SourceJudgement` with 1 to `max_questions` questions and exactly `statements` verdicts."""
    questions: Any = Annotated[list[QuestionText], Field(min_length=1, max_length=max_questions)]
    alignment: Any = Annotated[list[AlignmentVerdict], Field(min_length=statements, max_length=statements)]
    return create_model(f"SourceJudgement_{statements}_{max_questions}", __base__=SourceJudgement,
                        questions=(questions, ...), alignment=(alignment, ...))


class AlignmentOnly(Strict):
    """Preprocess, a later part of a long summary: its verdicts only (the first part wrote the
    questions)."""

    alignment: Annotated[list[AlignmentVerdict], Field(min_length=1, max_length=MAX_ITEMS)]


JUDGEMENT_SYSTEM = f"""You check a summary against its source text, in two parts.
1. Questions: write closed questions about the main points of the SOURCE, most important first. Each asks about
one fact and is answered "yes" by the source alone. Choose them from the source only, whatever the summary says.
2. Alignment: for each numbered statement of the summary give verdict "yes" if the source states it or directly
implies it, "no" if the source contradicts it or does not say it, and a short reason.
Judge only by the source, not by your own knowledge. Numbers, dates and names must match exactly.
{DATA_NOTE}"""

COVERAGE_SYSTEM = f"""You answer questions from a summary alone.
For each numbered question give verdict "yes" if the summary holds the information that answers it, "no" if the
summary leaves it out or says something different, and a short reason.
The summary is your only evidence: do not use your own knowledge. Numbers, dates and names must match exactly.
Give exactly one verdict per question, in order.
{DATA_NOTE}"""


def judgement_prompt(source: str, statements: list[str], max_questions: int, first: int = 1) -> str:
    """The source, then the summary one numbered statement a line (numbered from `first`); a
    later part of a long summary (`first` > 1) asks for its verdicts only."""
    lines = "\n".join(f"{i}. {s}" for i, s in enumerate(statements, first))
    shown = f"{block('SOURCE', source)}\nThe summary, one numbered statement a line:\n{block('SUMMARY', lines)}\n"
    if first > 1:
        return (f"{shown}This is a later part of the summary: its questions are already written, so write none. "
                f"Give exactly {len(statements)} verdicts, one per summary statement, in order.")
    return (f"{shown}Write {'1 question' if max_questions == 1 else f'1 to {max_questions} questions'} about the "
            f"source, then give exactly {len(statements)} verdicts, one per summary statement, in order.")


def coverage_prompt(summary: str, questions: list[str]) -> str:
    return (f"{block('SUMMARY', summary)}\nQuestions, one numbered a line:\n{block('QUESTIONS', numbered(questions))}\n"
            f"Give exactly {len(questions)} verdicts, one per question, in order.")


EXAMPLE_SOURCE = ("The Riverside Library opened in 1952. It lends books, tools and seeds. In 2019 it added a rooftop "
                  "garden. It is open every day except Monday.")
# Verdicts in the examples start with "yes" and alternate: small judges replay the example's
# first label on a one-statement summary (all "no" when the example began with a "no").
EXAMPLE_STATEMENTS = ["The Riverside Library is closed on Mondays.",
                      "It opened in 1962 and lends books, tools and seeds."]
EXAMPLE_QUESTIONS = ["Does the library lend books, tools and seeds?", "Did the Riverside Library open in 1952?",
                     "Is the library open every day except Monday?", "Did the library add a rooftop garden in 2019?"]
JUDGEMENT_EXAMPLE = (
    judgement_prompt(EXAMPLE_SOURCE, EXAMPLE_STATEMENTS, 4),
    '{"questions":["' + '","'.join(EXAMPLE_QUESTIONS) + '"],'
    '"alignment":[{"verdict":"yes","reason":"Open every day except Monday."},'
    '{"verdict":"no","reason":"The source says 1952, not 1962."}]}',
)
COVERAGE_EXAMPLE = (
    coverage_prompt(" ".join(EXAMPLE_STATEMENTS), EXAMPLE_QUESTIONS),
    '{"coverage":[{"verdict":"yes","reason":"Books, tools and seeds."},'
    '{"verdict":"no","reason":"The summary says 1962."},'
    '{"verdict":"yes","reason":"Closed only on Mondays."},'
    '{"verdict":"no","reason":"No garden is mentioned."}]}',
)
REASON_EXAMPLE = (
    "The summary answers what the library lends and when it closes but leaves out the garden, and it gives "
    "1962 where the source says 1952, so alignment and coverage are both partial."
)


DIRECT_SYSTEM = f"""You judge a summary of a source text, with a verdict and a short reason.
Answer "yes" if the summary is faithful to the source (everything it says, the source states or directly implies)
and it keeps the source's main points. Answer "no" if it says anything the source contradicts or does not say, or
leaves out a main point. Judge only by the source, not by your own knowledge.
The reason says what in the summary decides the verdict.
{DATA_NOTE}"""


def direct_prompt(sample: Sample, results: Results) -> str:
    return (f"{block('SOURCE', sample.input)}\n{block('SUMMARY', sample.output)}\n"
            "Is the summary faithful to the source, and does it keep its main points? "
            "Answer yes or no, then give a short reason.")
