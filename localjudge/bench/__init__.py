"""Accuracy against human labels: benchmarks (`data`), metrics, the run (`run`) and its report;
calibration maps fitted on labels (`platt`, `calibration_fit`) and read back (`calibration_file`).

Imports point down only: `run` uses `calibration_fit`, `claim_checks`, `cost`, `data`, `metrics`,
`report` and `types`; `calibration_fit` uses `calibration_file`, `metrics`, `platt` and `types`;
`report` uses `cost`, `data`, `plots` and `types`; `types` uses `calibration_file`, which uses
`platt`, and `cost` (a run's judge calls and rows/s);
`claim_checks` and `plots` use `metrics` and `types`; `modes` (which mode ranked best in an
ensemble run) uses `types`; nothing here imports the CLI.
"""

from localjudge.bench.calibration_file import (
    CalibrationFile,
    CalibrationMap,
    apply_calibration,
    calibrate_rows,
    calibrated_column,
    check_calibration,
    load_calibration,
    scorer_version,
    write_calibration,
)
from localjudge.bench.calibration_fit import fit_map
from localjudge.bench.data import BENCHMARKS, Benchmark, custom_benchmark, load_benchmark, select_benchmarks
from localjudge.bench.modes import ModeRanking, rank_modes
from localjudge.bench.report import summary_table
from localjudge.bench.run import run_bench
from localjudge.bench.types import BenchReport, BenchResult, Estimate, ScoreRow

__all__ = ["BENCHMARKS", "BenchReport", "BenchResult", "Benchmark", "CalibrationFile", "CalibrationMap", "Estimate",
           "ModeRanking", "ScoreRow", "apply_calibration", "calibrate_rows", "calibrated_column", "check_calibration",
           "custom_benchmark", "fit_map", "load_benchmark", "load_calibration", "rank_modes", "run_bench",
           "scorer_version", "select_benchmarks", "summary_table", "write_calibration"]
