"""Prompt alignment: how well the output does what the user's request and/or the system prompt ask.

Inputs: `output` (judged), `input` (the user's request) and `system` (the system prompt the
answering model had), by `evaluation_mode`: ``"user"`` needs the input, ``"system"`` the system
prompt (a run without it is refused before any judge call, as Mastra throws), ``"both"``
(Mastra's default) either one, and shows the judge each it has (neither: unscored).
Steps: one analyze step rates, in words, the response's intent alignment, completeness and
appropriateness (format, tone): ``fully`` / ``mostly`` / ``partly`` / ``not``, read as 1.0 / 0.7 /
0.4 / 0.0 (Mastra's judge writes these numbers itself), and lists the prompt's requirements (at
most 8), each met ``yes`` or ``no``; the requirements score is met / listed.
Score, Mastra's weights: user mode 0.4 intent + 0.3 requirements + 0.2 completeness + 0.1
appropriateness; system mode 0.35 / 0.35 / 0.15 / 0.15; both: 0.7 x user score + 0.3 x system
score where Mastra 1.10.2 takes the system score to be the user score (a placeholder in its
code), so both = the user formula. Higher is better.
Edge cases: an empty output is unscored (``unscorable``, no judge call), as Mastra throws.
`prob_score`: the same formula over the expected rating values (each label's probability x
its value) and the mean ``yes`` probability of the requirements.
``mode="direct"``: one yes/no instead (does the response do what the prompt asks?).
`include_conversation_history` (Mastra's `includeConversationHistory`): the last N (True: 10) of
an agent input's ``rememberedMessages``, one ``role: text`` line each, oldest first, shown before
the prompts for context only (`localjudge.scorers.judged.conversation_history`). N is part of the
version and the run's input part of the results' keys: runs differing only in history never
share a result.
The schema, prompts and worked examples are in `prompt_alignment_prompts`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.conversation_history import check_history, history_of
from localjudge.scorers.judged.direct import DirectVerdict, one_question_scorer
from localjudge.scorers.judged.prompt_alignment_prompts import (
    EXAMPLE_REASONS,
    EXAMPLE_RUN,
    TARGETS,
    AlignmentAnalysis,
    Target,
    alignment_prompt,
    analyze_system,
    example_answer,
)
from localjudge.scorers.judged.verdicts import label_choices, reason_step
from localjudge.scoring import (
    DATA_NOTE,
    Build,
    JudgeStep,
    MastraNumbers,
    Results,
    Scorer,
    block,
    create_scorer,
    neutralise,
    round_half_up,
)

VERSION = "prompt-alignment-v2"
DIRECT_VERSION = "prompt-alignment-direct-v1"

EvaluationMode = Literal["user", "system", "both"]
EVALUATION_MODES: tuple[EvaluationMode, ...] = ("user", "system", "both")
RATINGS: dict[str, float] = {"fully": 1.0, "mostly": 0.7, "partly": 0.4, "not": 0.0}
DIMENSIONS = ("intent", "requirements", "completeness", "appropriateness")
# Mastra's weights, in DIMENSIONS order ("both" = the user weights, see above).
WEIGHTS: dict[str, tuple[float, float, float, float]] = {
    "user": (0.4, 0.3, 0.2, 0.1), "system": (0.35, 0.35, 0.15, 0.15), "both": (0.4, 0.3, 0.2, 0.1)}


def analysis_of(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's words with their values: each rating's ``score``, the requirements' ratio."""
    requirements = [dict(r) for r in parsed["requirements"]]
    met = sum(r["met"] == "yes" for r in requirements)
    return {**{name: {**parsed[name], "score": RATINGS[parsed[name]["rating"]]}
               for name in ("intent", "completeness", "appropriateness")},
            "requirements": requirements, "requirements_score": met / len(requirements)}


def weighted(weights: Sequence[float], intent: float, requirements: float, completeness: float,
             appropriateness: float) -> float:
    return sum(w * v for w, v in zip(weights, (intent, requirements, completeness, appropriateness), strict=True))


def alignment(analysis: Mapping[str, Any], mode: str) -> float:
    """Mastra's weighted sum of the four dimension scores for `mode`."""
    return weighted(WEIGHTS[mode], analysis["intent"]["score"], analysis["requirements_score"],
                    analysis["completeness"]["score"], analysis["appropriateness"]["score"])


def expected_rating(choice: Mapping[str, float]) -> float:
    return sum(p * RATINGS[label] for label, p in choice.items() if label in RATINGS)


def check_evaluation_mode(evaluation_mode: str) -> EvaluationMode:
    if evaluation_mode not in EVALUATION_MODES:
        raise ValueError(f"unknown evaluation_mode {evaluation_mode!r}; modes: {', '.join(EVALUATION_MODES)}")
    return evaluation_mode


# createPromptAlignmentScorerLLM: roundToTwoDecimals, `options?.scale || 1`
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_is_one")


