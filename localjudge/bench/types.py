"""The values a bench run produces: estimates, table rows, per-benchmark results, the report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["series"]
        return data


@dataclass(frozen=True)
class BenchReport:
    """The results of a bench run, its identity (judge, versions, seed, time), files written."""

    results: list[BenchResult]
    identity: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"identity": self.identity, "results": [r.to_dict() for r in self.results], "files": self.files}
