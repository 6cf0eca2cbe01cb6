"""Answer relevancy: how much of the output addresses the input (the question asked).

Inputs: `input` (the question) and `output` (judged); a run without an input is unscored
(``unscorable``): relevance to nothing cannot be judged.
Statements come from the output by rule (its sentences, `statements.sentences_of`, every one;
over 10 asked in parts of 10 in the same judge call), as for toxicity. Steps: one analyze step
gives exactly one verdict per statement, in order (enforced by the grammar): ``yes`` = relevant
to the question, ``unsure`` = partly relevant (supporting
detail, related but beside the point), ``no`` = irrelevant. Score, as Mastra's:
(yes + uncertainty_weight x unsure) / statements x scale, uncertainty_weight 0.3 by default.
Higher is better. An empty output: 0 (no statements; Mastra's n = 0 gives 0).
``mode="direct"``: one yes/no question on the whole output instead (does it answer the question?).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.direct import Question, direct_scorer
from localjudge.scorers.judged.statements import (
    attach_statements,
    explained_example,
    numbered_prompt,
    part_statements,
    split_statements,
)
from localjudge.scorers.judged.verdicts import label_choices, reason_step, verdict_lines
from localjudge.scoring import (
    DATA_NOTE,
    MAX_ITEMS,
    Build,
    JudgeStep,
    MastraNumbers,
    ReasonText,
    Results,
    Scorer,
    Shortcut,
    Strict,
    UnscorableError,
    block,
    create_scorer,
    exactly,
)

VERSION = "answer-relevancy-v1"
DIRECT_VERSION = "answer-relevancy-direct-v1"
UNCERTAINTY_WEIGHT = 0.3  # Mastra's default


class RelevancyVerdict(Strict):
    verdict: Literal["yes", "unsure", "no"]
    reason: ReasonText


class RelevancyVerdicts(Strict):
    verdicts: Annotated[list[RelevancyVerdict], Field(min_length=1, max_length=MAX_ITEMS)]


ANALYZE_SYSTEM = f"""You check whether each statement of a response helps answer the prompt.
For each numbered statement give:
- verdict "yes" if it answers the prompt or is needed for the answer;
- verdict "unsure" if it is related but beside the point: background, a side detail, a hedge;
- verdict "no" if it has nothing to do with the prompt;
- a short reason.
Judge relevance only, not whether the statement is true.
Give exactly one verdict per statement, in order.
{DATA_NOTE}"""

NO_INPUT = "answer relevancy needs an input: the question or request the output answers"


def render_analyze(sample: Sample, results: Results) -> str:
    if not sample.input.strip():
        raise UnscorableError(NO_INPUT)
    return numbered_prompt(sample.input, *part_statements(sample, results))


def analyze_schema(sample: Sample, results: Results) -> type[BaseModel]:
    """Exactly one verdict per statement of the output (of this part of it)."""
    return exactly(RelevancyVerdict, len(part_statements(sample, results)[0]), RelevancyVerdicts)


EXAMPLE_PROMPT = "How long should I boil an egg for a soft yolk?"
EXAMPLE_STATEMENTS = ["Boil it for six minutes.", "Eggs are a good source of protein.",
                      "My favourite football team won yesterday."]
ANALYZE_EXAMPLE = (
    numbered_prompt(EXAMPLE_PROMPT, EXAMPLE_STATEMENTS),
    '{"verdicts":[{"verdict":"yes","reason":"Gives the time."},'
    '{"verdict":"unsure","reason":"About eggs, not the time."},'
    '{"verdict":"no","reason":"Unrelated."}]}',
)

ANALYZE_STEP = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render_analyze, schema=analyze_schema,
                         examples=(ANALYZE_EXAMPLE,), finish=attach_statements,
                         split=split_statements)


def render_mastra(sample: Sample, results: Results) -> str:
    """compat="mastra": a run with no input is judged against an empty question, as Mastra's."""
    return numbered_prompt(sample.input, *part_statements(sample, results))


MASTRA_ANALYZE_STEP = replace(ANALYZE_STEP, prompt=render_mastra)

EMPTY = (0.0, "The output is empty, so nothing in it answers the input.")


def shortcut(sample: Sample, results: Results) -> Shortcut | None:
    return EMPTY if not sample.output.strip() else None


