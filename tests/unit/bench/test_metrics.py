"""The accuracy metrics, hand-computed: no model, no data files."""

from __future__ import annotations

import itertools
import math

import pytest

from localjudge.bench.metrics import (
    balanced_accuracy,
    best_threshold,
    bootstrap_ci,
    claim_sources,
    expected_calibration_error,
    majority_baseline,
    output_length,
    reliability_bins,
    roc_auc,
    roc_curve,
    split_halves,
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


def test_ece_is_zero_when_the_rates_match_and_one_when_they_are_reversed() -> None:
    assert expected_calibration_error([0.25] * 4, [1, 0, 0, 0]) == pytest.approx(0.0)
    assert expected_calibration_error([1.0, 1.0, 0.0, 0.0], [0, 0, 1, 1]) == pytest.approx(1.0)
    # two bins: 0.1 -> rate 0.5 (gap 0.4, 2 rows), 0.9 -> rate 1 (gap 0.1, 2 rows)
    assert expected_calibration_error([0.1, 0.1, 0.9, 0.9], [0, 1, 1, 1]) == pytest.approx(0.25)
    assert expected_calibration_error([], []) is None


def test_reliability_bins_hold_every_row_once_and_close_the_last_bin() -> None:
    bins = reliability_bins([0.0, 0.05, 0.5, 0.99, 1.0], [0, 0, 1, 1, 1])
    assert len(bins) == 10 and sum(n for _, _, n, _, _ in bins) == 5
    assert bins[0][2:] == (2, 0.025, 0.0) and bins[9][2:] == (2, 0.995, 1.0) and bins[5][2] == 1
    assert bins[3] == (0.3, 0.4, 0, None, None)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        reliability_bins([1.5], [1])


def test_split_halves_are_stratified_disjoint_and_seeded() -> None:
    labels = [0] * 7 + [1] * 5
    tune, test = split_halves(labels, seed=3)
    assert sorted(tune + test) == list(range(12)) and not set(tune) & set(test)
    assert sum(labels[i] for i in tune) == 3 and sum(labels[i] for i in test) == 2  # half of each class
    assert split_halves(labels, seed=3) == (tune, test) and split_halves(labels, seed=4) != (tune, test)


def test_best_threshold_is_the_lowest_best_score() -> None:
    assert best_threshold([0.1, 0.2, 0.7, 0.9], [0, 0, 1, 1]) == (0.7, 1.0)
    assert best_threshold([0.3, 0.3, 0.3], [0, 1, 1]) == (0.3, 0.5)
    assert best_threshold([0.5, 0.6], [1, 1]) is None


@pytest.mark.parametrize(("claim", "where"), [
    ("Marie Curie won two Nobel Prizes.", "question"),  # "won" only in the question
    ("Marie Curie received two Nobel Prizes in 1903.", "output"),
    ("I heard it is beautiful there.", "question"),
    ("She discovered radium in Paris.", "neither"),
])
def test_claim_sources(claim: str, where: str) -> None:
    output = "She received two Nobel Prizes, in 1903 and 1911, Marie Curie did."
    question = "What has Marie Curie won? I heard it is beautiful there."
    assert claim_sources(claim, output, question) == where
