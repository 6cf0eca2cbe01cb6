"""Summarization: is a summary faithful to its source text, and does it keep the source's main
points? The lower of the two, so a summary cannot pass by being faithful but empty, or
thorough but wrong.

Inputs: `input` (the source text) and `output` (the summary).
The summary's claims are its statements by rule (its sentences, `statements.sentences_of`, every
one: over 10 are asked in parts of at most 10 in the preprocess step's one judge call, the
questions in the first part only; Mastra sets no cap on claims), so the grammar fixes one
verdict per claim. Steps:
- preprocess (sees the source and the summary): closed questions about the source's main points
  (the source answers each "yes"; by the grammar 1 to `max_questions`, and at most one per
  sentence of the source), then one alignment verdict per summary statement: ``yes`` = the
  source states or directly implies it;
- analyze (sees the summary and the questions, never the source, as Mastra's: the judge cannot
  answer from what the summary left out): one coverage verdict per question: ``yes`` = the
  summary answers it.
Score, as Mastra's: min(alignment, coverage) x scale, alignment = supported statements /
statements, coverage = answered questions / questions. Higher is better.
Edge cases: an empty summary or an empty source: 0, with no judge call (Mastra: nothing to
score gives 0).
`prob_score`: the lower of the mean ``yes`` probability over the alignment verdicts and over
the coverage verdicts. ``mode="direct"``: one yes/no question (is the summary faithful to the
source and does it cover its main points?) instead.
The schemas, prompts and worked examples are in `summarization_prompts`; the `source` and
`source_extractor` options (Mastra's `getSourceText`) in `summarization_source`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.direct import DirectVerdict, one_question_scorer
from localjudge.scorers.judged.statements import sentences_of
from localjudge.scorers.judged.summarization_prompts import (
    COVERAGE_EXAMPLE,
    COVERAGE_SYSTEM,
    DIRECT_SYSTEM,
    EXAMPLE_SOURCE,
    EXAMPLE_STATEMENTS,
    JUDGEMENT_EXAMPLE,
    JUDGEMENT_SYSTEM,
    QUESTION_LIMIT,
    REASON_EXAMPLE,
    AlignmentOnly,
    AlignmentVerdict,
    CoverageAnswers,
    CoverageVerdict,
    SourceJudgement,
    coverage_prompt,
    direct_prompt,
    judgement_prompt,
    judgement_schema,
)
from localjudge.scorers.judged.summarization_source import source_of
from localjudge.scorers.judged.verdicts import mean_label_prob, reason_step
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
    part_of,
    spans,
)

VERSION = "summarization-v2"
DIRECT_VERSION = "summarization-direct-v1"
MAX_QUESTIONS = 10  # Mastra's default maxQuestions


def question_cap(source: str, max_questions: int) -> int:
    """How many questions the source may yield: one per sentence, at most `max_questions`, so a
    short source cannot grow questions it does not answer (a small judge pads a long list)."""
    return min(len(sentences_of(source)), max_questions)


def dedupe_questions(questions: list[str]) -> list[str]:
    """The questions, each once (same words, ignoring case and spacing): a repeat adds nothing."""
    seen: set[str] = set()
    kept = []
    for question in questions:
        key = " ".join(question.lower().split())
        if key not in seen:
            seen.add(key)
            kept.append(question)
    return kept


def attach_judgement(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    """Mastra's preprocess result: each claim (a summary statement) with `supported`, and the questions."""
    claims = sentences_of(sample.output)
    return {"alignment": [{"claim": c, "supported": v["verdict"] == "yes", "reason": v["reason"]}
                          for c, v in zip(claims, parsed["alignment"], strict=True)],
            "questions": dedupe_questions(parsed["questions"])}


