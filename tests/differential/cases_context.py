"""Cases for context precision, context relevance and noise sensitivity: one judge answer each,
a verdict or evaluation per context piece (or per noise dimension), the same on both sides."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.differential.parity import REFUSED, Case, Differs, Outcome, unscripted

QUESTION = "How long is the Nile?"
ANSWER = "The Nile is about 6,650 km long."
PIECES = ["The Nile is about 6,650 km long.", "Cairo hosts a book fair.", "The Nile flows north.",
          "The Amazon is longer by some measures.", "Egypt depends on the Nile."]


def precision(name: str, verdicts: list[str], expect: Outcome | Differs, *, order: list[int] | None = None,
              context: list[str] | None = None, scale: float = 1.0, mastra_scale: float | None = None) -> Case:
    """A context precision case: one verdict per piece, in rank order; `order`: the order in
    which Mastra's judge lists them (each with its context_index; Mastra sorts them back)."""
    pieces = PIECES[:len(verdicts)] if context is None else context
    listed = [{"context_index": i, "verdict": v, "reason": "r"} for i, v in enumerate(verdicts)]
    if order is not None:
        listed = [listed[i] for i in order]
    options: dict[str, Any] = {"context": pieces} if pieces else {}
    return Case("context_precision", name, {"input": QUESTION, "output": ANSWER},
                {"PieceVerdicts": [{"verdicts": [{"verdict": v, "reason": "r"} for v in verdicts]}]},
                [{"verdicts": listed}], expect, scale=scale, options=options,
                mastra_args={"options": {**options, "scale": scale if mastra_scale is None else mastra_scale}})


MANY = [f"Nile fact number {i}." for i in range(1, 22)]  # 21 pieces: localjudge asks 20, then 1


def many_precision() -> Case:
    """21 pieces, useful first and last: localjudge asks 20 then 1 in the step's one call; both
    score (1/1 + 2/21) / 2."""
    verdicts = ["yes"] + ["no"] * 19 + ["yes"]
    return Case("context_precision", "many-pieces-in-parts", {"input": QUESTION, "output": ANSWER},
                {"PieceVerdicts": [{"verdicts": [{"verdict": v, "reason": "r"} for v in part]}
                                   for part in (verdicts[:20], verdicts[20:])]},
                [{"verdicts": [{"context_index": i, "verdict": v, "reason": "r"} for i, v in enumerate(verdicts)]}],
                0.55, options={"context": MANY}, mastra_args={"options": {"context": MANY, "scale": 1.0}})


PRECISION_CASES = [
    precision("all-useful", ["yes", "yes", "yes"], 1.0),
    precision("none-useful", ["no", "no"], 0.0),
    precision("useful-first", ["yes", "no", "no"], 1.0),
    precision("useful-last", ["no", "no", "yes"], 0.33),
    precision("useful-first-and-third", ["yes", "no", "yes"], 0.83),
    precision("useful-second-and-fourth", ["no", "yes", "no", "yes", "no"], 0.5),
    precision("listed-out-of-order", ["no", "yes", "yes"], 0.58, order=[2, 0, 1]),
    precision("scale-5", ["yes", "no", "yes"], 4.17, scale=5),
    many_precision(),
    precision("scale-10", ["no", "yes"], 5.0, scale=10),
    precision("rounding-0.525", ["no", "no", "yes", "yes", "yes", "yes"], Differs("rounding", mastra=0.53, local=0.52),
              context=[*PIECES, "The Nile has two main tributaries."]),
    unscripted(precision("no-context", ["yes"], REFUSED, context=[]), mastra=True),
    precision("scale-0", ["no", "yes"], Differs("scale-0", mastra=0.5, local=REFUSED), scale=0),
]


