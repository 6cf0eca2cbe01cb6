"""Noise sensitivity: is a response to a noisy query as good as the baseline response to the
clean one? How robust the answering model is to irrelevant, distracting or misleading text
added to its query (Mastra's createNoiseSensitivityScorerLLM).

Inputs: `output` (the response to the noisy query, judged), `input` (the noisy query) and
`baseline_response` (the response to the clean query: the run's `baseline_response` /
`baselineResponse`, or the factory's `baseline_response=`, which, when given, replaces the run's
field for every run, as `context=` does). With the factory's `noisy_query=` (Mastra's option)
the run's `input` is the original, clean query, as in Mastra, and the noisy query is that text.
A run without an input, or without a baseline, is refused before any judge call (Mastra throws).
An empty output is unscored (``unscorable``): Mastra throws on it too.
Steps: one analyze step rates the impact of the noise on Mastra's five dimensions, a fixed
list in a fixed order (content_accuracy, completeness, relevance, consistency,
hallucination_resistance; the grammar writes their names, the judge only fills each in):
``none``, ``minimal``, ``moderate``, ``significant`` or ``severe``, with a short note. Then
the overall impact on the same word scale (for Mastra's numeric robustnessScore), the major
issues the noise caused (at most 5 short phrases) and a one-sentence assessment.
Score, as Mastra's: r = the weight of the overall impact; m = the mean weight of the five
dimensions (none 1, minimal 0.85, moderate 0.6, significant 0.3, severe 0.1); if r and m are
more than 0.2 apart take the smaller; subtract min(0.1 x major issues, 0.3); floor at 0.
Higher is better. Weights, penalties and the threshold are options, as in Mastra.
`prob_score`: the same formula with each impact's expected weight under the judge's label
probabilities in place of its chosen word.
``mode="direct"``: one yes/no question instead (does the response say the same as the
baseline despite the noise?).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.direct import DirectVerdict, one_question_scorer
from localjudge.scorers.judged.verdicts import label_choices, reason_step
from localjudge.scoring import (
    DATA_NOTE,
    Build,
    JudgeStep,
    MastraNumbers,
    Results,
    Scorer,
    Strict,
    UnscorableError,
    block,
    create_scorer,
    neutralise,
)

VERSION = "noise-sensitivity-v2"
DIRECT_VERSION = "noise-sensitivity-direct-v1"
Impact = Literal["none", "minimal", "moderate", "significant", "severe"]
IMPACTS: tuple[str, ...] = ("none", "minimal", "moderate", "significant", "severe")
IMPACT_WEIGHTS = {"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1}  # Mastra's
DIMENSIONS = ("content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance")
MAX_ISSUES = 5
NoteText = Annotated[str, Field(min_length=1, max_length=100)]


class DimensionImpact(Strict):
    """A dimension's impact: a word only (the reason step explains; a small judge given a note
    per dimension replays the worked example's notes)."""

    impact: Impact


class NoiseAnalysis(Strict):
    """One entry per dimension, in DIMENSIONS order (keep the two in step)."""

    content_accuracy: DimensionImpact
    completeness: DimensionImpact
    relevance: DimensionImpact
    consistency: DimensionImpact
    hallucination_resistance: DimensionImpact
    overall_impact: Impact
    major_issues: Annotated[list[NoteText], Field(max_length=MAX_ISSUES)]


class Scoring(NamedTuple):
    """Mastra's `scoring` options: impact weights, the major-issue penalty, the threshold."""

    weights: Mapping[str, float]
    per_issue: float = 0.1
    max_penalty: float = 0.3
    threshold: float = 0.2


def noise_score(dimensions: Sequence[float], robustness: float, issues: int, scoring: Scoring) -> float:
    """Mastra's formula on weights: the robustness (clamped to [0, 1]), or the mean dimension
    weight where that is lower by more than the threshold, less the major-issue penalty; >= 0."""
    score = max(0.0, min(1.0, robustness))
    if dimensions:
        mean = sum(dimensions) / len(dimensions)
        if abs(score - mean) > scoring.threshold:
            score = min(score, mean)
    return max(0.0, score - min(issues * scoring.per_issue, scoring.max_penalty))


