"""Answer similarity: how closely the output says what a reference answer (the ground truth) says.

Inputs: `output` (judged) and `ground_truth` (the reference answer: required, as Mastra throws
without it, unless ``require_ground_truth=False``: then a run without one scores 0 with no judge
call); `input`, when given, is shown so the judge knows what both answer.
Units come from both texts by rule (their sentences, `statements.sentences_of`, every one: over
10 are asked in parts of at most 10 in the step's one judge call, as Mastra sets no cap), so
the judge cannot skip, invent or merge one, and the grammar fixes every verdict count. Steps:
- preprocess: one verdict per statement of the output against the reference: ``agrees`` (the
  reference says it too), ``extra`` (the reference does not mention it: Mastra's
  ``extraInOutput``) or ``contradicts`` (it conflicts with the reference: Mastra's
  ``contradictions``);
- analyze: one match per statement of the reference, Mastra's match types in words a small
  model reads: ``exact``, ``reworded`` (Mastra's ``semantic``), ``partial``, ``missing`` (not
  said, or said otherwise);
- score, Mastra's formula with its options: exact counts 1 + exact_match_bonus (1.2), semantic
  semantic_threshold (0.8), partial half of that (0.4), missing -missing_penalty (-0.15); the
  sum over n reference statements is divided by n x (1 + exact_match_bonus), then
  contradiction_penalty (1.0) is taken off per contradiction and min(extra_info_penalty (0.05)
  x extras, 0.2) for the extras; clamped to [0, 1], x scale. Higher is better.
Edge cases: an empty output: 0 (every reference statement is missing); an output equal to the
reference (ignoring case, spacing and end punctuation): `scale`, both with no judge call.
`prob_score`: the same formula on the expected counts, each verdict weighted by its label
probability. ``mode="direct"``: one yes/no question (does the response say the same as the
reference?) instead, with the reference shown.
The schemas, prompts and worked examples are in `answer_similarity_prompts`, the formula and
its options in `answer_similarity_formula`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.answer_similarity_formula import Weights, check_weight, similarity
from localjudge.scorers.judged.answer_similarity_prompts import (
    CHECKS_EXAMPLE,
    CHECKS_SYSTEM,
    DIRECT_SYSTEM,
    EXAMPLE_QUESTION,
    EXAMPLE_REFERENCE,
    EXAMPLE_RESPONSE,
    MATCH_TYPES,
    MATCHES_EXAMPLE,
    MATCHES_SYSTEM,
    REASON_EXAMPLE,
    ReferenceMatch,
    ReferenceMatches,
    ResponseCheck,
    ResponseChecks,
    checks_prompt,
    direct_prompt,
    matches_prompt,
)
from localjudge.scorers.judged.direct import DirectVerdict, one_question_scorer
from localjudge.scorers.judged.statements import sentences_of
from localjudge.scorers.judged.verdicts import label_choices, reason_step
from localjudge.scoring import (
    MAX_ITEMS,
    Build,
    JudgeStep,
    MastraNumbers,
    Results,
    Scorer,
    Shortcut,
    block,
    create_scorer,
    exactly,
    neutralise,
    normal,
    part_of,
    spans,
)

VERSION = "answer-similarity-v1"
DIRECT_VERSION = "answer-similarity-direct-v1"


def split_output(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """Preprocess's split: the output's sentences in parts of at most `MAX_ITEMS`."""
    return spans(len(sentences_of(sample.output)), MAX_ITEMS)


def split_truth(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """Analyze's split: the ground truth's sentences in parts of at most `MAX_ITEMS`."""
    return spans(len(sentences_of(sample.ground_truth or "")), MAX_ITEMS)


def part_units(text: str, results: Results) -> tuple[list[str], int]:
    """The sentences of `text` this part asks about, and the number of its first."""
    units = sentences_of(text)
    start, end = part_of(results, len(units))
    return units[start:end], start + 1


def render_checks(sample: Sample, results: Results) -> str:
    return checks_prompt(sample.input, sample.ground_truth or "", *part_units(sample.output, results))


def checks_schema(sample: Sample, results: Results) -> type[BaseModel]:
    """Exactly one verdict per statement of the output (of this part of it)."""
    return exactly(ResponseCheck, len(part_units(sample.output, results)[0]), ResponseChecks)


def attach_checks(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    output_units = sentences_of(sample.output)
    return {"output_units": output_units, "ground_truth_units": sentences_of(sample.ground_truth or ""),
            "checks": [{"output_unit": u, **v} for u, v in zip(output_units, parsed["verdicts"], strict=True)]}


def render_matches(sample: Sample, results: Results) -> str:
    return matches_prompt(sample.input, sample.output, *part_units(sample.ground_truth or "", results))


def matches_schema(sample: Sample, results: Results) -> type[BaseModel]:
    """Exactly one match per statement of the ground truth (of this part of it)."""
    return exactly(ReferenceMatch, len(part_units(sample.ground_truth or "", results)[0]), ReferenceMatches)


def attach_matches(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    """Mastra's analysis: the matches (in its match types), the extras, the contradictions."""
    checks = results["preprocess_step_result"]["checks"]
    truth_units = sentences_of(sample.ground_truth or "")
    return {
        "matches": [{"ground_truth_unit": u, "match_type": MATCH_TYPES[m["match"]], "reason": m["reason"]}
                    for u, m in zip(truth_units, parsed["matches"], strict=True)],
        "extra_in_output": [c["output_unit"] for c in checks if c["verdict"] == "extra"],
        "contradictions": [{"output_unit": c["output_unit"], "reason": c["reason"]}
                           for c in checks if c["verdict"] == "contradicts"],
    }