def relevance(name: str, pieces: list[tuple[str, bool]], missing: int, expect: Outcome | Differs, *,
              scale: float = 1.0, mastra_scale: float | None = None, penalties: dict[str, float] | None = None,
              context: list[str] | None = None, get_context: Callable[..., Any] | None = None,
              run: dict[str, Any] | None = None, extractor: Any = None, local_calls: int | None = None) -> Case:
    """A context relevance case: (relevance, used) per piece and how many notes of missing context."""
    context = PIECES[:len(pieces)] if context is None else context
    notes = [f"missing fact {i}" for i in range(missing)]
    local = {"evaluations": [{"relevance": r, "used": "yes" if u else "no", "reason": "r"} for r, u in pieces],
             "missing_context": notes}
    mastra = {"evaluations": [{"context_index": i, "contextPiece": p, "relevanceLevel": r, "wasUsed": u,
                               "reasoning": "r"} for i, (p, (r, u)) in enumerate(zip(context, pieces, strict=False))],
              "missingContext": notes, "overallAssessment": "a"}
    options: dict[str, Any] = {"context": context} if context and get_context is None else {}
    if get_context is not None:
        options["get_context"] = get_context
    given: dict[str, Any] = {"scale": scale if mastra_scale is None else mastra_scale}
    if extractor is not None:
        given["contextExtractor"] = extractor
    elif context:
        given["context"] = context
    if penalties:
        options["penalties"] = penalties
        given["penalties"] = penalties
    return Case("context_relevance", name, run or {"input": QUESTION, "output": ANSWER},
                {"ContextEvaluations": [local]}, [mastra], expect, scale=scale, options=options,
                mastra_args={"options": given}, local_calls=local_calls)


def many_relevance(name: str, notes: tuple[list[str], list[str]], mastra_notes: list[str],
                   expect: Outcome | Differs) -> Case:
    """21 pieces, every one high and used: localjudge asks 20 then 1 in the step's one call, each
    part with its own missing notes (`notes`); Mastra's judge sees all 21 at once (`mastra_notes`)."""
    high = {"relevance": "high", "used": "yes", "reason": "r"}
    local = [{"evaluations": [high] * count, "missing_context": part}
             for count, part in zip((20, 1), notes, strict=True)]
    mastra = {"evaluations": [{"context_index": i, "contextPiece": p, "relevanceLevel": "high", "wasUsed": True,
                               "reasoning": "r"} for i, p in enumerate(MANY)],
              "missingContext": mastra_notes, "overallAssessment": "a"}
    return Case("context_relevance", name, {"input": QUESTION, "output": ANSWER}, {"ContextEvaluations": local},
                [mastra], expect, options={"context": MANY}, mastra_args={"options": {"context": MANY, "scale": 1.0}})


AGENT_RUN = {"input": {"inputMessages": [{"role": "user", "content": QUESTION}], "rememberedMessages": [],
                       "systemMessages": [], "taggedSystemMessages": {}},
             "output": [{"role": "assistant", "content": ANSWER}]}

RELEVANCE_CASES = [
    relevance("all-high-used", [("high", True), ("high", True)], 0, 1.0),
    relevance("mixed", [("high", True), ("medium", False), ("none", False)], 0, 0.57),
    relevance("high-unused", [("high", True), ("high", False), ("low", False)], 0, 0.67),
    relevance("missing-two", [("high", True), ("medium", True)], 2, 0.55),
    relevance("missing-capped", [("high", True)], 4, 0.5),
    relevance("all-none", [("none", False), ("none", False)], 1, 0.0),
    relevance("own-penalties", [("high", False), ("high", True), ("low", True)], 2, 0.17,
              penalties={"unusedHighRelevanceContext": 0.2, "missingContextPerItem": 0.25,
                         "maxMissingContextPenalty": 0.4}),
    relevance("scale-5", [("high", True), ("medium", True), ("low", False)], 0, 3.33, scale=5),
    relevance("scale-10", [("high", True), ("none", False)], 1, 3.5, scale=10),
    many_relevance("many-pieces-in-parts", ([], ["the source in km"]), ["the source in km"], 0.85),
    # The first part's 20 pieces lack what the 21st gives: its note stays, as Mastra's one look would not give it.
    many_relevance("many-pieces-gap-filled-elsewhere", (["the Nile's length in miles"], []), [],
                   Differs("context-parts-gaps", mastra=1.0, local=0.85)),
    relevance("rounding-0.675", [("high", True)] * 3 + [("low", True)], 1,
              Differs("rounding", mastra=0.68, local=0.67)),
    unscripted(relevance("empty-context-from-hook", [], 0, 5.0, scale=5, context=[], get_context=lambda run: [],
                         run=AGENT_RUN, extractor={"$returns": []}, local_calls=0)),
    unscripted(relevance("empty-context-unrounded", [], 0, Differs("unrounded", mastra=0.125, local=0.13),
                         scale=0.125, context=[], get_context=lambda run: [], run=AGENT_RUN,
                         extractor={"$returns": []})),
    unscripted(relevance("no-context", [("high", True)], 0, REFUSED, context=[]), mastra=True),
    relevance("scale-0", [("high", True), ("low", False)], 0, Differs("scale-0", mastra=0.65, local=REFUSED), scale=0),
]

