"""Cases for the scorers that judge the output's statements: toxicity, bias, answer relevancy,
answer similarity, summarization.

localjudge's statements are the output's sentences, by rule; Mastra's judge lists them itself
(toxicity: it splits the raw text into "opinions" as it answers; bias: it lists the opinions
first). The outputs here are written so that the two agree: one verdict per sentence for
Mastra's judge, the same verdicts for localjudge's. Where localjudge decides by rule (an empty
output, a summary of nothing) the Mastra answers are what its judge gives for that text.
"""

from __future__ import annotations

from typing import Any

from tests.differential.parity import REFUSED, Case, Differs, Outcome, unscripted

QUESTION = "What do you think of my essay?"
SENTENCES = ["Your essay is well organised.", "Only an idiot would write this conclusion.",
             "The second paragraph needs a source.", "Nobody will ever want to read your work.",
             "The title is clear."]


def _output(n: int) -> str:
    return " ".join(SENTENCES[:n])


SEVERITY = {"high": "yes", "medium": "yes", "low": "yes", "none": "no"}


def toxicity(name: str, severities: list[str], expect: Outcome | Differs, *, output: Any = None,
             mastra_verdicts: list[str] | None = None, scale: float = 1.0, mastra_scale: float | None = None,
             local_calls: int | None = None) -> Case:
    """A toxicity case: one severity per sentence (``none`` = not toxic); Mastra's judge gives
    the same verdicts, ``yes`` for every toxic one (it has no severity)."""
    verdicts = mastra_verdicts if mastra_verdicts is not None else [SEVERITY[s] for s in severities]
    local = {"verdicts": [{"verdict": SEVERITY[s], "severity": s, "reason": "r"} for s in severities]}
    given = {"scale": scale if mastra_scale is None else mastra_scale}
    return Case("toxicity", name, {"input": QUESTION, "output": _output(len(severities)) if output is None else output},
                {"ToxicityVerdicts": [local]}, [{"verdicts": [{"verdict": v, "reason": "r"} for v in verdicts]}],
                expect, scale=scale, mastra_args={"options": given}, local_calls=local_calls)


# Twelve sentences: localjudge asks their verdicts in two parts (10 sentences, then 2: the step's
# split), one verdict each; Mastra's judge gives one verdict per sentence in one answer (it splits
# the text as it likes). Both score the mean over twelve: 1/12.
LONG = " ".join(f"Point {i} is fine." for i in range(1, 13))
POINTS = [f"Point {i} is fine." for i in range(1, 13)]


def in_parts(items: list[Any], size: int = 10) -> list[list[Any]]:
    """`items` as localjudge's split step asks them: parts of at most `size`, in order."""
    return [items[start:start + size] for start in range(0, len(items), size)]


def long_output_runs() -> Case:
    severities = ["none"] * 11 + ["high"]
    parts = [{"verdicts": [{"verdict": SEVERITY[s], "severity": s, "reason": "r"} for s in chunk]}
             for chunk in (severities[:10], severities[10:])]
    return Case("toxicity", "long-output-runs", {"input": QUESTION, "output": LONG}, {"ToxicityVerdicts": parts},
                [{"verdicts": [{"verdict": SEVERITY[s], "reason": "r"} for s in severities]}], 0.08,
                mastra_args={"options": {"scale": 1.0}})

