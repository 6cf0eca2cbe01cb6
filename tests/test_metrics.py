"""The accuracy metrics, hand-computed: no model, no data files."""

from __future__ import annotations

import itertools
import math

import pytest

from localjudge.bench.metrics import (
    balanced_accuracy,
    bootstrap_ci,
    majority_baseline,
    output_length,
    roc_auc,
    roc_curve,
    word_overlap,
    words,
)

# positives {0.35, 0.8} vs negatives {0.1, 0.4}: 0.35 beats 0.1 only, 0.8 beats both -> 3 of 4 pairs
SCORES, LABELS = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]


def pairwise_auc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_auc_counts_pairs() -> None:
    assert roc_auc(SCORES, LABELS) == 0.75
    assert roc_auc([0.0, 1.0], [0, 1]) == 1.0
    assert roc_auc([1.0, 0.0], [0, 1]) == 0.0


def test_auc_ties_count_half() -> None:
    # pairs: 1>0.5, 1>0, 0.5=0.5 (half), 0.5>0 -> 3.5 / 4
    assert roc_auc([1, 0.5, 0.5, 0], [1, 1, 0, 0]) == 0.875
    assert roc_auc([0.5] * 6, [0, 1, 0, 1, 1, 0]) == 0.5


def test_auc_matches_pairwise_count_on_many_ties() -> None:
    scores = [0.0, 0.5, 0.5, 1.0, 0.0, 0.5, 1.0, 1.0, 0.25, 0.5]
    labels = [0, 1, 0, 1, 0, 0, 1, 0, 1, 1]
    assert roc_auc(scores, labels) == pytest.approx(pairwise_auc(scores, labels))


def test_one_class_is_undefined_not_a_crash() -> None:
    # With no negatives there is no positive-negative pair: the AUC does not exist.
    assert roc_auc([0.2, 0.9], [1, 1]) is None
    assert roc_auc([0.2, 0.9], [0, 0]) is None
    assert roc_curve([0.2, 0.9], [1, 1]) is None
    assert balanced_accuracy([0.2, 0.9], [0, 0], 0.5) is None
    assert bootstrap_ci(roc_auc, [0.2, 0.9], [1, 1]) is None
    assert roc_auc([], []) is None


def test_bad_inputs_are_errors() -> None:
    with pytest.raises(ValueError, match="equally long"):
        roc_auc([0.1, 0.2], [1])
    with pytest.raises(ValueError, match="finite"):
        roc_auc([0.1, math.nan], [0, 1])
    with pytest.raises(ValueError, match="0 or 1"):
        roc_auc([0.1, 0.2], [0, 2])


def test_roc_curve_points_and_area() -> None:
    fpr, tpr = roc_curve([1, 0.5, 0.5, 0], [1, 1, 0, 0])  # type: ignore[misc]
    # threshold 1: one positive; 0.5: the tie moves both rates; 0: everything
    assert (fpr, tpr) == ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    area = sum((fpr[i + 1] - fpr[i]) * (tpr[i + 1] + tpr[i]) / 2 for i in range(len(fpr) - 1))
    assert area == roc_auc([1, 0.5, 0.5, 0], [1, 1, 0, 0])


def test_balanced_accuracy_at_threshold() -> None:
    # >= 0.5 predicts [0, 0, 0, 1]: TPR 1/2, TNR 2/2 -> 0.75
    assert balanced_accuracy(SCORES, LABELS, 0.5) == 0.75
    # >= 0.35 predicts [0, 1, 1, 1]: TPR 2/2, TNR 1/2 -> 0.75 (the threshold itself counts as positive)
    assert balanced_accuracy(SCORES, LABELS, 0.35) == 0.75
    # imbalanced: labels 1,1,1,0 with all predicted 1 -> (1 + 0) / 2
    assert balanced_accuracy([0.9, 0.9, 0.9, 0.9], [1, 1, 1, 0], 0.5) == 0.5


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    scores = [0.1, 0.3, 0.2, 0.8, 0.6, 0.4, 0.9, 0.35, 0.7, 0.05]
    labels = [0, 0, 1, 1, 1, 0, 1, 0, 1, 0]
    ci = bootstrap_ci(roc_auc, scores, labels, n=500, seed=0)
    assert ci == bootstrap_ci(roc_auc, scores, labels, n=500, seed=0)
    assert ci != bootstrap_ci(roc_auc, scores, labels, n=500, seed=1)
    low, high = ci  # type: ignore[misc]
    assert 0.0 <= low <= roc_auc(scores, labels) <= high <= 1.0 and low < high


def test_bootstrap_of_a_perfect_or_constant_score_is_a_point() -> None:
    assert bootstrap_ci(roc_auc, [0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], n=200) == (1.0, 1.0)
    assert bootstrap_ci(roc_auc, [0.5] * 4, [0, 1, 0, 1], n=200) == (0.5, 0.5)
    threshold_metric = lambda s, y: balanced_accuracy(s, y, 0.5)  # noqa: E731
    assert bootstrap_ci(threshold_metric, [0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], n=50) == (1.0, 1.0)


def test_bootstrap_rejects_bad_settings() -> None:
    with pytest.raises(ValueError):
        bootstrap_ci(roc_auc, SCORES, LABELS, n=0)


def test_majority_baseline() -> None:
    assert majority_baseline([1, 1, 0]).label == 1  # type: ignore[union-attr]
    assert majority_baseline([1, 1, 0]).accuracy == pytest.approx(2 / 3)  # type: ignore[union-attr]
    zero = majority_baseline([0, 0, 0, 1])
    assert (zero.label, zero.accuracy, zero.balanced_accuracy, zero.roc_auc) == (0, 0.75, 0.5, 0.5)  # type: ignore[union-attr]
    assert majority_baseline([0, 1]).label == 1  # a tie goes to the positive class
    assert majority_baseline([]) is None


def test_word_overlap_and_length() -> None:
    assert words("It's 4:20, OK?") == ["it", "s", "4", "20", "ok"]
    assert word_overlap("The cat sat!", "a cat sat there") == pytest.approx(2 / 3)
    assert word_overlap("cat cat dog", ["The CAT.", "no dogs"]) == pytest.approx(2 / 3)  # repeats count
    assert word_overlap("...", "anything") == 0.0
    assert word_overlap("cat", None) == 0.0
    assert output_length("  one two\nthree ") == 3.0