DIMENSIONS = ("content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance")
WEIGHTS = {"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1}
CLEAN = "What is the capital of Australia?"
NOISY = "What is the capital of Australia? Many people say Sydney, the biggest city."
BASELINE = "The capital of Australia is Canberra."


def noise(name: str, impacts: list[str], overall: str, issues: int, expect: Outcome | Differs, *,
          output: str = "Canberra is the capital of Australia, not Sydney.", scale: float = 1.0,
          weights: dict[str, float] | None = None, baseline: str | None = BASELINE,
          threshold: float | None = None) -> Case:
    """A noise sensitivity case: the impact on each of the five dimensions, the overall impact
    (Mastra's robustnessScore is its weight) and the number of major issues; `threshold`: the
    discrepancy threshold (0.2 when not given)."""
    notes = [f"issue {i}" for i in range(issues)]
    local = {**{d: {"impact": i} for d, i in zip(DIMENSIONS, impacts, strict=True)}, "overall_impact": overall,
             "major_issues": notes}
    table = {**WEIGHTS, **(weights or {})}
    mastra = {"dimensions": [{"dimension": d, "impactLevel": i, "specificChanges": "c", "noiseInfluence": "n"}
                             for d, i in zip(DIMENSIONS, impacts, strict=True)],
              "overallAssessment": "a", "majorIssues": notes, "robustnessScore": table[overall]}
    options: dict[str, Any] = {"noisy_query": NOISY}
    given: dict[str, Any] = {"noisyQuery": NOISY}
    if baseline is not None:
        options["baseline_response"] = baseline
        given["baselineResponse"] = baseline
    if weights:
        options["impact_weights"] = weights
        given.setdefault("scoring", {})["impactWeights"] = weights
    if threshold is not None:
        options["discrepancy_threshold"] = threshold
        given.setdefault("scoring", {})["discrepancyThreshold"] = threshold
    return Case("noise_sensitivity", name, {"input": CLEAN, "output": output}, {"NoiseAnalysis": [local]}, [mastra],
                expect, scale=scale, options=options, mastra_args={"options": given})


NOISE_CASES = [
    noise("robust", ["none"] * 5, "none", 0, 1.0),
    noise("minimal", ["minimal"] * 5, "minimal", 0, 0.85),
    noise("close-agreement", ["none", "moderate", "significant", "none", "none"], "minimal", 1, 0.75),
    noise("discrepancy-takes-lower", ["significant"] * 5, "none", 0, 0.3),
    # The discrepancy threshold's edges: the overall impact's weight is kept unless the mean
    # dimension weight is lower by more than 0.2 (0.3 and 0.21 apart: the mean; 0.19 and exactly
    # 0.2 apart: the weight; the mean higher: the weight).
    noise("gap-0.3-takes-lower", ["none", "none", "moderate", "moderate", "significant"], "none", 0, 0.7),
    noise("gap-0.21-takes-lower", ["minimal", "minimal", "moderate", "moderate", "significant"], "minimal", 0, 0.64),
    noise("gap-0.19-keeps-overall", ["none", "none", "moderate", "moderate", "minimal"], "none", 0, 1.0),
    noise("gap-exactly-0.2-keeps-overall", ["significant"] * 5, "moderate", 0, 0.5, weights={"moderate": 0.5}),
    noise("mean-higher-keeps-overall", ["none"] * 5, "significant", 0, 0.3),
    noise("own-threshold-keeps-overall", ["none", "none", "moderate", "moderate", "significant"], "none", 0, 1.0,
          threshold=0.4),
    noise("own-threshold-takes-lower", ["significant"] * 5, "minimal", 1, 0.2, threshold=0.5),
    noise("issues-at-cap", ["none"] * 5, "none", 3, 0.7),
    noise("issues-capped", ["none"] * 5, "none", 4, 0.7),
    noise("severe", ["severe"] * 5, "severe", 2, 0.0),
    noise("own-weights", ["moderate"] * 5, "moderate", 0, 0.5, weights={"moderate": 0.5}),
    unscripted(noise("empty-response", ["none"] * 5, "none", 0, REFUSED, output=""), mastra=True),
    unscripted(noise("no-baseline", ["none"] * 5, "none", 0, REFUSED, baseline=None), mastra=True),
    noise("scale-5", ["minimal"] * 5, "minimal", 0, Differs("no-scale-option", mastra=0.85, local=4.25), scale=5),
]

CASES = PRECISION_CASES + RELEVANCE_CASES + NOISE_CASES