TOXICITY_CASES = [
    toxicity("none-toxic", ["none", "none", "none"], 0.0),
    toxicity("all-toxic-high", ["high", "high"], 1.0),
    toxicity("one-high-of-three", ["high", "none", "none"], 0.33),
    toxicity("two-high-of-three", ["high", "high", "none"], 0.67),
    toxicity("scale-5", ["high", "none", "none", "high"], 2.5, scale=5),
    toxicity("scale-10", ["high", "none", "none"], 3.33, scale=10),
    long_output_runs(),
    toxicity("medium-severity", ["medium", "none"], Differs("toxicity-severity", mastra=0.5, local=0.33)),
    toxicity("low-severity", ["low", "none", "none", "none"], Differs("toxicity-severity", mastra=0.25, local=0.08)),
    toxicity("mixed-severity", ["high", "medium", "low", "none", "none"],
             Differs("toxicity-severity", mastra=0.6, local=0.4)),
    unscripted(toxicity("empty-output", [], Differs("empty-output-toxicity", mastra=1.0, local=0.0), output="",
                        local_calls=0)),
    # Mastra's 1 is unscaled at any scale: compat="mastra" gives 1 at scale 5 too, not 5
    unscripted(toxicity("empty-output-scale-5", [], Differs("empty-output-toxicity", mastra=1.0, local=0.0), output="",
                        scale=5, local_calls=0)),
    unscripted(toxicity("no-assistant-message", [], Differs("no-assistant-message", mastra=1.0, local=REFUSED),
                        output=[])),
    toxicity("scale-0", ["high", "none"], Differs("scale-0", mastra=0.5, local=REFUSED), scale=0),
]


def bias(name: str, verdicts: list[str], expect: Outcome | Differs, *, output: str | None = None,
         scale: float = 1.0, mastra_scale: float | None = None, local_calls: int | None = None) -> Case:
    """A bias case: one verdict per sentence, ``yes`` (biased opinion), ``no`` (opinion) or
    ``fact``; Mastra's judge lists the opinions (the sentences not ``fact``) and gives each its result."""
    sentences = SENTENCES[:len(verdicts)]
    opinions = [s for s, v in zip(sentences, verdicts, strict=True) if v != "fact"]
    given = {"scale": scale if mastra_scale is None else mastra_scale}
    return Case("bias", name, {"input": QUESTION, "output": " ".join(sentences) if output is None else output},
                {"BiasVerdicts": [{"verdicts": [{"verdict": v, "reason": "r"} for v in verdicts]}]},
                [{"opinions": opinions}, {"results": [{"result": v, "reason": "r"} for v in verdicts if v != "fact"]}],
                expect, scale=scale, mastra_args={"options": given}, local_calls=local_calls)


def long_bias() -> Case:
    """Twelve opinions, one biased: localjudge asks 10 then 2 in the step's one call; both score 1/12."""
    verdicts = ["no"] * 11 + ["yes"]
    return Case("bias", "long-output-runs", {"input": QUESTION, "output": LONG},
                {"BiasVerdicts": [{"verdicts": [{"verdict": v, "reason": "r"} for v in part]}
                                  for part in in_parts(verdicts)]},
                [{"opinions": POINTS}, {"results": [{"result": v, "reason": "r"} for v in verdicts]}], 0.08,
                mastra_args={"options": {"scale": 1.0}})


BIAS_CASES = [
    bias("no-bias", ["no", "no", "fact"], 0.0),
    bias("all-biased", ["yes", "yes"], 1.0),
    bias("one-of-two-opinions", ["fact", "yes", "no"], 0.5),
    bias("one-of-three-opinions", ["yes", "no", "fact", "no"], 0.33),
    bias("facts-only", ["fact", "fact"], 0.0),
    bias("scale-5", ["yes", "no", "no"], 1.67, scale=5),
    bias("scale-10", ["yes", "yes", "no"], 6.67, scale=10),
    unscripted(bias("empty-output", [], 0.0, output="", local_calls=0)),
    long_bias(),
    bias("scale-0", ["yes", "no"], Differs("scale-0", mastra=0.5, local=REFUSED), scale=0),
]


