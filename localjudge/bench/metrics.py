"""Accuracy against binary labels: ROC-AUC, balanced accuracy, bootstrap intervals, baselines.

Pure functions of scores and labels (1 = the positive class, 0 = the other), with no model.
Scores are oriented so that higher means "more likely positive". A metric that needs both
classes (AUC, balanced accuracy) returns None when one class is missing: it is undefined
there, and a guessed number would be worse than none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Metric = Callable[..., float | None]  # (scores, labels) -> value; sequences or numpy arrays
_WORD = re.compile(r"[a-z0-9]+")


def _arrays(scores: Sequence[float], labels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Scores as floats and labels as booleans, checked: same length, finite, labels 0/1."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError(f"scores and labels must be flat and equally long, got {s.shape} and {y.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite numbers (drop unscored rows first)")
    if y.size and not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must be 0 or 1")
    return s, y.astype(bool)


def _average_ranks(s: np.ndarray) -> np.ndarray:
    """1-based ranks of `s`, tied values sharing the mean of their ranks."""
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)  # rank of each distinct value's last occurrence
    return (last - (counts - 1) / 2.0)[inverse]


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve: the chance that a random positive outscores a random negative.

    Computed as the Mann-Whitney U statistic over all positive-negative pairs, a tie counting
    one half. None when one class is missing (no pair to compare, so the AUC is undefined).
    """
    s, y = _arrays(scores, labels)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = _average_ranks(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def roc_curve(scores: Sequence[float], labels: Sequence[int]) -> tuple[list[float], list[float]] | None:
    """ROC points (false positive rates, true positive rates) from (0, 0) to (1, 1).

    One point per distinct score, thresholds falling; tied scores move both rates at once
    (a diagonal step), so the trapezoid area under the points equals `roc_auc`. None when one
    class is missing.
    """
    s, y = _arrays(scores, labels)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last_of_tie = np.r_[np.nonzero(np.diff(s))[0], s.size - 1]
    tps = np.cumsum(y)[last_of_tie]
    fps = (last_of_tie + 1) - tps
    return [0.0] + (fps / n_neg).tolist(), [0.0] + (tps / n_pos).tolist()


def balanced_accuracy(scores: Sequence[float], labels: Sequence[int], threshold: float) -> float | None:
    """Mean of the true positive and true negative rates when ``score >= threshold`` predicts 1.

    None when one class is missing (one of the two rates is undefined).
    """
    s, y = _arrays(scores, labels)
    if y.all() or not y.any():
        return None
    predicted = s >= threshold
    return float((predicted[y].mean() + (~predicted[~y]).mean()) / 2.0)


def bootstrap_ci(
    metric: Metric,
    scores: Sequence[float],
    labels: Sequence[int],
    n: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of `metric` (95% by default).

    Resampling is stratified: each resample draws, with replacement, as many positives from
    the positives and as many negatives from the negatives as the data has, so no resample
    lacks a class. The same seed gives the same resamples for every score on the same rows,
    which keeps intervals of competing scores comparable.

    Args:
        metric: A function of (scores, labels), such as `roc_auc`.
        scores: One score per row.
        labels: One 0/1 label per row.
        n: Number of resamples.
        seed: Seed of the resampling generator.
        level: Coverage of the interval, in (0, 1).

    Returns:
        (low, high), or None when the metric is undefined on the data itself.
    """
    if n < 1 or not 0 < level < 1:
        raise ValueError(f"need n >= 1 and 0 < level < 1, got n={n}, level={level}")
    s, y = _arrays(scores, labels)
    if metric(s, y.astype(int)) is None:
        return None
    rng = np.random.default_rng(seed)
    pos, neg = np.nonzero(y)[0], np.nonzero(~y)[0]
    values = []
    for _ in range(n):
        index = np.concatenate([rng.choice(pos, pos.size), rng.choice(neg, neg.size)])
        value = metric(s[index], y[index].astype(int))
        if value is not None:
            values.append(value)
    tail = (1 - level) / 2 * 100
    low, high = map(float, np.percentile(values, [tail, 100 - tail]))
    return low, high


@dataclass(frozen=True)
class Majority:
    """The majority-class baseline: always predict the more frequent label (1 on a tie)."""

    label: int
    accuracy: float
    balanced_accuracy: float = 0.5  # one rate is 1, the other 0
    roc_auc: float = 0.5  # a constant score ties every pair


def majority_baseline(labels: Sequence[int]) -> Majority | None:
    """The majority-class baseline of `labels`; None for no labels."""
    y = np.asarray(labels)
    if y.size == 0:
        return None
    positives = int((y == 1).sum())
    label = 1 if 2 * positives >= y.size else 0
    return Majority(label, (positives if label else y.size - positives) / y.size)


def words(text: str) -> list[str]:
    """Lowercased alphanumeric tokens: ``"It's 4:20!"`` -> ``["it", "s", "4", "20"]``."""
    return _WORD.findall(text.lower())


def word_overlap(output: str, context: str | Sequence[str] | None) -> float:
    """Share of the output's words (with repeats) that occur anywhere in the context.

    0.0 when the output has no words or there is no context.
    """
    said = words(output)
    if not said or not context:
        return 0.0
    known = set(words(context if isinstance(context, str) else "\n".join(context)))
    return sum(word in known for word in said) / len(said)


def output_length(output: str) -> float:
    """Length of the output in whitespace-separated words."""
    return float(len(output.split()))
