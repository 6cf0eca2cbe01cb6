"""`localjudge score --calibration FILE`: the flag, its checks and the column it adds. The maps and
their rules are `localjudge.bench`'s (`load_calibration`, `check_calibration`, `apply_calibration`);
`localjudge bench --fit-calibration FILE` writes them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from localjudge.bench import apply_calibration, calibrated_column, check_calibration, load_calibration
from localjudge.cli.shared import CliError
from localjudge.evaluation import Evaluation
from localjudge.scoring import Scorer


def add_calibration_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calibration", default=None, metavar="FILE",
                        help="a calibration file from bench --fit-calibration: adds <scorer>_calibrated_prob, the "
                             "chance of the positive label, to each row (refused for another judge or scorer version)")


def check_calibration_flag(args: argparse.Namespace) -> None:
    """Before the model loads: the file must be a calibration file, and the run one the flag reaches."""
    if getattr(args, "calibration", None) is None:
        return
    if args.mastra_store is not None:
        raise CliError("--calibration adds a column to --data rows; --mastra-store runs are scored without it")
    if args.ray is not None:
        raise CliError("--calibration is not applied to --ray runs: score without --ray, or apply the file in Python "
                       "(localjudge.bench.apply_calibration)")
    load_calibration(args.calibration)


def calibrator(args: argparse.Namespace, scorers: Sequence[Scorer],
               column_names: Sequence[str]) -> Callable[[Evaluation], Evaluation]:
    """Once the scorers are built on the loaded judge, before any row is scored: the file's maps
    checked against their judge and version (one line naming both if they differ) and against the
    data's columns. Returns what adds ``<name>_calibrated_prob`` to the scored evaluation (as it
    is, without --calibration)."""
    if getattr(args, "calibration", None) is None:
        return lambda evaluation: evaluation
    calibration = load_calibration(args.calibration)
    maps = check_calibration(calibration, scorers, column_names)

    def add(evaluation: Evaluation) -> Evaluation:
        calibrated = apply_calibration(evaluation, calibration, scorers)
        added = ", ".join(calibrated_column(name) for name in maps)
        where = f"added to each row of {args.out}" if args.out else "added to each row (written with --out FILE)"
        print(f"calibrated by {calibration.source}: {added} {where}", file=sys.stderr)
        return calibrated

    return add