CHECKS_STEP = JudgeStep(instructions=CHECKS_SYSTEM, prompt=render_checks, schema=checks_schema,
                        examples=(CHECKS_EXAMPLE,), finish=attach_checks, split=split_output)
MATCHES_STEP = JudgeStep(instructions=MATCHES_SYSTEM, prompt=render_matches, schema=matches_schema,
                         examples=(MATCHES_EXAMPLE,), finish=attach_matches, split=split_truth)

NO_TRUTH = (0.0, "No ground truth was given, so there is nothing to compare the output with: score 0.")
EMPTY = (0.0, "The output is empty, so it gives none of the reference answer.")
SAME = (1.0, "The output is the reference answer, word for word (ignoring case, spacing and end punctuation).")


def shortcut(sample: Sample, results: Results) -> Shortcut | None:
    if not sample.ground_truth:
        return NO_TRUTH
    if not sample.output.strip():
        return EMPTY
    if normal(sample.output) == normal(sample.ground_truth):
        return SAME
    return None


DIRECT_STEP = JudgeStep(instructions=DIRECT_SYSTEM, prompt=direct_prompt, schema=DirectVerdict)


# createAnswerSimilarityScorer: roundToTwoDecimals, `options.scale ?? 1` (0 kept: every score 0)
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_stays")


