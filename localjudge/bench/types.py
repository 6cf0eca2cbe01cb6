"""The values a bench run produces: estimates, table rows, per-benchmark results, the report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from localjudge.bench.calibration_file import CalibrationMap
from localjudge.bench.cost import Cost

THRESHOLD = 0.5  # fraction of the scale at or above which a score predicts label 1
JUDGE, JUDGE_PROB = "judge score", "judge prob score"
Series = dict[str, tuple[list[float], list[int]]]  # score name -> (scores, labels) on its rows


@dataclass(frozen=True)
class Estimate:
    """A figure and its bootstrap 95% interval; all None when undefined (one class only)."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class ScoreRow:
    """One line of a benchmark's table: a judge score or a baseline, on its rows."""

    name: str
    kind: str  # "judge" or "baseline"
    n: int
    auc: Estimate
    balanced_accuracy: Estimate | None  # None: no natural threshold (output length)
    beats_baselines: str | None = None  # judge rows: "YES", "UNCLEAR", "NO" or "n/a"
    best_baseline_auc: float | None = None  # judge rows: best baseline AUC on the same rows
    note: str = ""


@dataclass(frozen=True)
class Bin:
    """One bin of a reliability diagram: rows whose probability lies in [low, high)."""

    low: float
    high: float
    n: int
    mean_prob: float | None  # mean predicted probability of label 1 in the bin
    positive_rate: float | None  # share of label 1 in the bin


@dataclass(frozen=True)
class Calibration:
    """How far a score, read as a probability of label 1, is from the observed rates, and a
    threshold tuned on half the rows and tried on the other half.

    Attributes:
        ece: Expected calibration error (bin-weighted mean |positive rate - mean probability|),
            with its bootstrap interval.
        bins: The reliability diagram's bins.
        threshold: The threshold with the best balanced accuracy on the tuning half.
        tuned_balanced_accuracy: Its balanced accuracy on the tuning half.
        held_out_balanced_accuracy: Its balanced accuracy on the other half, with interval.
        n_tune, n_test: Rows in each half (stratified by label, seeded).
    """

    ece: Estimate
    bins: list[Bin]
    threshold: float | None
    tuned_balanced_accuracy: float | None
    held_out_balanced_accuracy: Estimate
    n_tune: int
    n_test: int


@dataclass(frozen=True)
class RouteRow:
    """A claim scorer's figures on one route's rows alone (see `localjudge.bench.claim_checks`)."""

    route: str  # "terse: one claim by rule" or "claims step"
    n: int
    positives: int
    judge_auc: Estimate
    prob_auc: Estimate | None  # None: the judge gave no prob score
    length_auc: Estimate  # output length, the baseline the route goes with


@dataclass(frozen=True)
class BenchResult:
    """Everything measured on one benchmark; `series` (per-row scores) feeds the plots."""

    benchmark: str
    scorer: str
    scorer_version: str
    positive_means: str
    rows: int
    positives: int
    scored: int
    unscored: int
    errors: dict[str, int]
    table: list[ScoreRow]
    notes: list[str]
    series: Series = field(default_factory=dict, repr=False)
    claim_sources: dict[str, int] = field(default_factory=dict)  # claim scorers: claims by where their words come from
    calibration: dict[str, Calibration] = field(default_factory=dict)  # judge score name -> its calibration
    routes: list[RouteRow] = field(default_factory=list)  # claim scorers: each route alone
    not_scorable: int = 0  # rows a step declared not scorable: not failures, left out like them
    cost: Cost | None = None  # the mode, judge calls and rows/s of this run's scoring

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["series"]
        return data


@dataclass(frozen=True)
class BenchReport:
    """The results of a bench run, its identity (judge, versions, seed, time), files written, and
    the calibration maps fitted (`run_bench(..., fit_calibration=...)`) with a line per scorer
    that got none."""

    results: list[BenchResult]
    identity: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    calibration_maps: list[CalibrationMap] = field(default_factory=list)
    calibration_notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = {"identity": self.identity, "results": [r.to_dict() for r in self.results], "files": self.files}
        if self.calibration_maps or self.calibration_notes:
            data["calibration_maps"] = [asdict(m) for m in self.calibration_maps]
            data["calibration_notes"] = list(self.calibration_notes)
        return data