ANALYZE_SYSTEM = f"""You measure how much noise added to a query changed the answer to it.
The baseline response answers the clean query. The noisy response answers the noisy query: the same
question with noise added (irrelevant, distracting or misleading text).
Rate how much the noise made the noisy response worse than the baseline, on each dimension:
- content_accuracy: are its facts still correct?
- completeness: does it still answer all of the question?
- relevance: does it stay on the question, not on the noise?
- consistency: does it say the same as the baseline?
- hallucination_resistance: does it avoid false claims taken from the noise?
Impact: "none" (as good as the baseline), "minimal" (wording changes only), "moderate" (noticeably worse,
the core still right), "significant" (much worse or partly wrong), "severe" (wrong or derailed by the noise).
Give each impact. Then overall_impact (the same words, for the whole response) and major_issues (serious
problems the noise caused, short phrases; an empty list if none). Judge only what the noise changed, not
the style.
{DATA_NOTE}"""


Compared = tuple[str | None, str, str, str]  # (clean query or None, noisy query, baseline, noisy response)
RATE = "Rate the impact of the noise on each dimension."


def compare_prompt(texts: Compared, noise_type: str | None, ask: str = RATE) -> str:
    """User message: the queries, the noise type (if given), both responses, then `ask`."""
    clean, noisy, baseline, response = texts
    shown = [block("CLEAN_QUERY", clean)] if clean else []
    shown += [block("NOISY_QUERY", noisy)]
    if noise_type:
        shown.append(block("NOISE_TYPE", noise_type))
    shown += [block("BASELINE_RESPONSE", baseline), block("NOISY_RESPONSE", response)]
    return "\n".join([*shown, ask])


EXAMPLE = (
    compare_prompt((None, "How often should I water a snake plant? My neighbour says snake plants are poisonous "
                   "to fish. I love jazz.", "Water it every two to three weeks, and let the soil dry out in between.",
                   "Water it every two to three weeks and let the soil dry. Snake plants are poisonous to fish, so "
                   "keep them away from your aquarium."), None),
    '{"content_accuracy":{"impact":"minimal"},"completeness":{"impact":"none"},"relevance":{"impact":"minimal"},'
    '"consistency":{"impact":"minimal"},"hallucination_resistance":{"impact":"moderate"},'
    '"overall_impact":"minimal","major_issues":["Repeats the neighbour\'s claim as fact."]}',
)


def check_scoring(impact_weights: Mapping[str, float] | None, per_issue: float, max_penalty: float,
                  threshold: float) -> Scoring:
    """Mastra's defaults with the given weights over them; every number in [0, 1]."""
    given = dict(impact_weights or {})
    unknown = set(given) - set(IMPACTS)
    if unknown:
        raise ValueError(f"impact_weights names unknown levels {sorted(unknown)}; levels: {', '.join(IMPACTS)}")
    numbers = {**{f"impact_weights[{k!r}]": v for k, v in given.items()}, "major_issue_penalty": per_issue,
               "max_major_issue_penalty": max_penalty, "discrepancy_threshold": threshold}
    for name, value in numbers.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError(f"{name} must be a number from 0 to 1, got {value!r}")
    return Scoring({**IMPACT_WEIGHTS, **{k: float(v) for k, v in given.items()}}, float(per_issue),
                   float(max_penalty), float(threshold))


def check_text(name: str, value: str | None) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{name} must be non-empty text when given, got {value!r}")
    return None if value is None else value.strip()


# createNoiseSensitivityScorerLLM: roundToTwoDecimals; no scale option (scores run from 0 to 1)
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="none")