def answer_similarity_scorer(
    judge: Judge,
    *,
    scale: float = 1.0,
    mode: str = "pipeline",
    require_ground_truth: bool = True,
    semantic_threshold: float = 0.8,
    exact_match_bonus: float = 0.2,
    missing_penalty: float = 0.15,
    contradiction_penalty: float = 1.0,
    extra_info_penalty: float = 0.05,
    compat: str = "localjudge",
) -> Scorer:
    """Build the answer similarity scorer (higher is better), with Mastra's options.

    Args:
        judge: The local model judging.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (a verdict per statement of each text, Mastra's formula, a reason)
            or ``"direct"`` (one yes/no: does the output say the same as the reference?).
        require_ground_truth: Refuse a run without a ground truth before any judge call
            (Mastra throws); False: such a run scores 0, with no judge call.
        semantic_threshold: What a reworded (semantic) match counts; a partial one counts half.
        exact_match_bonus: An exact match counts 1 + this; the sum is over n x (1 + this).
        missing_penalty: Taken off the sum per missing reference statement.
        contradiction_penalty: Taken off the score per output statement the reference contradicts.
        extra_info_penalty: Taken off per output statement the reference does not mention (at
            most 0.2 in all, Mastra's fixed cap).
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    scale = build.scale  # the scorer keeps build.kept: 0 where Mastra keeps a scale of 0
    weights = Weights(*(check_weight(name, value) for name, value in (
        ("semantic_threshold", semantic_threshold), ("exact_match_bonus", exact_match_bonus),
        ("missing_penalty", missing_penalty), ("contradiction_penalty", contradiction_penalty),
        ("extra_info_penalty", extra_info_penalty))))
    requires = ("ground_truth",) if require_ground_truth else ()
    if build.direct:
        return one_question_scorer("answer_similarity", judge, DIRECT_STEP, build, version=DIRECT_VERSION,
                                   positive="similar to the reference", higher_is_better=True, requires=requires,
                                   shortcut=shortcut)

    def score(sample: Sample, results: Results) -> float:
        analysis = results["analyze_step_result"]
        return similarity(sum(weights.points(m["match_type"]) for m in analysis["matches"]), len(analysis["matches"]),
                          len(analysis["contradictions"]), len(analysis["extra_in_output"]), weights)

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        """The formula on expected counts: each match's points and each check's label weighted
        by the judge's probabilities; None when the readings do not match the verdicts."""
        matches = label_choices(label_probs["analyze"], "exact")
        checks = label_choices(label_probs.get("preprocess", ()), "extra")
        if (len(matches) != len(results["analyze_step_result"]["matches"])
                or len(checks) != len(results["preprocess_step_result"]["checks"])):
            return None
        points = sum(c.get(word, 0.0) * weights.points(kind) for c in matches for word, kind in MATCH_TYPES.items())
        return similarity(points, len(matches), sum(c.get("contradicts", 0.0) for c in checks),
                          sum(c.get("extra", 0.0) for c in checks), weights)

    def summary(sample: Sample, results: Results) -> str:
        analysis = results["analyze_step_result"]
        matches = "\n".join(f"- {m['match_type']}: {neutralise(m['ground_truth_unit'])} ({neutralise(m['reason'])})"
                            for m in analysis["matches"])
        checks = "\n".join(f"- {c['verdict']}: {neutralise(c['output_unit'])} ({neutralise(c['reason'])})"
                           for c in results["preprocess_step_result"]["checks"])
        return (
            f"{block('REFERENCE', sample.ground_truth or '')}\n"
            f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better; reference statements the output "
            f"gives count most when exact, less when reworded (semantic) or partial; each contradiction takes off "
            f"{weights.contradiction_penalty:g}, each extra statement {weights.extra_info_penalty:g}).\n"
            f"How the output gives each reference statement:\n{block('MATCHES', matches)}\n"
            f"The output's statements against the reference:\n{block('CHECKS', checks)}\n"
            "Explain the score: what the output gets right, what it misses, and what it contradicts."
        )

    return (
        create_scorer("answer_similarity", judge=judge, version=VERSION, requires=requires,
                      shortcut=shortcut, prob_score=prob_score, positive="similar to the reference",
                      higher_is_better=True, **build.create_keywords())
        .preprocess(CHECKS_STEP)
        .analyze(MATCHES_STEP)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False, example=_reason_example(score, scale)))
    )


def _reason_example(score: Any, scale: float) -> tuple[Sample, Results, str]:
    """The reason step's worked example: the steps' examples, scored for `scale`."""
    run = Sample("example", EXAMPLE_QUESTION, " ".join(EXAMPLE_RESPONSE), ground_truth=" ".join(EXAMPLE_REFERENCE))
    results: Results = {}
    results["preprocess_step_result"] = attach_checks(run, results, json.loads(CHECKS_EXAMPLE[1]))
    results["analyze_step_result"] = attach_matches(run, results, json.loads(MATCHES_EXAMPLE[1]))
    results["score"] = round(score(run, results) * scale, 2)
    return run, results, REASON_EXAMPLE


__all__ = ["ReferenceMatch", "ReferenceMatches", "ResponseCheck", "ResponseChecks", "Weights",
           "answer_similarity_scorer", "similarity"]