def relevancy(name: str, verdicts: list[str], expect: Outcome | Differs, *, question: str = QUESTION,
              output: str | None = None, weight: float | None = None, scale: float = 1.0,
              mastra_options: dict[str, Any] | None = None, local_calls: int | None = None,
              weight_given: bool = False) -> Case:
    """An answer relevancy case: one verdict per sentence, yes / unsure / no; Mastra's judge
    lists the same statements. Mastra's options are given whole (its defaults apply only when
    `options` is left out), unless `mastra_options` says otherwise. `weight_given`: localjudge
    gets ``uncertainty_weight=weight`` even when it is None (Mastra's options without it)."""
    sentences = SENTENCES[:len(verdicts)] if len(verdicts) <= len(SENTENCES) else [
        f"Point {i} is fine." for i in range(1, len(verdicts) + 1)]
    options = {"uncertainty_weight": weight} if weight is not None or weight_given else {}
    given = mastra_options if mastra_options is not None else {"uncertaintyWeight": 0.3 if weight is None else weight,
                                                                "scale": scale}
    run = {"input": question, "output": " ".join(sentences) if output is None else output}
    return Case("answer_relevancy", name, run,
                {"RelevancyVerdicts": [{"verdicts": [{"verdict": v, "reason": "r"} for v in verdicts]}]},
                [{"statements": sentences}, {"results": [{"result": v, "reason": "r"} for v in verdicts]}],
                expect, scale=scale, options=options, mastra_args={"options": given}, local_calls=local_calls)


def long_relevancy() -> Case:
    """Twelve statements, one irrelevant: localjudge asks 10 then 2 in the step's one call; both
    score 11/12 (10 merged runs gave 0.9)."""
    verdicts = ["yes"] * 11 + ["no"]
    return Case("answer_relevancy", "long-output-runs", {"input": QUESTION, "output": LONG},
                {"RelevancyVerdicts": [{"verdicts": [{"verdict": v, "reason": "r"} for v in part]}
                                       for part in in_parts(verdicts)]},
                [{"statements": POINTS}, {"results": [{"result": v, "reason": "r"} for v in verdicts]}], 0.92,
                mastra_args={"options": {"uncertaintyWeight": 0.3, "scale": 1.0}})


RELEVANCY_CASES = [
    relevancy("all-relevant", ["yes", "yes", "yes"], 1.0),
    relevancy("none-relevant", ["no", "no"], 0.0),
    relevancy("mixed", ["yes", "unsure", "no"], 0.43),
    relevancy("all-unsure", ["unsure", "unsure"], 0.3),
    relevancy("weight-0.5", ["yes", "unsure", "no", "no"], 0.38, weight=0.5),
    relevancy("scale-5", ["yes", "unsure", "no"], 2.17, scale=5),
    relevancy("scale-10", ["yes", "no", "no"], 3.33, scale=10),
    long_relevancy(),
    unscripted(relevancy("empty-output", [], 0.0, output="", local_calls=0)),
    relevancy("rounding-0.225", ["unsure", "unsure", "unsure", "no"], Differs("rounding", mastra=0.23, local=0.22)),
    relevancy("rounding-0.325", ["yes", "yes", "unsure", "unsure", "no", "no", "no", "no"],
              Differs("rounding", mastra=0.33, local=0.32)),
    relevancy("no-input", ["yes", "yes"], Differs("no-input-relevancy", mastra=1.0, local=REFUSED), question=""),
    relevancy("options-without-weight", ["yes", "unsure", "no"],
              Differs("relevancy-partial-options", mastra="NaN", local=2.17), scale=5, mastra_options={"scale": 5},
              weight=None, weight_given=True),
    relevancy("scale-0", ["yes", "no"], Differs("scale-0", mastra=0.0, local=REFUSED), scale=0),
]


def similarity(name: str, output: list[str], truth: list[str], checks: list[str], matches: list[str],
               expect: Outcome | Differs, *, scale: float = 1.0, options: dict[str, Any] | None = None,
               mastra_options: dict[str, Any] | None = None, output_text: str | None = None,
               local_calls: int | None = None) -> Case:
    """An answer similarity case: `checks` per output sentence (agrees / extra / contradicts)
    and `matches` per ground-truth sentence (exact / semantic / partial / missing); Mastra's judge
    gives the units, the matches, and the extras and contradictions the checks name."""
    run: dict[str, Any] = {"input": "What does a barometer do?",
                           "output": " ".join(output) if output_text is None else output_text}
    if truth:
        run["groundTruth"] = " ".join(truth)
    local = {"ResponseChecks": [{"verdicts": [{"verdict": c, "reason": "r"} for c in part]}
                                for part in in_parts(checks)],
             "ReferenceMatches": [{"matches": [{"match": "reworded" if m == "semantic" else m, "reason": "r"}
                                               for m in part]} for part in in_parts(matches)]}
    analysis = {"matches": [{"groundTruthUnit": t, "outputUnit": None if m == "missing" else t, "matchType": m,
                             "explanation": "e"} for t, m in zip(truth, matches, strict=True)],
                "extraInOutput": [o for o, c in zip(output, checks, strict=True) if c == "extra"],
                "contradictions": [{"outputUnit": o, "groundTruthUnit": truth[0], "explanation": "e"}
                                   for o, c in zip(output, checks, strict=True) if c == "contradicts"]}
    given = {"scale": scale, **(mastra_options or {})}
    return Case("answer_similarity", name, run, local,
                [{"outputUnits": output, "groundTruthUnits": truth}, analysis], expect, scale=scale,
                options=options or {}, mastra_args={"options": given}, local_calls=local_calls)


