"""Context relevance: was the retrieved context relevant to the question, and did the answer use
it? Mean relevance of the pieces, less penalties for relevant pieces left unused and for
information the context lacked.

Inputs: `context` (the retrieved pieces; or `context=` / `get_context=`), `input` (the
question) and `output` (the answer, to tell which pieces it used). A run with no context at all
(no field, no `context=`, no hook) is refused before any judge call, as Mastra throws when
given neither `context` nor `contextExtractor`; a context that resolves empty (an empty list,
blank pieces, a hook returning ``[]``) scores `scale` with no judge call, as Mastra's.
Steps: one analyze step gives exactly one evaluation per piece, in order (enforced by the
grammar): its relevance to the question (``high``, ``medium``, ``low``, ``none``), whether the
answer used it (``yes`` / ``no``) and a reason; then at most 4 short notes of information
missing from the context (often none). Score, as Mastra's: the mean weight of the pieces (high
1.0, medium 0.7, low 0.3, none 0), less 0.1 per high-relevance piece not used, less
min(0.15 x missing notes, 0.5); floor 0; x scale. Higher is better. The three penalties are
options (Mastra's `penalties`).
`prob_score`: the same formula with each piece's expected weight under its relevance label
probabilities, and P(high) x P(not used) as its unused-high count (the missing notes counted as
written). No direct mode: the score weighs relevance, use and gaps, which no one yes/no asks.
The schema, prompt and worked example are in `context_relevance_prompts`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from localjudge.judge import Judge
from localjudge.samples import InvalidRunError, Sample, context_of, is_missing
from localjudge.scorers.judged.context_relevance_prompts import (
    ANALYZE_EXAMPLE,
    ANALYZE_SYSTEM,
    EXAMPLE_ANSWER,
    EXAMPLE_PIECES,
    EXAMPLE_QUESTION,
    MAX_PIECES,
    REASON_EXAMPLE,
    evaluations_schema,
    pieces_prompt,
)
from localjudge.scorers.judged.verdicts import label_choices, reason_step
from localjudge.scoring import (
    Build,
    ContextArg,
    Exact,
    JudgeStep,
    MastraNumbers,
    Results,
    Scorer,
    Shortcut,
    block,
    call_get_context,
    create_scorer,
    neutralise,
    part_of,
    spans,
)

VERSION = "context-relevance-v1"
WEIGHTS = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}  # Mastra's relevance weights


@dataclass(frozen=True)
class Penalties:
    """Mastra's `penalties` option: what is taken off the mean relevance.

    Attributes:
        unused_high_relevance_context: Per high-relevance piece the answer did not use.
        missing_context_per_item: Per note of missing information.
        max_missing_context_penalty: The most the missing notes take off in all.
    """

    unused_high_relevance_context: float = 0.1
    missing_context_per_item: float = 0.15
    max_missing_context_penalty: float = 0.5


_MASTRA_NAMES = {"unusedHighRelevanceContext": "unused_high_relevance_context",
                 "missingContextPerItem": "missing_context_per_item",
                 "maxMissingContextPenalty": "max_missing_context_penalty"}


def check_penalties(penalties: Penalties | Mapping[str, float] | None) -> Penalties:
    """`penalties` as `Penalties`: a mapping may use these names or Mastra's camelCase ones and
    leave any out (its default stays); each must be a finite number of at least 0."""
    if penalties is None:
        return Penalties()
    if not isinstance(penalties, Penalties):
        if not isinstance(penalties, Mapping):
            raise TypeError(f"penalties must be a Penalties or a mapping, got {type(penalties).__name__}")
        known = set(Penalties.__dataclass_fields__)
        named = {_MASTRA_NAMES.get(k, k): v for k, v in penalties.items()}
        unknown = sorted(set(named) - known)
        if unknown:
            raise ValueError(f"unknown penalties {unknown}; known: {sorted(known)} (or Mastra's camelCase names)")
        penalties = Penalties(**named)
    for name in Penalties.__dataclass_fields__:
        value = getattr(penalties, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"penalty {name} must be a finite number of at least 0, got {value!r}")
    return penalties


def relevance_score(weights: Sequence[float], unused_high: float, missing: int, penalties: Penalties) -> float:
    """Mastra's formula: max(0, mean weight - rate x unused high pieces - min(rate x missing,
    cap)). No pieces judged: 0 if context was missing, else 1 (Mastra's rule; never reached
    here, where the grammar asks one evaluation per piece)."""
    if not weights:
        return 0.0 if missing else 1.0
    base = sum(weights) / len(weights)
    missing_penalty = min(missing * penalties.missing_context_per_item, penalties.max_missing_context_penalty)
    return max(0.0, base - unused_high * penalties.unused_high_relevance_context - missing_penalty)


def score_of(evaluations: Sequence[Mapping[str, Any]], missing: int, penalties: Penalties) -> float:
    """The score from the evaluations (relevance labels, `used` flags) and the missing count."""
    unused_high = sum(e["relevance"] == "high" and not e["used"] for e in evaluations)
    return relevance_score([WEIGHTS[e["relevance"]] for e in evaluations], unused_high, missing, penalties)


def pieces_of(sample: Sample) -> tuple[str, ...]:
    return sample.context or ()


def split_pieces(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """The analyze step's split: the pieces in parts of at most `MAX_PIECES`, in order."""
    return spans(len(pieces_of(sample)), MAX_PIECES)


