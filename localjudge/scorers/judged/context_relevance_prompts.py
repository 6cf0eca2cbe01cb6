"""Context relevance's schema, prompt and worked example: what the judge is asked in its one
step and the shape of its answer, one evaluation per context piece and the missing notes
(`localjudge.scorers.judged.context_relevance` builds the step from them and scores the answer).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from localjudge.scoring import DATA_NOTE, ReasonText, Strict, block

MAX_PIECES = 20  # pieces per prompt: more are asked in parts of at most 20, in the same judge call
MAX_MISSING = 4  # 4 x 0.15 passes Mastra's 0.5 cap, so the default cap can be reached

MissingText = Annotated[str, Field(min_length=1, max_length=100)]


class PieceEvaluation(Strict):
    relevance: Literal["high", "medium", "low", "none"]
    used: Literal["yes", "no"]
    reason: ReasonText


class ContextEvaluations(Strict):
    evaluations: Annotated[list[PieceEvaluation], Field(min_length=1, max_length=MAX_PIECES)]
    missing_context: Annotated[list[MissingText], Field(max_length=MAX_MISSING)]


def evaluations_schema(n: int) -> type[BaseModel]:
    """`ContextEvaluations` with exactly `n` evaluations, one per piece (`ContextEvaluations_<n>`)."""
    return _exactly(n)


@functools.cache
def _exactly(n: int) -> type[BaseModel]:
    field: Any = Annotated[list[PieceEvaluation], Field(min_length=n, max_length=n)]
    return create_model(f"ContextEvaluations_{n}", __base__=ContextEvaluations, evaluations=(field, ...))


ANALYZE_SYSTEM = f"""You check retrieved context pieces against a question and the answer given.
For each numbered context piece give:
- relevance "high" if it answers the question or holds information the answer needs;
- relevance "medium" if it gives helpful background or supporting detail;
- relevance "low" if it is on the topic but does not really help;
- relevance "none" if it has nothing to do with the question;
- used "yes" if the answer states or reflects its information, "no" if it does not;
- a short reason.
Judge each piece on its own. Give exactly one evaluation per piece, in order.
Then list, in missing_context, information the question needs that no piece gives (a few words each).
Leave missing_context empty when the pieces hold what the question needs.
{DATA_NOTE}"""


def pieces_prompt(question: str, answer: str, pieces: Sequence[str], first: int = 1) -> str:
    lines = "\n".join(f"{i}. {p}" for i, p in enumerate(pieces, first))
    shown = block("QUESTION", question) + "\n" if question.strip() else ""
    return (f"{shown}{block('ANSWER', answer)}\nThe context, one numbered piece a line:\n{block('CONTEXT', lines)}\n"
            f"Give exactly {len(pieces)} evaluations, one per piece, in order, then the missing context.")


EXAMPLE_QUESTION = "What are the benefits of cycling to work?"
EXAMPLE_ANSWER = "Cycling to work builds fitness and saves money on fuel."
EXAMPLE_PIECES = ["Regular cycling strengthens the heart and legs.", "Bicycles were invented in the 19th century.",
                  "Commuting by bike costs far less than driving."]
ANALYZE_EXAMPLE = (
    pieces_prompt(EXAMPLE_QUESTION, EXAMPLE_ANSWER, EXAMPLE_PIECES),
    '{"evaluations":[{"relevance":"high","used":"yes","reason":"Fitness benefit, used."},'
    '{"relevance":"none","used":"no","reason":"History, not benefits."},'
    '{"relevance":"high","used":"yes","reason":"Cost benefit, used."}],"missing_context":[]}',
)
REASON_EXAMPLE = ("Two of the three pieces answer the question and the answer uses both: fitness and lower costs. "
                  "The piece on the history of bicycles is unrelated, which lowers the score.")