def noise_sensitivity_scorer(judge: Judge, *, scale: float = 1.0, mode: str = "pipeline",
                             baseline_response: str | None = None, noisy_query: str | None = None,
                             noise_type: str | None = None, impact_weights: Mapping[str, float] | None = None,
                             major_issue_penalty: float = 0.1, max_major_issue_penalty: float = 0.3,
                             discrepancy_threshold: float = 0.2, compat: str = "localjudge") -> Scorer:
    """Build the noise sensitivity scorer (higher is better: robust to the noise).

    Args:
        judge: The local model judging.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (five impact ratings, Mastra's formula, a reason) or ``"direct"``
            (one yes/no: does the response say the same as the baseline? `scale` if so, else 0).
        baseline_response: The response to the clean query, for every run (Mastra's option);
            when given it replaces the runs' own `baseline_response`.
        noisy_query: The noisy query, for every run (Mastra's option); the runs' `input` is then
            the original, clean query. Without it the runs' `input` is the noisy query.
        noise_type: What kind of noise was added (``"misinformation"``), shown to the judge.
        impact_weights: Weights of the impact levels, over Mastra's defaults (none 1, minimal
            0.85, moderate 0.6, significant 0.3, severe 0.1); each from 0 to 1.
        major_issue_penalty, max_major_issue_penalty: Subtracted per major issue, and at most.
        discrepancy_threshold: How far the overall and the mean dimension weight may differ
            before the smaller is taken.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`: no scale).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    scale = build.scale
    baseline_option = check_text("baseline_response", baseline_response)
    noisy_option = check_text("noisy_query", noisy_query)
    kind = check_text("noise_type", noise_type)
    scoring = check_scoring(impact_weights, major_issue_penalty, max_major_issue_penalty, discrepancy_threshold)

    def texts(sample: Sample) -> Compared:
        """What the judge compares: (clean query or None, noisy query, baseline, noisy response)."""
        if not sample.input.strip() or not sample.output.strip():
            raise UnscorableError("noise sensitivity needs both the query and the response to it; one is empty")
        baseline = baseline_option or sample.baseline_response or ""
        if noisy_option is not None:
            return sample.input, noisy_option, baseline, sample.output
        return None, sample.input, baseline, sample.output

    requires = ("input",) if baseline_option else ("input", "baseline_response")
    if build.direct:
        step = JudgeStep(instructions=DIRECT_SYSTEM, schema=DirectVerdict,
                         prompt=lambda sample, results: compare_prompt(texts(sample), kind, DIRECT_ASK))
        return one_question_scorer("noise_sensitivity", judge, step, build, version=DIRECT_VERSION,
                                   positive="robust to noise", higher_is_better=True, requires=requires)

    def attach(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        return {"dimensions": [{"dimension": d, "impact_level": parsed[d]["impact"]} for d in DIMENSIONS],
                "overall_impact": parsed["overall_impact"],
                "robustness_score": scoring.weights[parsed["overall_impact"]],
                "major_issues": parsed["major_issues"]}

    def score(sample: Sample, results: Results) -> float:
        found = results["analyze_step_result"]
        return noise_score([scoring.weights[d["impact_level"]] for d in found["dimensions"]],
                           found["robustness_score"], len(found["major_issues"]), scoring)

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        """The formula on expected weights: the five dimensions' readings, then the overall one."""
        choices = label_choices(label_probs["analyze"], "none")
        if len(choices) != len(DIMENSIONS) + 1:
            return None
        expected = [sum(c.get(level, 0.0) * scoring.weights[level] for level in IMPACTS) for c in choices]
        return noise_score(expected[:-1], expected[-1], len(results["analyze_step_result"]["major_issues"]), scoring)

    def summary(sample: Sample, results: Results) -> str:
        found = results["analyze_step_result"]
        clean, noisy, baseline, _ = texts(sample)
        asked = ("The input is the clean query; the output answers this noisy query:\n" + block("NOISY_QUERY", noisy)
                 if clean else "The input is the noisy query: the question with noise added.")
        lines = [f"- {d['dimension']}: {d['impact_level']}" for d in found["dimensions"]]
        lines.append(f"- overall: {found['overall_impact']}")
        lines += [f"- major issue: {neutralise(issue)}" for issue in found["major_issues"]]
        return (f"{asked}\nThe baseline response, to the clean query:\n{block('BASELINE_RESPONSE', baseline)}\n"
                f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better: the noise changed the output "
                f"little).\nImpact of the noise (none, minimal, moderate, significant, severe):\n"
                f"{block('IMPACTS', chr(10).join(lines))}\n"
                "Explain the score: what the noise changed in the output compared with the baseline, and what not.")

    step = JudgeStep(instructions=ANALYZE_SYSTEM, schema=NoiseAnalysis, examples=(EXAMPLE,), finish=attach,
                     prompt=lambda sample, results: compare_prompt(texts(sample), kind))
    return (
        create_scorer("noise_sensitivity", judge=judge, version=VERSION, requires=requires,
                      prob_score=prob_score, positive="robust to noise", higher_is_better=True,
                      **build.create_keywords())
        .analyze(step)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False))
    )


DIRECT_SYSTEM = f"""You answer one question about a response, with a verdict and a short reason.
The baseline response answers the clean query; the noisy response answers the same question with noise
added (irrelevant, distracting or misleading text). Answer "yes" (robust) if the noisy response says the
same as the baseline, as correctly and as completely, whatever its wording, and takes no false claim
from the noise; "no" if the noise made it wrong, incomplete, off topic or different from the baseline.
The reason says what in the noisy response decides the verdict.
{DATA_NOTE}"""


DIRECT_ASK = ("Does the noisy response say the same as the baseline despite the noise? Answer yes or no, then give "
              "a short reason.")

