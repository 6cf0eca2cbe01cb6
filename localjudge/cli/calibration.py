"""`localjudge score --calibration FILE` and a sweep model entry's `calibration: FILE`: the checks
and the column they add, one code path for both. The maps and their rules are `localjudge.bench`'s
(`load_calibration`, `check_calibration`, `apply_calibration`); `localjudge bench
--fit-calibration FILE` writes them.

A file holds one map per scorer, fitted in one mode. In a sweep, a model entry's file applies to
the cells of each of its scorers in the mode its map was fitted in; that scorer's cells in another
mode (another quantity, which the file has no map for) get no column. A cell it applies to is
refused, as `score` refuses it, for another scorer version (before any model loads) or judge
(once the model has loaded, before any cell is scored)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge.bench import (
    CalibrationFile,
    apply_calibration,
    calibrated_column,
    check_calibration,
    load_calibration,
)
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


def check_calibration_versions(args: argparse.Namespace, unloaded: Sequence[Scorer]) -> None:
    """Before the model loads: the --calibration file's maps against the chosen scorers' versions,
    mode and scale (`unloaded`: built on a judge that is never called, as `check_scorers` builds
    them); the judge is checked once it loads."""
    if getattr(args, "calibration", None) is None:
        return
    check_calibration(load_calibration(args.calibration), unloaded, judged=False)


def calibrator(args: argparse.Namespace, scorers: Sequence[Scorer],
               column_names: Sequence[str]) -> Callable[[Evaluation], Evaluation]:
    """Once the scorers are built on the loaded judge, before any row is scored: `file_calibrator`
    of the --calibration file (the evaluation as it is, without the flag)."""
    if getattr(args, "calibration", None) is None:
        return lambda evaluation: evaluation
    return file_calibrator(load_calibration(args.calibration), scorers, column_names, args.out)


def file_calibrator(calibration: CalibrationFile, scorers: Sequence[Scorer], column_names: Sequence[str],
                    out: str | Path | None) -> Callable[[Evaluation], Evaluation]:
    """The file's maps checked against their scorers' judge and version (one line naming both if
    they differ) and against the data's columns. Returns what adds ``<name>_calibrated_prob`` to
    the scored evaluation, saying so on stderr (the rows go to `out`)."""
    maps = check_calibration(calibration, scorers, column_names)

    def add(evaluation: Evaluation) -> Evaluation:
        calibrated = apply_calibration(evaluation, calibration, scorers)
        added = ", ".join(calibrated_column(name) for name in maps)
        where = f"added to each row of {out}" if out else "added to each row (written with --out FILE)"
        print(f"calibrated by {calibration.source}: {added} {where}", file=sys.stderr)
        return calibrated

    return add


@dataclass(frozen=True)
class ModelCalibration:
    """A sweep model entry's calibration file and the stems of the scorer entries it applies to."""

    file: CalibrationFile
    stems: frozenset[str]

    def check_judge(self, scorers: Mapping[str, Scorer]) -> None:
        """Once the model has loaded, before any cell is scored: the maps against the judge of the
        entries' scorers (by stem), one line naming both if it differs."""
        check_calibration(self.file, [scorers[stem] for stem in sorted(self.stems)])

    def cell(self, stem: str, scorer: Scorer, column_names: Sequence[str],
             out: Path) -> Callable[[Evaluation], Evaluation]:
        """What a cell's evaluation goes through: `file_calibrator` where the file applies to its entry."""
        if stem not in self.stems:
            return lambda evaluation: evaluation
        return file_calibrator(self.file, [scorer], column_names, out)


def sweep_calibrations(models: Sequence[Mapping[str, Any]], names: Sequence[str],
                       unloaded: Mapping[str, tuple[str, Scorer]]) -> dict[str, ModelCalibration]:
    """Before any model loads: each model entry's `calibration` file (by the model's results folder
    name, `names`), read, with the scorer entries it applies to, each of their scorer versions
    checked. `unloaded` gives each scorer entry's mode and scorer, built on a judge that is never
    called, by the entry's stem. A file that applies to none of them is refused, as `score` refuses
    a file with no map for its scorers."""
    found = {}
    for model, name in zip(models, names, strict=True):
        if model.get("calibration") is None:
            continue
        calibration = load_calibration(model["calibration"])
        stems = []
        for stem, (mode, scorer) in unloaded.items():
            fitted = calibration.maps.get(scorer.name)
            if fitted is None or fitted.mode != mode:
                continue
            check_calibration(calibration, [scorer], judged=False)  # its version: the judge has not loaded
            stems.append(stem)
        if not stems:
            held = ", ".join(f"{m.scorer} ({m.mode} mode)" for m in calibration.maps.values())
            cells = ", ".join(f"{scorer.name} ({mode} mode)" for mode, scorer in unloaded.values())
            raise ValueError(f"model {name!r}: {calibration.source} holds maps for {held}, none for its cells' "
                             f"scorers: {cells}")
        found[name] = ModelCalibration(calibration, frozenset(stems))
    return found