def split_claims(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """Preprocess's split: the summary's sentences in parts of at most `MAX_ITEMS` (the first
    part also writes the questions; the default join keeps them and joins the verdicts)."""
    return spans(len(sentences_of(sample.output)), MAX_ITEMS)


def part_claims(sample: Sample, results: Results) -> tuple[list[str], int]:
    """The summary sentences this part asks about, and the number of its first."""
    claims = sentences_of(sample.output)
    start, end = part_of(results, len(claims))
    return claims[start:end], start + 1


def questions_of(results: Results) -> list[str]:
    return list(results["preprocess_step_result"]["questions"])


def render_coverage(sample: Sample, results: Results) -> str:
    return coverage_prompt(sample.output, questions_of(results))


def coverage_schema(sample: Sample, results: Results) -> type[BaseModel]:
    """Exactly one coverage verdict per question."""
    return exactly(CoverageVerdict, len(questions_of(results)), CoverageAnswers)


def attach_coverage(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    return {"coverage": [{"question": q, "answered": v["verdict"] == "yes", "reason": v["reason"]}
                         for q, v in zip(questions_of(results), parsed["coverage"], strict=True)]}


COVERAGE_STEP = JudgeStep(instructions=COVERAGE_SYSTEM, prompt=render_coverage, schema=coverage_schema,
                          examples=(COVERAGE_EXAMPLE,), finish=attach_coverage)


def ratio(matched: int, total: int) -> float:
    """Mastra's ratio: matched / total, at most 1; 0 when nothing was judged."""
    return 0.0 if total == 0 else min(1.0, matched / total)


def axes(results: Results) -> tuple[float, float]:
    """(alignment, coverage): supported claims / claims, answered questions / questions."""
    alignment = results["preprocess_step_result"]["alignment"]
    coverage = results["analyze_step_result"]["coverage"]
    return (ratio(sum(v["supported"] for v in alignment), len(alignment)),
            ratio(sum(v["answered"] for v in coverage), len(questions_of(results))))


def score(sample: Sample, results: Results) -> float:
    """min(alignment, coverage): 0 when there is nothing to score (no claims or no questions,
    each an axis of 0)."""
    return min(axes(results))


def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
    """The lower of the mean ``yes`` probability of the alignment and of the coverage verdicts;
    None when the readings do not match the verdicts."""
    alignment = mean_label_prob(label_probs.get("preprocess", ()), "yes",
                                len(results["preprocess_step_result"]["alignment"]))
    coverage = mean_label_prob(label_probs["analyze"], "yes", len(results["analyze_step_result"]["coverage"]))
    return None if alignment is None or coverage is None else min(alignment, coverage)


EMPTY_SUMMARY = (0.0, "The summary is empty, so it keeps nothing of the source: score 0.")
EMPTY_SOURCE = (0.0, "The source text (the input) is empty, so there is nothing to summarize: score 0.")


def shortcut(sample: Sample, results: Results) -> Shortcut | None:
    if not sample.output.strip():
        return EMPTY_SUMMARY
    if not sample.input.strip():
        return EMPTY_SOURCE
    return None


def summary_lines(scale: float) -> Any:
    """The reason step's score line, both sides and what decided them, for scores on [0, scale]."""

    def lines(sample: Sample, results: Results) -> str:
        alignment, coverage = axes(results)
        unsupported = [v["claim"] for v in results["preprocess_step_result"]["alignment"] if not v["supported"]]
        missing = [v["question"] for v in results["analyze_step_result"]["coverage"] if not v["answered"]]
        listed = {name: "\n".join(f"- {neutralise(t)}" for t in texts) or "- none"
                  for name, texts in (("UNSUPPORTED", unsupported), ("UNANSWERED", missing))}
        return (
            "The INPUT is the source text, the OUTPUT its summary.\n"
            f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better; the lower of alignment and "
            f"coverage).\nAlignment (summary statements the source supports): {alignment:.2f}\n"
            f"Coverage (questions about the source that the summary answers): {coverage:.2f}\n"
            f"Summary statements the source does not support:\n{block('UNSUPPORTED', listed['UNSUPPORTED'])}\n"
            f"Questions the summary does not answer:\n{block('UNANSWERED', listed['UNANSWERED'])}\n"
            "Explain the score: name the weaker side and the statements or questions behind it."
        )

    return lines


DIRECT_STEP = JudgeStep(instructions=DIRECT_SYSTEM, prompt=direct_prompt, schema=DirectVerdict)


def check_max_questions(max_questions: int) -> int:
    if isinstance(max_questions, bool) or not isinstance(max_questions, int) or not 0 < max_questions <= QUESTION_LIMIT:
        raise ValueError(f"max_questions must be a whole number from 1 to {QUESTION_LIMIT}, got {max_questions!r}")
    return max_questions


# createSummarizationScorer: roundToTwoDecimals, `options.scale ?? 1` (0 kept: every score 0)
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_stays")


def summarization_scorer(judge: Judge, *, scale: float = 1.0, mode: str = "pipeline",
                         max_questions: int = MAX_QUESTIONS, compat: str = "localjudge", source: str | None = None,
                         source_extractor: Callable[[Any, Any], Any] | None = None) -> Scorer:
    """Build the summarization scorer (higher is better): the run's `input` is the source text,
    its `output` the summary.

    Args:
        judge: The local model judging.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (questions and alignment verdicts, coverage verdicts, a reason) or
            ``"direct"`` (one yes/no: is the summary faithful and complete? `scale` if so, else 0).
        max_questions: At most this many coverage questions are drawn from the source (1 to 20;
            Mastra's default 10).
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`).
        source: Mastra's ``source``: the source text of every run, in place of its input.
        source_extractor: Mastra's ``sourceExtractor``: ``(input, output) -> source text``,
            called on an agent-shaped run (Mastra's agent input and stored output messages),
            before `source`; its result is what is judged and keyed.
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    scale = build.scale  # the scorer keeps build.kept: 0 where Mastra keeps a scale of 0
    cap = check_max_questions(max_questions)
    prepare_run = source_of(source, source_extractor)
    if build.direct:
        return one_question_scorer("summarization", judge, DIRECT_STEP, build, version=DIRECT_VERSION,
                                   positive="faithful and complete", higher_is_better=True, shortcut=shortcut,
                                   prepare_run=prepare_run)

    def render_judgement(sample: Sample, results: Results) -> str:
        claims, first = part_claims(sample, results)
        return judgement_prompt(sample.input, claims, question_cap(sample.input, cap), first)

    def schema(sample: Sample, results: Results) -> type[BaseModel]:
        claims, first = part_claims(sample, results)
        if first > 1:
            return exactly(AlignmentVerdict, len(claims), AlignmentOnly)
        return judgement_schema(len(claims), question_cap(sample.input, cap))

    judgement = JudgeStep(instructions=JUDGEMENT_SYSTEM, prompt=render_judgement, schema=schema,
                          examples=(JUDGEMENT_EXAMPLE,), finish=attach_judgement, split=split_claims)
    return (
        create_scorer("summarization", judge=judge, version=VERSION, shortcut=shortcut,
                      prob_score=prob_score, positive="faithful and complete", higher_is_better=True,
                      prepare_run=prepare_run, **build.create_keywords())
        .preprocess(judgement)
        .analyze(COVERAGE_STEP)
        .generate_score(score)
        .generate_reason(reason_step(summary_lines(scale), show_context=False, example=_reason_example(scale)))
    )


def _reason_example(scale: float) -> tuple[Sample, Results, str]:
    """The reason step's worked example: the steps' examples, scored for `scale`."""
    run = Sample("example", EXAMPLE_SOURCE, " ".join(EXAMPLE_STATEMENTS))
    results: Results = {}
    results["preprocess_step_result"] = attach_judgement(run, results, json.loads(JUDGEMENT_EXAMPLE[1]))
    results["analyze_step_result"] = attach_coverage(run, results, json.loads(COVERAGE_EXAMPLE[1]))
    results["score"] = round(score(run, results) * scale, 2)
    return run, results, REASON_EXAMPLE


__all__ = ["AlignmentVerdict", "CoverageAnswers", "CoverageVerdict", "SourceJudgement", "summarization_scorer"]