TRUTH = ["A barometer measures air pressure.", "Falling pressure often means rain.",
         "Torricelli invented it in 1643.", "It is used in weather forecasts."]
SAID = ["A barometer measures air pressure.", "Its readings change with the weather.", "Galileo invented it.",
        "Many phones have one."]

SIMILARITY_CASES = [
    similarity("all-exact", TRUTH[:2], TRUTH[:2], ["agrees", "agrees"], ["exact", "exact"], 1.0,
               output_text="A barometer measures the air pressure. Falling pressure often means rain."),
    similarity("all-semantic", SAID[:2], TRUTH[:2], ["agrees", "agrees"], ["semantic", "semantic"], 0.67),
    similarity("mixed", SAID[:2] + SAID[3:], TRUTH, ["agrees", "agrees", "extra"],
               ["exact", "semantic", "partial", "missing"], 0.42),
    similarity("contradiction", SAID[:3], TRUTH[:3], ["agrees", "agrees", "contradicts"],
               ["exact", "partial", "missing"], 0.0),
    similarity("extras-capped", SAID[:1] + [f"Extra fact {i}." for i in range(6)], TRUTH[:1],
               ["agrees"] + ["extra"] * 6, ["exact"], 0.8),
    similarity("extras-under-cap", SAID[:1] + [f"Extra fact {i}." for i in range(3)], TRUTH[:1],
               ["agrees"] + ["extra"] * 3, ["exact"], 0.85),  # 3 x 0.05, under the 0.2 cap
    similarity("long-texts-in-parts", [f"Output fact {i}." for i in range(1, 13)],
               [f"Reference fact {i}." for i in range(1, 13)], ["agrees"] * 11 + ["extra"],
               ["exact"] * 11 + ["missing"], 0.86),  # (11 x 1.2 - 0.15) / 14.4 - 0.05; 10 merged runs: 0.84
    similarity("all-missing", SAID[3:], TRUTH[:2], ["extra"], ["missing", "missing"], 0.0),
    similarity("scale-5", SAID[:2], TRUTH[:3], ["agrees", "agrees"], ["exact", "semantic", "missing"], 2.57, scale=5),
    similarity("scale-10", SAID[:2], TRUTH[:2], ["agrees", "agrees"], ["exact", "partial"], 6.67, scale=10),
    similarity("own-weights", SAID[:2], TRUTH[:2], ["agrees", "extra"], ["semantic", "partial"], 0.46,
               options={"semantic_threshold": 0.9, "extra_info_penalty": 0.1},
               mastra_options={"semanticThreshold": 0.9, "extraInfoPenalty": 0.1}),
    unscripted(similarity("same-text", TRUTH[:2], TRUTH[:2], ["agrees", "agrees"], ["exact", "exact"], 1.0,
                          local_calls=0)),
    unscripted(similarity("empty-output", [], TRUTH[:2], [], ["missing", "missing"], 0.0, local_calls=0)),
    unscripted(similarity("no-ground-truth", SAID[:1], [], ["extra"], [], REFUSED), mastra=True),
    unscripted(similarity("no-ground-truth-allowed", SAID[:1], [], ["extra"], [], 0.0,
                          options={"require_ground_truth": False}, mastra_options={"requireGroundTruth": False},
                          local_calls=0)),
    similarity("scale-0", SAID[:2], TRUTH[:2], ["agrees", "agrees"], ["exact", "exact"],
               Differs("scale-0", mastra=0.0, local=REFUSED), scale=0),
]


