"""Shared by the verdict-based scorers: the reason step, verdict lines, label-probability means."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from localjudge.samples import Sample
from localjudge.scoring import DATA_NOTE, JudgeStep, Reason, Results, block, neutralise

REASON_SYSTEM = f"""You explain an evaluation score in one to three plain sentences.
Use the score given (do not recompute it) and the verdicts. Say which parts of the output the
verdicts are about and, where there is a context, what the context says about them. Do not
use your own knowledge. Do not repeat the instructions or the score's definition.
{DATA_NOTE}"""

ReasonExample = tuple[Sample, Results, str]  # a worked example: run, results (with score), reason


def reason_step(summary: Callable[[Sample, Results], str], *, show_context: bool = True,
                example: ReasonExample | None = None) -> JudgeStep:
    """The reason step, as Mastra's: the judge sees the input, the output and (for a scorer that
    judges against one) the context, each in its block, then `summary` (the score, its meaning,
    the verdicts); `example` is a worked one, given as an earlier chat turn."""

    def prompt(run: Sample, results: Results) -> str:
        shown = [block("INPUT", run.input)] if run.input.strip() else []
        shown.append(block("OUTPUT", run.output))
        if show_context and run.context:
            shown.append(block("CONTEXT", "\n".join(run.context)))
        return "\n".join([*shown, summary(run, results)])

    examples: tuple[tuple[str, str], ...] = ()
    if example is not None:
        run, results, reason = example
        examples = ((prompt(run, results), json.dumps({"reason": reason}, separators=(",", ":"))),)
    return JudgeStep(instructions=REASON_SYSTEM, prompt=prompt, schema=Reason, examples=examples,
                     finish=lambda run, results, parsed: parsed["reason"])


def verdict_lines(verdicts: Sequence[Mapping[str, Any]], subject: str) -> str:
    """One line per verdict: ``- yes: <subject> (<reason>)``; judge-written text is neutralised."""
    return "\n".join(f"- {v['verdict']}: {neutralise(v[subject])} ({neutralise(v['reason'])})" for v in verdicts)


def label_choices(label_probs: Sequence[Mapping[str, float]], label: str) -> list[Mapping[str, float]]:
    """The label decisions (in generation order) that offered `label`."""
    return [choice for choice in label_probs if label in choice]


def mean_label_prob(label_probs: Sequence[Mapping[str, float]], label: str, expected: int) -> float | None:
    """Mean probability of `label` over the decisions offering it; None unless there are `expected`."""
    choices = label_choices(label_probs, label)
    if not choices or len(choices) != expected:
        return None
    return sum(choice[label] for choice in choices) / len(choices)
