"""Trajectory accuracy: was the agent's sequence of actions (its tool calls, in order) a good
one for the request, and, when one is given, close to the expected trajectory?

Inputs: the run's tool calls, in order (`tool_calls`, or the tool invocations in the output's
messages): the steps judged; `input` (the request) and `output` (the final response), shown.
The expected steps: the `expected_trajectory` option (static, Mastra's; it takes precedence)
or the run's `expected_trajectory` / `expectedTrajectory`; optional.
Steps: one analyze step gives exactly one evaluation per step taken, in order (enforced by the
grammar), two labels each: ``necessary`` (did the task need it?) and ``in_order`` (was it at a
sensible point?); then the steps that should have been taken but were not (``missing_steps``,
bounded; with an expected trajectory, chosen from its steps). Over 20 steps are asked in parts of
20 in the same judge call: each part shows its own steps in full after the earlier steps' names,
and the last part, which has seen every step, gives the missing steps. The steps judged unnecessary are
the extra steps. Score, as Mastra's: 0.6 x necessary/steps + 0.3 x in order/steps - 0.1 x
missing/(steps + missing), clamped to [0, 1] (so a flawless trajectory scores 0.9, as in
Mastra). No steps taken: missing steps give 0, extra steps 0.5, otherwise 1; with an expected
trajectory every expected step is missing, so 0 by rule, with no judge call. Higher is better.
`prob_score`: the same formula with each step's ``yes`` probabilities (none without steps).
No direct mode: the score weighs two judgments per step and the missing steps, which no single
yes/no question gives.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from localjudge.judge import Judge
from localjudge.samples import Sample, ToolCall, trajectory_of
from localjudge.scorers.judged.tool_lines import call_line
from localjudge.scorers.judged.verdicts import label_choices, reason_step
from localjudge.scoring import (
    DATA_NOTE,
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
    neutralise,
    part_of,
    spans,
)

VERSION = "trajectory-accuracy-v1"
MAX_STEPS = 20  # steps taken, judged per prompt: more are asked in parts of 20 (up to MAX_PARTS, 160 steps)
MAX_EXPECTED = 60  # expected steps
MAX_MISSING = 5  # missing steps, when no expected trajectory bounds them
NECESSARY, IN_ORDER, MISSING = 0.6, 0.3, 0.1  # Mastra's weights

StepText = Annotated[str, Field(min_length=1, max_length=80)]


class StepVerdict(Strict):
    necessary: Literal["yes", "no"]
    in_order: Literal["yes", "no"]
    reason: ReasonText


class TrajectoryVerdicts(Strict):
    step_evaluations: Annotated[list[StepVerdict], Field(max_length=MAX_STEPS)]
    missing_steps: Annotated[list[StepText], Field(max_length=MAX_MISSING)]


@functools.lru_cache(maxsize=512)  # per (count, names): bounded, for runs that differ in both
def verdicts_schema(steps: int, expected: tuple[str, ...] | None) -> type[BaseModel]:
    """`TrajectoryVerdicts` with exactly `steps` evaluations and, with an expected trajectory,
    missing steps chosen from its steps."""
    name: Any = Literal[expected] if expected else StepText
    most = MAX_MISSING if expected is None else len(expected)
    evaluations: Any = Annotated[list[StepVerdict], Field(min_length=steps, max_length=steps)]
    missing: Any = Annotated[list[name], Field(max_length=most)]
    return create_model(f"TrajectoryVerdicts_{steps}", __base__=TrajectoryVerdicts,
                        step_evaluations=(evaluations, ...), missing_steps=(missing, ...))


@functools.lru_cache(maxsize=64)
def part_schema(steps: int) -> type[BaseModel]:
    """A part's schema before the last: exactly `steps` evaluations and no missing steps (the
    last part, which has seen every step, names them)."""
    evaluations: Any = Annotated[list[StepVerdict], Field(min_length=steps, max_length=steps)]
    missing: Any = Annotated[list[StepText], Field(max_length=0)]
    return create_model(f"TrajectoryVerdicts_{steps}_part", __base__=TrajectoryVerdicts,
                        step_evaluations=(evaluations, ...), missing_steps=(missing, ...))


def trajectory_accuracy(necessary: Sequence[float], in_order: Sequence[float], missing: int, extra: int) -> float:
    """Mastra's score from each step's necessity and order (1 / 0, or probabilities) and the
    missing and extra step counts."""
    total = len(necessary)
    if total == 0:
        return 0.0 if missing else 0.5 if extra else 1.0
    penalty = missing / (total + missing)
    score = sum(necessary) / total * NECESSARY + sum(in_order) / total * IN_ORDER - penalty * MISSING  # Mastra's order
    return max(0.0, min(1.0, score))


ANALYZE_SYSTEM = f"""You check the steps an AI agent took to handle a user's request, in the order it took them.
For each numbered step give:
- "necessary": "yes" if the task needed this step, "no" if it was not needed or repeats an earlier step;
- "in_order": "yes" if it came at a sensible point (after the steps it depends on), "no" if too early or late;
- a short reason.
Then list in "missing_steps" the steps the agent should have taken but did not (an empty list if none).
When expected steps are given, compare with them: an expected step the agent skipped is missing, a step
not expected is usually not needed, and the expected order is a guide, not a strict rule.
Give exactly one evaluation per step, in order.
{DATA_NOTE}"""


def steps_prompt(request: str, response: str, steps: Sequence[str], expected: Sequence[str] | None) -> str:
    shown = [block("REQUEST", request)] if request.strip() else []
    if response.strip():
        shown.append(block("RESPONSE", response))
    if steps:
        numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
        shown.append(f"The steps the agent took, one numbered step a line:\n{block('STEPS', numbered)}")
    else:
        shown.append("The agent took no steps.")
    if expected:
        numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(expected, 1))
        shown.append(f"The expected steps, in order:\n{block('EXPECTED', numbered)}")
    shown.append(f"Give exactly {len(steps)} evaluations, one per step, in order, then the missing steps." if steps
                 else "Give no evaluations; list the steps it should have taken, if any.")
    return "\n".join(shown)


def part_prompt(request: str, response: str, steps: Sequence[str], names: Sequence[str], span: tuple[int, int],
                expected: Sequence[str] | None) -> str:
    """A part of a long trajectory: the steps before it by name, its steps in full (numbered
    where they stand), the expected steps; the last part also asks for the missing steps."""
    start, end = span
    shown = [block("REQUEST", request)] if request.strip() else []
    if response.strip():
        shown.append(block("RESPONSE", response))
    if start:
        earlier = "\n".join(f"{i}. {n}" for i, n in enumerate(names[:start], 1))
        shown.append(f"The steps the agent took before these, by tool name:\n{block('EARLIER', earlier)}")
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps[start:end], start + 1))
    shown.append(f"Steps {start + 1} to {end} of the {len(steps)} the agent took, one numbered step a line:\n"
                 f"{block('STEPS', numbered)}")
    if expected:
        listed = "\n".join(f"{i}. {s}" for i, s in enumerate(expected, 1))
        shown.append(f"The expected steps, in order:\n{block('EXPECTED', listed)}")
    last = end == len(steps)
    shown.append(f"Give exactly {end - start} evaluations, one per step {start + 1} to {end}, in order, then "
                 + ("the missing steps of the whole trajectory." if last else "no missing steps (a later part names "
                                                                             "them)."))
    return "\n".join(shown)


EXAMPLE_STEPS = [
    call_line(ToolCall("send_text", '{"to":"me","text":"Booked!"}', "sent"), result=True),
    call_line(ToolCall("find_restaurants", '{"cuisine":"italian"}', "Trattoria Roma, Da Luca"), result=True),
    call_line(ToolCall("find_restaurants", '{"cuisine":"italian"}', "Trattoria Roma, Da Luca"), result=True),
]
EXAMPLE = (
    steps_prompt("Book a table for two at an Italian restaurant tonight and text me the confirmation.",
                 "I found Trattoria Roma and texted you.", EXAMPLE_STEPS, ["find_restaurants", "book_table",
                                                                           "send_text"]),
    '{"step_evaluations":[{"necessary":"yes","in_order":"no","reason":"Texted before any booking."},'
    '{"necessary":"yes","in_order":"yes","reason":"Finds the restaurants first."},'
    '{"necessary":"no","in_order":"yes","reason":"Repeats the same search."}],'
    '"missing_steps":["book_table"]}',
)


def steps_of(sample: Sample) -> list[str]:
    return [call_line(c, result=True) for c in sample.tool_calls]


def split_steps(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """The analyze step's split: the steps in parts of at most `MAX_STEPS`, in order (one part,
    asked as a whole trajectory, for a run of at most `MAX_STEPS` steps or none)."""
    return spans(len(sample.tool_calls), MAX_STEPS)


def check_expected(expected: Any) -> tuple[str, ...] | None:
    """The static expected trajectory as step lines: None when not given; given but empty: no
    expected steps, and the run's own are not read either (Mastra's precedence)."""
    if expected is None:
        return None
    lines = trajectory_of(expected) or ()
    if len(lines) > MAX_EXPECTED:
        raise ValueError(f"at most {MAX_EXPECTED} expected steps, got {len(lines)}")
    return lines


# createTrajectoryAccuracyScorerLLM: roundToTwoDecimals; no scale option (scores run from 0 to 1)
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="none")


def trajectory_accuracy_scorer(judge: Judge, *, scale: float = 1.0,
                               expected_trajectory: Sequence[str | Mapping[str, Any]] | Mapping[str, Any] | None = None,
                               compat: str = "localjudge") -> Scorer:
    """Build the trajectory accuracy scorer (higher is better; a flawless trajectory scores
    0.9 x scale, Mastra's weights).

    Args:
        judge: The local model judging.
        scale: Scores lie in [0, scale]; must be positive.
        expected_trajectory: The steps expected of every run (names, Mastra's ``{name, stepType,
            data}`` steps, or ``{"steps": [...]}``; at most 60). Takes precedence over the run's
            own `expected_trajectory`; given but empty, no expected steps are used.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`: no scale).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, compat=compat)
    scale = build.scale
    static = check_expected(expected_trajectory)

    def expected_of(sample: Sample) -> tuple[str, ...] | None:
        found = static if static is not None else sample.expected_trajectory
        return found or None

    def shortcut(sample: Sample, results: Results) -> Shortcut | None:
        expected = expected_of(sample)
        if sample.tool_calls or not expected:
            return None
        return 0.0, f"The agent took no steps, so every expected step ({len(expected)}) is missing."

    def checked_expected(sample: Sample) -> tuple[str, ...] | None:
        expected = expected_of(sample)
        if expected and len(expected) > MAX_EXPECTED:
            raise UnscorableError(f"trajectory accuracy takes at most {MAX_EXPECTED} expected steps, "
                                  f"got {len(expected)}")
        return expected

    def render(sample: Sample, results: Results) -> str:
        steps = steps_of(sample)
        if len(steps) <= MAX_STEPS:  # one part: asked whole, as before parts existed
            return steps_prompt(sample.input, sample.output, steps, checked_expected(sample))
        return part_prompt(sample.input, sample.output, steps, [c.name for c in sample.tool_calls],
                           part_of(results, len(steps)), checked_expected(sample))

    def schema(sample: Sample, results: Results) -> type[BaseModel]:
        expected = checked_expected(sample)
        start, end = part_of(results, len(sample.tool_calls))
        if end < len(sample.tool_calls):
            return part_schema(end - start)
        return verdicts_schema(end - start, None if expected is None else tuple(dict.fromkeys(expected)))

    def attach(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        evaluations = [{"step_name": c.name, "step": line, **v} for c, line, v
                       in zip(sample.tool_calls, steps_of(sample), parsed["step_evaluations"], strict=True)]
        return {"step_evaluations": evaluations, "missing_steps": list(dict.fromkeys(parsed["missing_steps"])),
                "extra_steps": [e["step_name"] for e in evaluations if e["necessary"] == "no"]}

    def score(sample: Sample, results: Results) -> float:
        found = results["analyze_step_result"]
        evaluations = found["step_evaluations"]
        return trajectory_accuracy([float(e["necessary"] == "yes") for e in evaluations],
                                   [float(e["in_order"] == "yes") for e in evaluations],
                                   len(found["missing_steps"]), len(found["extra_steps"]))

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        """Each step's two readings, in generation order: necessary, then in order."""
        found = results["analyze_step_result"]
        choices = label_choices(label_probs["analyze"], "yes")
        if not found["step_evaluations"] or len(choices) != 2 * len(found["step_evaluations"]):
            return None
        return trajectory_accuracy([c["yes"] for c in choices[0::2]], [c["yes"] for c in choices[1::2]],
                                   len(found["missing_steps"]), len(found["extra_steps"]))

    def summary(sample: Sample, results: Results) -> str:
        found = results["analyze_step_result"]
        lines = "\n".join(f"- {neutralise(e['step_name'])}: necessary {e['necessary']}, in order {e['in_order']} "
                          f"({neutralise(e['reason'])})" for e in found["step_evaluations"]) or "(no steps taken)"
        missing = ", ".join(neutralise(m) for m in found["missing_steps"]) or "none"
        return (f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better: 60% for necessary steps, 30% "
                f"for steps in order, less up to 10% for missing steps; a flawless trajectory scores "
                f"{0.9 * scale:g}).\nEvaluations of the steps taken, in order:\n{block('VERDICTS', lines)}\n"
                f"Steps that should have been taken but were not: {missing}.\n"
                "Explain the score: which steps were needed and well placed, which were not, and what was missing.")

    step = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render, schema=schema, examples=(EXAMPLE,), finish=attach,
                     split=split_steps)
    return (
        create_scorer("trajectory_accuracy", judge=judge, version=VERSION, shortcut=shortcut,
                      prob_score=prob_score, id="llm-trajectory-accuracy-scorer",
                      description="The quality of the agent's sequence of tool calls, against the expected steps",
                      positive="a sound trajectory", higher_is_better=True, **build.create_keywords())
        .analyze(step)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False))
    )
