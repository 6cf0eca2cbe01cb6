"""Accuracy against human labels: benchmarks (`data`), metrics, the run (`run`) and its report.

Imports point down only: `run` uses `claim_checks`, `data`, `metrics`, `report` and `types`;
`report` uses `data`, `plots` and `types`; `claim_checks` and `plots` use `metrics` and
`types`; nothing here imports the CLI.
"""

from localjudge.bench.data import BENCHMARKS, Benchmark, custom_benchmark, load_benchmark, select_benchmarks
from localjudge.bench.report import summary_table
from localjudge.bench.run import run_bench
from localjudge.bench.types import BenchReport, BenchResult, Estimate, ScoreRow

__all__ = ["BENCHMARKS", "BenchReport", "BenchResult", "Benchmark", "Estimate", "ScoreRow", "custom_benchmark",
           "load_benchmark", "run_bench", "select_benchmarks", "summary_table"]
