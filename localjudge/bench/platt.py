"""Platt scaling on the log-odds: a monotone map from a judge's prob score to the observed rate of label 1.

The map is ``calibrated = sigmoid(a * logit(p) + b)`` with ``a >= 0``, on the prob score ``p`` read
as a probability of label 1 (clipped to ``[EPS, 1 - EPS]``). ``a = 1, b = 0`` leaves ``p`` as it is;
``a < 1`` softens an overconfident judge, ``a > 1`` sharpens a timid one, ``b`` moves the base rate.

Why Platt and not isotonic regression (pool-adjacent-violators): the labeled sets users have are
small (40-300 rows). Isotonic regression fits a free step wherever the rows' order is violated, so
on such sets it learns the sample's noise: steps that jump, flat stretches that tie rows the judge
had put in order (the AUC drops), and rates of exactly 0 or 1 at the ends read off a handful of
rows. Niculescu-Mizil and Caruana (ICML 2005) find it overfits below about a thousand calibration
rows, where Platt's two parameters do better; a map with two numbers is also one a user can read.

Two guards keep two parameters honest on a small set. Platt's targets, ``(N+ + 1) / (N+ + 2)`` for
label 1 and ``1 / (N- + 2)`` for label 0 instead of 1 and 0, keep the fit finite when the score
separates the labels perfectly and pull a small set's map toward the base rate. And ``a`` is held
at 0 or above, so the map never reverses the judge's order: where the best fit would reverse it,
the map is the constant base rate (the score tells nothing usable on these labels). The
likelihood is concave, so that constant is the best fit with ``a >= 0``.

Cross-validation (`out_of_fold`): deterministic stratified folds (`folds`), each row's calibrated
probability coming from the map fitted on the other folds: figures never measured on the rows
their map was fitted on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EPS = 1e-4  # prob scores keep four decimals: 0 and 1 are read as EPS and 1 - EPS
K_FOLDS = 5
_TOLERANCE = 1e-10  # largest gradient entry at which Newton's method stops


def logit(probs: Sequence[float] | np.ndarray) -> np.ndarray:
    """Log-odds of probabilities, clipped to ``[EPS, 1 - EPS]`` first."""
    p = np.clip(np.asarray(probs, dtype=float), EPS, 1 - EPS)
    return np.asarray(np.log(p) - np.log1p(-p))


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)), without overflow for large |z|."""
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)))


def platt(probs: Sequence[float] | np.ndarray, a: float, b: float) -> np.ndarray:
    """The map applied: ``sigmoid(a * logit(p) + b)``."""
    return sigmoid(a * logit(probs) + b)


def targets(labels: np.ndarray) -> np.ndarray:
    """Platt's targets: (N+ + 1) / (N+ + 2) for label 1, 1 / (N- + 2) for label 0."""
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    return np.where(labels, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))


def _loss(x: np.ndarray, t: np.ndarray, a: float, b: float) -> float:
    z = a * x + b  # cross-entropy against the targets: -t log sigmoid(z) - (1 - t) log sigmoid(-z)
    return float(np.sum(t * np.logaddexp(0.0, -z) + (1 - t) * np.logaddexp(0.0, z)))


def fit_platt(probs: Sequence[float], labels: Sequence[int], iterations: int = 100) -> tuple[float, float]:
    """The map's (a, b) fitted on rows' prob scores (in [0, 1]) and 0/1 labels, by Newton's method
    with a backtracking line search (Lin, Lin and Weng's 2007 form of Platt's fit).

    Raises:
        ValueError: on rows of one label only, or probabilities outside [0, 1].
    """
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels)
    if p.shape != y.shape or p.ndim != 1 or not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("a calibration needs one probability in [0, 1] per label")
    y = y.astype(bool)
    if y.all() or not y.any():
        raise ValueError("a calibration needs rows of both labels")
    x, t = logit(p), targets(y)
    constant = (0.0, float(logit([t.mean()])[0]))  # a = 0: every row gets the (smoothed) base rate
    if np.ptp(x) == 0:
        return constant
    a, b = constant
    loss = _loss(x, t, a, b)
    for _ in range(iterations):
        q = sigmoid(a * x + b)
        gradient = np.array([np.dot(q - t, x), np.sum(q - t)])
        if np.max(np.abs(gradient)) < _TOLERANCE:
            break
        w = q * (1 - q)
        hessian = np.array([[np.dot(w, x * x), np.dot(w, x)], [np.dot(w, x), np.sum(w)]]) + 1e-12 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        size = 1.0
        while size > 1e-12:  # halve the step until the loss falls enough (Armijo)
            new_a, new_b = a - size * step[0], b - size * step[1]
            new_loss = _loss(x, t, new_a, new_b)
            if new_loss <= loss - 1e-4 * size * float(np.dot(gradient, step)):
                break
            size /= 2
        else:
            break
        a, b, loss = new_a, new_b, new_loss
    return constant if a < 0 else (float(a), float(b))


def folds(labels: Sequence[int], k: int = K_FOLDS) -> list[int]:
    """Each row's fold, 0 to k - 1: stratified and deterministic, with no random draw. The rows of
    each label, in row order, are dealt to the folds in turn (the first to fold 0, the second to
    fold 1, ...), so each fold holds a k-th of each label, and the same rows give the same folds."""
    seen = {0: 0, 1: 0}
    assigned = []
    for label in labels:
        assigned.append(seen[int(label)] % k)
        seen[int(label)] += 1
    return assigned


def out_of_fold(probs: Sequence[float], labels: Sequence[int], k: int = K_FOLDS) -> list[float]:
    """Each row's calibrated probability under the map fitted on the other k - 1 folds.

    Raises:
        ValueError: when a label has fewer than k rows (a fold would lack it).
    """
    y = [int(v) for v in labels]
    fewest = min(y.count(0), y.count(1))
    if fewest < k:
        raise ValueError(f"{k}-fold cross-validation needs at least {k} rows of each label, got {fewest}")
    p = np.asarray(probs, dtype=float)
    fold = np.asarray(folds(y, k))
    out = np.empty(p.size)
    for f in range(k):
        held = fold == f
        a, b = fit_platt(p[~held].tolist(), [v for v, h in zip(y, held, strict=True) if not h])
        out[held] = platt(p[held], a, b)
    return out.tolist()
