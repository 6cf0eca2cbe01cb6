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


STOPWORDS = frozenset(
    "a an the and or but of to in on at by for with from as is are was were be been being it its this that these "
    "those he she they them his her their there here who whom which what when where why how not no yes do does did "
    "has have had will would can could may might must shall should than then so such also very about into over "
    "after before up out one all any some more most other only own same too just".split()
)


def _stem(word: str) -> str:
    return word[:5]  # "prizes" ~ "prize", "completed" ~ "complete": crude, and the same for every model


def content_words(text: str) -> set[str]:
    """The text's words that carry content: not stopwords, stemmed to their first five letters."""
    return {_stem(w) for w in words(text) if w not in STOPWORDS}


def claim_sources(claim: str, output: str, question: str = "") -> str:
    """Where a claim's content words come from: ``"output"`` (all of them are in the output),
    ``"question"`` (some only in the question: the claim may restate it) or ``"neither"``
    (some are in neither: the claim adds what the texts do not say)."""
    said, asked = content_words(output), content_words(question)
    missing = content_words(claim) - said
    if not missing:
        return "output"
    return "question" if missing <= asked else "neither"


def reliability_bins(probs: Sequence[float], labels: Sequence[int],
                     n_bins: int = 10) -> list[tuple[float, float, int, float | None, float | None]]:
    """The reliability diagram of probabilities of label 1: `n_bins` equal-width bins of [0, 1]
    (the last one closed), each as (low, high, rows, mean probability, share of label 1); an
    empty bin has None for both."""
    s, y = _arrays(probs, labels)
    if np.any((s < 0) | (s > 1)):
        raise ValueError("probabilities must lie in [0, 1]")
    index = np.minimum((s * n_bins).astype(int), n_bins - 1)
    bins = []
    for k in range(n_bins):
        inside = index == k
        n = int(inside.sum())
        bins.append((k / n_bins, (k + 1) / n_bins, n, float(s[inside].mean()) if n else None,
                     float(y[inside].mean()) if n else None))
    return bins


def expected_calibration_error(probs: Sequence[float], labels: Sequence[int], n_bins: int = 10) -> float | None:
    """Expected calibration error: over equal-width bins, the row-weighted mean of |share of
    label 1 - mean probability|. 0 is perfectly calibrated; None for no rows."""
    bins = reliability_bins(probs, labels, n_bins)
    total = sum(n for _, _, n, _, _ in bins)
    if not total:
        return None
    return float(sum(n * abs(rate - mean) for _, _, n, mean, rate in bins if n) / total)  # type: ignore[operator]


def split_halves(labels: Sequence[int], seed: int = 0) -> tuple[list[int], list[int]]:
    """Row indices split in two halves, stratified by label (each half gets half of each class,
    the first half the odd one out), shuffled with `seed`: (tune, test)."""
    y = np.asarray(labels)
    rng = np.random.default_rng(seed)
    tune: list[int] = []
    test: list[int] = []
    for label in (0, 1):
        rows = rng.permutation(np.nonzero(y == label)[0]).tolist()
        half = (len(rows) + 1) // 2
        tune += rows[:half]
        test += rows[half:]
    return sorted(tune), sorted(test)


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> tuple[float, float] | None:
    """The threshold (``score >= t`` predicts 1) with the best balanced accuracy, among the
    scores' own values (the lowest on a tie), and that accuracy; None when one class is missing."""
    s, y = _arrays(scores, labels)
    if y.all() or not y.any():
        return None
    best: tuple[float, float] | None = None
    scored, truth = s.tolist(), y.astype(int).tolist()
    for t in np.unique(s):
        value = balanced_accuracy(scored, truth, float(t))
        if value is not None and (best is None or value > best[1]):
            best = (float(t), value)
    return best