def prompt_alignment_scorer(judge: Judge, *, scale: float = 1.0, mode: str = "pipeline",
                            evaluation_mode: str = "both", include_conversation_history: bool | int = False,
                            compat: str = "localjudge") -> Scorer:
    """Build the prompt alignment scorer (higher is better).

    Args:
        judge: The local model judging.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (rated dimensions and requirements, Mastra's weighted score, a
            reason) or ``"direct"`` (one yes/no: does the response do what the prompt asks?
            `scale` if so, else 0).
        evaluation_mode: Judge against the user's request (``"user"``: runs need an `input`),
            the system prompt (``"system"``: runs need a `system` prompt) or ``"both"``
            (Mastra's default: either one, each shown where present).
        include_conversation_history: Show the judge the run's earlier messages, for context
            only (Mastra's `includeConversationHistory`): ``True`` the last 10 of an agent
            input's ``rememberedMessages``, a number N the last N (``0``, ``False``: none, the
            default); `localjudge.scorers.judged.conversation_history` says how they are read.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    scale = build.scale
    chosen = check_evaluation_mode(evaluation_mode)
    target = TARGETS[chosen]
    requires = {"user": ("input",), "system": ("system",), "both": ()}[chosen]
    history = check_history(include_conversation_history)
    if build.direct:
        return _direct(judge, build, target, requires, history)
    ask = f"Rate how well the response follows {target.what}."

    def render(run: Sample, results: Results) -> str:
        return alignment_prompt(run, target, ask, history)

    def finish(run: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        return analysis_of(parsed)

    def score(run: Sample, results: Results) -> float:
        return alignment(results["analyze_step_result"], chosen)

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        """The formula over expected ratings and mean P(yes); None when the readings do not
        match the answer (three ratings, one reading per requirement)."""
        ratings = label_choices(label_probs["analyze"], "fully")
        met = label_choices(label_probs["analyze"], "yes")
        if len(ratings) != 3 or not met or len(met) != len(results["analyze_step_result"]["requirements"]):
            return None
        intent, completeness, appropriateness = (expected_rating(c) for c in ratings)
        return weighted(WEIGHTS[chosen], intent, sum(c["yes"] for c in met) / len(met), completeness,
                        appropriateness)

    def summary(run: Sample, results: Results) -> str:
        analysis = results["analyze_step_result"]

        def rated(name: str) -> str:
            return f"- {name}: {analysis[name]['rating']}"

        met = sum(r["met"] == "yes" for r in analysis["requirements"])
        lines = [rated("intent"), f"- requirements: {met} of {len(analysis['requirements'])} met",
                 *(f"  - {r['met']}: {neutralise(r['requirement'])}" for r in analysis["requirements"]),
                 rated("completeness"), rated("appropriateness")]
        weights = ", ".join(f"{name} {w:g}" for name, w in zip(DIMENSIONS, WEIGHTS[chosen], strict=True))
        earlier = history_of(run, history)
        system = f"{block('HISTORY', earlier)}\n" if earlier else ""
        system += f"{block('SYSTEM', run.system)}\n" if "system" in target.shows and run.system else ""
        return (f"{system}Score: {results['score']:g} (from 0 to {scale:g}; higher is better; weights: {weights}; "
                f"ratings: fully 1, mostly 0.7, partly 0.4, not 0; requirements: the share met).\n"
                f"The ratings against {target.what}:\n{block('VERDICTS', chr(10).join(lines))}\n"
                f"Explain the score: what the response does and does not do of what {target.source} {target.asks}.")

    example = (render(EXAMPLE_RUN, {}), _compact(example_answer(chosen)))
    explained = analysis_of(example_answer(chosen))
    explained_results = {"analyze_step_result": explained, "score": round_half_up(alignment(explained, chosen) * scale)}
    reason_example = (EXAMPLE_RUN, explained_results, EXAMPLE_REASONS[chosen])
    step = JudgeStep(instructions=analyze_system(target), prompt=render, schema=AlignmentAnalysis,
                     examples=(example,), finish=finish)
    return (
        create_scorer("prompt_alignment", judge=judge, version=versioned(VERSION, history),
                      id="prompt-alignment-scorer", requires=requires, prob_score=prob_score,
                      positive="aligned with the prompt", higher_is_better=True, **build.create_keywords())
        .analyze(step)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False, example=reason_example))
    )


def versioned(version: str, history: int) -> str:
    """The version, with the history length where one is shown (off: as before, so the results
    of runs without history resume)."""
    return f"{version}+history-{history}" if history else version


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _direct(judge: Judge, build: Build, target: Target, requires: tuple[str, ...], history: int) -> Scorer:
    """Direct mode: one yes/no on the whole response; the system prompt is shown where the mode needs it."""
    instructions = (f"You answer one question about a response, with a verdict and a short reason.\n"
                    f'Answer "yes" if the response does what {target.source} {target.asks}, with no part left '
                    f'undone and no rule broken; "no" if it misses the point, leaves out something asked, or '
                    f"breaks a rule of format or tone. Judge what it does, not whether its facts are true.\n"
                    f"The reason says what in the response decides the verdict.\n{DATA_NOTE}")
    ask = f"Does the response do what {target.source} {target.asks}? Answer yes or no, then give a short reason."

    step = JudgeStep(instructions=instructions, schema=DirectVerdict,
                     prompt=lambda run, results: alignment_prompt(run, target, ask, history))
    return one_question_scorer("prompt_alignment", judge, step, build, version=versioned(DIRECT_VERSION, history),
                               positive="aligned with the prompt", higher_is_better=True,
                               id="prompt-alignment-scorer", requires=requires)


__all__ = ["AlignmentAnalysis", "EVALUATION_MODES", "RATINGS", "WEIGHTS", "alignment", "prompt_alignment_scorer"]