def part_pieces(sample: Sample, results: Results) -> tuple[Sequence[str], int]:
    """The pieces this part of the analyze step asks about, and the number of its first."""
    pieces = pieces_of(sample)
    start, end = part_of(results, len(pieces))
    return pieces[start:end], start + 1


NO_CONTEXT = (1.0, "No context was available for evaluation, so the response was generated without any "
                   "supporting context.")


def shortcut(sample: Sample, results: Results) -> Shortcut | None:
    return NO_CONTEXT if not sample.context else None


def render(sample: Sample, results: Results) -> str:
    return pieces_prompt(sample.input, sample.output, *part_pieces(sample, results))


def analyze_schema(sample: Sample, results: Results) -> type[BaseModel]:
    return evaluations_schema(len(part_pieces(sample, results)[0]))


def attach(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    """Each evaluation with its piece and index (by position: the grammar gave one per piece),
    `used` as true or false, and the missing notes, each once (ignoring case and spacing: a
    repeated note is the same gap)."""
    evaluations = [{"context_index": i, "piece": p, "relevance": e["relevance"], "used": e["used"] == "yes",
                    "reason": e["reason"]}
                   for i, (p, e) in enumerate(zip(pieces_of(sample), parsed["evaluations"], strict=True))]
    missing: dict[str, str] = {}
    for note in parsed["missing_context"]:
        missing.setdefault(" ".join(note.casefold().split()), note)
    return {"evaluations": evaluations, "missing_context": list(missing.values())}


ANALYZE_STEP = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render, schema=analyze_schema,
                         examples=(ANALYZE_EXAMPLE,), finish=attach, split=split_pieces)


def context_source(context: ContextArg, get_context: Callable[..., Any] | None) -> Callable[[Mapping[str, Any]], Any]:
    """The scorer's context hook: the user's hook, else `context`, else the run's own field (as
    `Scorer.sample` resolves them), refusing a run that none of them gives any context field."""

    def resolve(run: Mapping[str, Any]) -> Any:
        found = call_get_context(get_context, run) if get_context is not None else None
        found = context if found is None else found
        if found is None and isinstance(run, Mapping) and is_missing(run.get("context")):
            raise InvalidRunError("context_relevance needs context: give the run a 'context' (an empty list scores "
                                  "the scale), or build the scorer with context= or get_context=")
        return found

    return resolve


# createContextRelevanceScorerLLM: roundToTwoDecimals, `options?.scale || 1`
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_is_one")


