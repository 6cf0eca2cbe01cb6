"""Helpers shared by verdict-based scorers: reason-prompt lines and label-probability means."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from localjudge.prompting import neutralise


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