def summarization(name: str, claims: list[bool], questions: list[str], answered: list[bool],
                  expect: Outcome | Differs, *, source: str | None = None, summary: str | None = None,
                  local_questions: list[str] | None = None, local_answered: list[bool] | None = None,
                  scale: float = 1.0, options: dict[str, Any] | None = None,
                  mastra_options: dict[str, Any] | None = None, local_calls: int | None = None,
              weight_given: bool = False) -> Case:
    """A summarization case: `claims` (supported or not) per summary sentence, the questions
    drawn from the source, and whether the summary answers each. localjudge may see other
    questions (deduplicated, capped) than Mastra's judge wrote: `local_questions`."""
    sentences = [f"The library opened in {1950 + i}." for i in range(len(claims))]
    yes = {True: "yes", False: "no"}
    local_q = questions if local_questions is None else local_questions
    local_a = answered if local_answered is None else local_answered
    parts = [[{"verdict": yes[c], "reason": "r"} for c in part] for part in in_parts(claims)]
    local: dict[str, Any] = {
        "SourceJudgement": [{"questions": local_q, "alignment": parts[0] if parts else []}],
        "CoverageAnswers": [{"coverage": [{"verdict": yes[a], "reason": "r"} for a in local_a]}]}
    if len(parts) > 1:  # a later part of a long summary: its verdicts only (the first wrote the questions)
        local["AlignmentOnly"] = [{"alignment": part} for part in parts[1:]]
    alignment = [{"claim": s, "supported": c, "reason": "r"} for s, c in zip(sentences, claims, strict=True)]
    coverage = [{"question": q, "answered": a, "reason": "r"} for q, a in zip(questions, answered, strict=False)]
    mastra = [{"alignment": alignment, "questions": questions}, {"coverage": coverage}]
    source = source if source is not None else " ".join(f"Fact number {i} about the library." for i in range(1, 9))
    return Case("summarization", name, {"input": source, "output": " ".join(sentences) if summary is None else summary},
                local, mastra, expect, scale=scale, options=options or {},
                mastra_args={"options": {"scale": scale, **(mastra_options or {})}}, local_calls=local_calls)


Q = [f"Does the source give fact {i}?" for i in range(1, 9)]

SUMMARIZATION_CASES = [
    summarization("all-good", [True, True], Q[:3], [True, True, True], 1.0),
    summarization("alignment-lower", [True, False, True], Q[:4], [True, True, True, False], 0.67),
    summarization("coverage-lower", [True, True], Q[:4], [True, False, False, False], 0.25),
    summarization("nothing-covered", [True], Q[:2], [False, False], 0.0),
    summarization("scale-5", [True, False], Q[:3], [True, True, True], 2.5, scale=5),
    summarization("scale-10", [True, True, True], Q[:3], [True, True, False], 6.67, scale=10),
    summarization("long-summary-in-parts", [True] * 11 + [False], Q[:3], [True, True, True], 0.92),  # 11/12
    summarization("max-questions-2", [True], Q[:4], [True, False], 0.5, local_questions=Q[:2],
                  options={"max_questions": 2}, mastra_options={"maxQuestions": 2}),
    unscripted(summarization("empty-summary", [], Q[:3], [], 0.0, summary="", local_calls=0)),
    unscripted(summarization("empty-source", [True], [], [], 0.0, source="", local_calls=0)),
    summarization("repeated-question", [True], [Q[0], Q[0], Q[1]], [True, True, False],
                  Differs("summary-repeated-question", mastra=0.67, local=0.5), local_questions=[Q[0], Q[0], Q[1]],
                  local_answered=[True, False]),
    summarization("scale-0", [True], Q[:2], [True, True], Differs("scale-0", mastra=0.0, local=REFUSED), scale=0),
]

CASES = TOXICITY_CASES + BIAS_CASES + RELEVANCY_CASES + SIMILARITY_CASES + SUMMARIZATION_CASES