def context_relevance_scorer(judge: Judge, *, context: ContextArg = None,
                             get_context: Callable[..., Any] | None = None, scale: float = 1.0,
                             penalties: Penalties | Mapping[str, float] | None = None,
                             compat: str = "localjudge") -> Scorer:
    """Build the context relevance scorer (higher is better).

    Args:
        judge: The local model judging.
        context: Static context for every run (replaces the run's own `context` field); an
            empty list is an error, as in Mastra.
        get_context: Called once per run, Mastra's way; takes precedence over `context`.
        scale: Scores lie in [0, scale]; must be positive.
        penalties: Mastra's `penalties`: a `Penalties`, or a mapping of any of
            ``unused_high_relevance_context`` (0.1), ``missing_context_per_item`` (0.15) and
            ``max_missing_context_penalty`` (0.5), or their camelCase names.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`), and no context scores
            ``1 x scale`` unrounded, as Mastra's.
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, compat=compat)
    scale = build.scale
    unrounded = (Exact(scale), NO_CONTEXT[1])  # Mastra: `return 1 * (options.scale || 1)`

    def mastra_shortcut(sample: Sample, results: Results) -> Shortcut | None:
        return unrounded if not sample.context else None

    rates = check_penalties(penalties)
    if context is not None and not context_of(context):
        raise ValueError("context= holds no text: give the pieces, or leave it out (Mastra refuses an empty list)")

    def score(sample: Sample, results: Results) -> float:
        found = results["analyze_step_result"]
        return score_of(found["evaluations"], len(found["missing_context"]), rates)

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        found = results["analyze_step_result"]
        relevance = label_choices(label_probs["analyze"], "high")
        used = label_choices(label_probs["analyze"], "yes")
        if not relevance or len(relevance) != len(found["evaluations"]) or len(used) != len(relevance):
            return None
        weights = [sum(c.get(label, 0.0) * w for label, w in WEIGHTS.items()) for c in relevance]
        unused_high = sum(r["high"] * u.get("no", 1.0 - u["yes"]) for r, u in zip(relevance, used, strict=True))
        return relevance_score(weights, unused_high, len(found["missing_context"]), rates)

    def summary(sample: Sample, results: Results) -> str:
        found = results["analyze_step_result"]
        lines = "\n".join(f"- {e['relevance']}, {'used' if e['used'] else 'not used'}: {neutralise(e['piece'])} "
                          f"({neutralise(e['reason'])})" for e in found["evaluations"])
        missing = "\n".join(f"- {neutralise(m)}" for m in found["missing_context"]) or "- nothing"
        return (f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better; the mean relevance of the "
                f"pieces, less {rates.unused_high_relevance_context:g} for each highly relevant piece the answer "
                f"did not use, and {rates.missing_context_per_item:g} for each gap, at most "
                f"{rates.max_missing_context_penalty:g} for the gaps).\nThe context pieces (relevance, use):\n"
                f"{block('EVALUATIONS', lines)}\nInformation missing from the context:\n{block('MISSING', missing)}\n"
                "Explain the score: which pieces are relevant and used, and what the context lacks.")

    parsed = json.loads(ANALYZE_EXAMPLE[1])
    example_run = Sample("example", EXAMPLE_QUESTION, EXAMPLE_ANSWER, tuple(EXAMPLE_PIECES))
    example_results: Results = {"analyze_step_result": attach(example_run, {}, parsed)}
    example_results["score"] = round(score(example_run, example_results) * scale, 2)
    return (
        create_scorer("context_relevance", judge=judge, version=VERSION,
                      get_context=context_source(context, get_context),
                      shortcut=mastra_shortcut if build.mastra else shortcut, prob_score=prob_score,
                      positive="relevant context, used", higher_is_better=True, **build.create_keywords())
        .analyze(ANALYZE_STEP)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False,
                                     example=(example_run, example_results, REASON_EXAMPLE)))
    )
