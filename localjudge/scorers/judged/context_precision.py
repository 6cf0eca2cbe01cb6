"""Context precision: are the context pieces that help answer the input ranked first? Mean
average precision (MAP) over the retrieved pieces, in their order.

Inputs: `context` (the retrieved pieces, in rank order: required), `input` (the question) and
`output` (the answer given, shown so the judge knows what the pieces were used for). A run
without context is refused before any judge call, as for hallucination.
Steps: one analyze step gives exactly one verdict per context piece, in order (enforced by the
grammar; over 20 pieces are asked in parts of at most 20 in the same judge call, their verdicts
joined in rank order): ``yes`` = the piece is useful for answering the input. Score, as Mastra's: MAP, the
mean over the useful pieces of the precision at their rank (useful pieces up to rank i / i);
no useful piece: 0. Higher is better.
`prob_score`: the same formula with each piece's ``yes`` probability as its usefulness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.verdicts import label_choices, reason_step, verdict_lines
from localjudge.scoring import (
    DATA_NOTE,
    Build,
    ContextArg,
    JudgeStep,
    MastraNumbers,
    ReasonText,
    Results,
    Scorer,
    Strict,
    UnscorableError,
    block,
    create_scorer,
    exactly,
    part_of,
    spans,
)

VERSION = "context-precision-v1"
MAX_PIECES = 20  # pieces per prompt: more are asked in parts of at most 20, in the same judge call


class PieceVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


class PieceVerdicts(Strict):
    verdicts: Annotated[list[PieceVerdict], Field(min_length=1, max_length=MAX_PIECES)]


ANALYZE_SYSTEM = f"""You check retrieved context pieces against a question.
For each numbered context piece give verdict "yes" if it is useful for answering the question: it holds
information the answer uses or needs; "no" if it does not help. Add a short reason.
Judge each piece on its own, whatever its position. Give exactly one verdict per piece, in order.
{DATA_NOTE}"""


def pieces_prompt(question: str, answer: str, pieces: Sequence[str], first: int = 1) -> str:
    lines = "\n".join(f"{i}. {p}" for i, p in enumerate(pieces, first))
    shown = block("QUESTION", question) + "\n" if question.strip() else ""
    return (f"{shown}{block('ANSWER', answer)}\nThe context, one numbered piece a line:\n{block('CONTEXT', lines)}\n"
            f"Give exactly {len(pieces)} verdicts, one per piece, in order.")


EXAMPLE_PIECES = ["The Nile flows north into the Mediterranean.", "Cairo hosts a large book fair every January.",
                  "The Nile is about 6,650 km long."]
EXAMPLE = (
    pieces_prompt("How long is the Nile?", "About 6,650 km.", EXAMPLE_PIECES),
    '{"verdicts":[{"verdict":"no","reason":"Direction, not length."},'
    '{"verdict":"no","reason":"Unrelated."},'
    '{"verdict":"yes","reason":"Gives the length."}]}',
)


def pieces_of(sample: Sample) -> tuple[str, ...]:
    pieces = tuple(p for p in sample.context or () if p.strip())
    if not pieces:
        raise UnscorableError("context precision needs context: the retrieved pieces, in rank order")
    return pieces


def split_pieces(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """The analyze step's split: the pieces in parts of at most `MAX_PIECES`, in rank order."""
    return spans(len(pieces_of(sample)), MAX_PIECES)


def part_pieces(sample: Sample, results: Results) -> tuple[Sequence[str], int]:
    """The pieces this part of the analyze step asks about, and the rank of its first."""
    pieces = pieces_of(sample)
    start, end = part_of(results, len(pieces))
    return pieces[start:end], start + 1


def mean_average_precision(relevance: Sequence[float]) -> float:
    """MAP over ranked pieces with relevance in [0, 1] (1 / 0 for verdicts): the
    relevance-weighted mean of the precision at each rank; 0 when nothing is relevant."""
    total, seen, found = 0.0, 0.0, 0.0
    for rank, relevant in enumerate(relevance, 1):
        seen += relevant
        total += relevant * seen / rank
        found += relevant
    return total / found if found else 0.0


# createContextPrecisionScorer: roundToTwoDecimals, `options?.scale || 1`
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_is_one")


def context_precision_scorer(judge: Judge, *, context: ContextArg = None,
                             get_context: Callable[..., Any] | None = None, scale: float = 1.0,
                             compat: str = "localjudge") -> Scorer:
    """Build the context precision scorer (higher is better).

    Args:
        judge: The local model judging.
        context: Static context for every run (replaces the run's own `context` field).
        get_context: Called once per run, Mastra's way; takes precedence over `context`.
        scale: Scores lie in [0, scale]; must be positive.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, compat=compat)
    scale = build.scale

    def render(sample: Sample, results: Results) -> str:
        return pieces_prompt(sample.input, sample.output, *part_pieces(sample, results))

    def schema(sample: Sample, results: Results) -> type[BaseModel]:
        return exactly(PieceVerdict, len(part_pieces(sample, results)[0]), PieceVerdicts)

    def attach(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        return {"verdicts": [{"context_index": i, "piece": p, **v}
                             for i, (p, v) in enumerate(zip(pieces_of(sample), parsed["verdicts"], strict=True))]}

    def score(sample: Sample, results: Results) -> float:
        verdicts = results["analyze_step_result"]["verdicts"]
        return mean_average_precision([float(v["verdict"] == "yes") for v in verdicts])

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        choices = label_choices(label_probs["analyze"], "yes")
        if len(choices) != len(results["analyze_step_result"]["verdicts"]):
            return None
        return mean_average_precision([c["yes"] for c in choices])

    def summary(sample: Sample, results: Results) -> str:
        verdicts = verdict_lines(results["analyze_step_result"]["verdicts"], "piece")
        return (f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better; mean average precision: "
                f"useful pieces ranked first score high).\nVerdicts on the context pieces, in rank order "
                f"(yes = useful):\n{block('VERDICTS', verdicts)}\n"
                "Explain the score: which pieces help answer the question, and where they are ranked.")

    step = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render, schema=schema, examples=(EXAMPLE,), finish=attach,
                     split=split_pieces)
    return (
        create_scorer("context_precision", judge=judge, version=VERSION, needs_context=True,
                      context=context, get_context=get_context, prob_score=prob_score, positive="useful context first",
                      higher_is_better=True, **build.create_keywords())
        .analyze(step)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False))
    )