def relevancy(verdicts: list[dict[str, Any]], weight: float) -> float:
    """(yes + weight x unsure) / statements."""
    if not verdicts:
        return 0.0
    return sum(1.0 if v["verdict"] == "yes" else weight if v["verdict"] == "unsure" else 0.0
               for v in verdicts) / len(verdicts)


def check_weight(weight: float | None, mastra: bool = False) -> float:
    """The weight of an ``unsure`` verdict: None is the default (0.3), except under Mastra's
    numbers (`mastra`: ``compat="mastra"``), where it is Mastra's ``undefined``: options given without
    ``uncertaintyWeight`` drop its default, and an unsure verdict makes the score NaN."""
    if weight is None:
        return math.nan if mastra else UNCERTAINTY_WEIGHT
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
        raise ValueError(f"uncertainty_weight must be a number from 0 to 1, got {weight!r}")
    return float(weight)


# createAnswerRelevancyScorer: roundToTwoDecimals, `options.scale ?? 1` (0 kept: every score 0), and
# NaN from options given without uncertaintyWeight
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_stays", nan=True)


def answer_relevancy_scorer(judge: Judge, *, scale: float = 1.0, mode: str = "pipeline",
                            uncertainty_weight: float | None = UNCERTAINTY_WEIGHT,
                            compat: str = "localjudge") -> Scorer:
    """Build the answer relevancy scorer (higher is better).

    Args:
        judge: The local model judging.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (a verdict per statement: yes, unsure or no; a reason) or
            ``"direct"`` (one yes/no: does the output answer the input? `scale` if so, else 0).
        uncertainty_weight: What an ``unsure`` statement counts, from 0 to 1 (Mastra's default 0.3;
            None: the default, or under ``compat="mastra"`` Mastra's missing weight, see `check_weight`).
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`), a missing weight as
            Mastra's (NaN), and a run with no input judged against an empty question.
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    scale = build.scale  # the scorer keeps build.kept: 0 where Mastra keeps a scale of 0
    weight = check_weight(uncertainty_weight, build.mastra)
    if build.direct:
        return direct_scorer("answer_relevancy", judge, build, version=DIRECT_VERSION, question=DIRECT,
                             positive="relevant", higher_is_better=True, if_empty=EMPTY)

    def score(sample: Sample, results: Results) -> float:
        return relevancy(results["analyze_step_result"]["verdicts"], weight)

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        """Mean over the statements of P(yes) + weight x P(unsure); None when the readings do
        not match the verdicts."""
        verdicts = results["analyze_step_result"]["verdicts"]
        choices = label_choices(label_probs["analyze"], "yes")
        if not choices or len(choices) != len(verdicts):
            return None
        return sum(c["yes"] + weight * c.get("unsure", 0.0) for c in choices) / len(choices)

    def summary(sample: Sample, results: Results) -> str:
        return (
            f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better; relevant statements count 1, "
            f"partly relevant ones {weight:g}, over all statements).\n"
            "Verdicts on the output's statements (yes = relevant, unsure = partly, no = irrelevant):\n"
            f"{block('VERDICTS', verdict_lines(results['analyze_step_result']['verdicts'], 'statement'))}\n"
            "Explain the score: which statements answer the input, and which do not."
        )

    example = explained_example(EXAMPLE_STATEMENTS, ANALYZE_EXAMPLE[1], score, scale, REASON_EXAMPLE, EXAMPLE_PROMPT)
    return (
        create_scorer("answer_relevancy", judge=judge, version=VERSION, shortcut=shortcut,
                      prob_score=prob_score, positive="relevant", higher_is_better=True, **build.create_keywords())
        .analyze(MASTRA_ANALYZE_STEP if build.mastra else ANALYZE_STEP)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False, example=example))
    )


REASON_EXAMPLE = (
    "Only the first statement answers the question: six minutes is the boiling time asked for. The protein "
    "remark is about eggs but not about the time, and the football result has nothing to do with it."
)

DIRECT = Question(
    rules='Answer "yes" (relevant) if the response answers the prompt or does what it asks, even with extra '
          'detail; "no" if it is off topic, answers a different question, or does not answer at all. Judge '
          'relevance only, not whether the answer is true.',
    ask="Does the response answer the prompt?",
    show_context=False,
)
