"""Fitting calibration maps in a bench run (`run_bench(..., fit_calibration=PATH)`).

One Platt map per scorer (`localjudge.bench.platt`), fitted on the prob scores of every row its
benchmarks' judge scored, against their labels (a run's benchmarks of one scorer are pooled),
for the run's mode and judge. Its figures are cross-validated: AUC and ECE of the prob score
(before) and of each row's calibrated probability under the map fitted on the other folds
(after), on the same rows, each with its bootstrap interval. The map written is the one fitted
on all the rows; no figure is measured on the rows its map was fitted on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from localjudge.bench.calibration_file import CalibrationMap, write_calibration
from localjudge.bench.metrics import bootstrap_ci, expected_calibration_error, roc_auc
from localjudge.bench.modes import rank_modes
from localjudge.bench.platt import K_FOLDS, fit_platt, out_of_fold
from localjudge.bench.types import JUDGE_PROB, BenchReport, BenchResult

BENCH_SCALE = 1.0  # bench builds every scorer on the default scale
CROSS_VALIDATION = (f"{K_FOLDS} stratified folds, the rows of each label dealt to them in turn (no random draw); "
                    "each row calibrated by the map fitted on the other folds")


def _figure(metric: Callable[..., float | None], scores: list[float], labels: list[int], n_boot: int,
            seed: int) -> dict[str, float | None]:
    value = metric(scores, labels)
    ci = bootstrap_ci(metric, scores, labels, n=n_boot, seed=seed) if value is not None else None
    low, high = ci or (None, None)
    return {"value": value, "low": low, "high": high}


def fit_map(probs: list[float], labels: list[int], *, scorer: str, mode: str, scorer_version: str, judge: str,
            benchmarks: Sequence[str] = (), n_boot: int = 1000, seed: int = 0) -> CalibrationMap:
    """One scorer's map from prob scores in [0, 1] and their labels, with its cross-validated figures.

    Raises:
        ValueError: when a label has fewer than `K_FOLDS` rows (one line).
    """
    calibrated = out_of_fold(probs, labels)
    a, b = fit_platt(probs, labels)
    fit = {
        "rows": len(labels), "positives": sum(labels), "benchmarks": list(benchmarks), "folds": K_FOLDS,
        "cross_validation": CROSS_VALIDATION,
        "auc_before": _figure(roc_auc, probs, labels, n_boot, seed),
        "auc_after": _figure(roc_auc, calibrated, labels, n_boot, seed),
        "ece_before": _figure(expected_calibration_error, probs, labels, n_boot, seed),
        "ece_after": _figure(expected_calibration_error, calibrated, labels, n_boot, seed),
    }
    return CalibrationMap(scorer, mode, scorer_version, BENCH_SCALE, judge, a, b, fit)


def fit_maps(results: Sequence[BenchResult], *, judge: str, mode: str, n_boot: int = 1000,
             seed: int = 0) -> tuple[list[CalibrationMap], list[str]]:
    """A map per scorer of `results` (its benchmarks' rows pooled), and a line for each scorer that
    got none, saying why."""
    by_scorer: dict[str, list[BenchResult]] = {}
    for result in results:
        by_scorer.setdefault(result.scorer, []).append(result)
    maps, notes = [], []
    for name, group in by_scorer.items():
        probs: list[float] = []
        labels: list[int] = []
        for result in group:
            scores, y = result.series.get(JUDGE_PROB, ([], []))
            probs += scores
            labels += y
        if not probs:
            notes.append(f"{name}: no map: the judge gave no label probabilities, so there is no prob score")
            continue
        try:
            fitted = fit_map(probs, labels, scorer=name, mode=mode, scorer_version=group[0].scorer_version,
                             judge=judge, benchmarks=[r.benchmark for r in group], n_boot=n_boot, seed=seed)
            rankings = mode_rankings(group)
            maps.append(replace(fitted, fit={**fitted.fit, "mode_ranking": rankings}) if rankings else fitted)
        except ValueError as error:
            notes.append(f"{name}: no map: {error}")
    return maps, notes


def mode_rankings(results: Sequence[BenchResult]) -> list[dict[str, Any]]:
    """An ensemble run's verdict on the modes (`modes.rank_modes`), per benchmark, as the map records
    it: the best mode by prob AUC, whether its interval lies above the others', each mode's AUC."""
    found: list[dict[str, Any]] = []
    for ranking in filter(None, map(rank_modes, results)):
        found.append({"benchmark": ranking.benchmark, "best": ranking.best if ranking.clear else None,
                      "ranked_first": ranking.best, "clear": ranking.clear,
                      "auc": {mode: {"value": auc.value, "low": auc.low, "high": auc.high}
                              for mode, auc in ranking.ranked}})
    return found


def fit_report(report: BenchReport, path: str | Path, *, mode: str, n_boot: int = 1000,
               seed: int = 0) -> BenchReport:
    """`report` with its maps and their notes, the maps written to `path` (if any were fitted)."""
    maps, notes = fit_maps(report.results, judge=report.identity["judge"], mode=mode, n_boot=n_boot, seed=seed)
    files = dict(report.files)
    if maps:
        files["calibration"] = str(write_calibration(path, maps))
    return replace(report, calibration_maps=maps, calibration_notes=notes, files=files)
