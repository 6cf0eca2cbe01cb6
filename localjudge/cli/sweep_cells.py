"""A sweep's cells scored: each model loaded once (or, on Ray, by each cell's actors), then each of
its cells read, scored and written, one summary row per cell.

Every cell resumes: its rows are kept under ``<file>.progress`` (a `ResultStore`) as they are scored,
so a sweep run again scores only the rows not kept yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localjudge.cli.calibration import ModelCalibration
from localjudge.cli.cluster import sweep_cell_on_ray
from localjudge.cli.shared import Bars
from localjudge.cli.summary import higher_is_better, summary_rows
from localjudge.cli.sweep_config import judge_spec
from localjudge.cli.sweep_plan import ScorerEntry, data_name, model_name
from localjudge.cluster import ScorerSpec
from localjudge.evaluation import Columns, ResultStore, evaluate, read_table, write_table
from localjudge.scorers import build_scorer


def run_cells(config: dict[str, Any], entries: list[ScorerEntry], on_ray: dict[str, Any] | None,
              calibrations: dict[str, ModelCalibration], *, quiet: bool) -> list[dict[str, Any]]:
    """Each model, then its cells; one summary row per cell, returned. On Ray (`on_ray`: the
    config's `ray:`) each cell's actors load the model instead of this process. A model's
    `calibrations` entry adds its column to the cells it applies to; `quiet`: no progress bars."""
    out_dir = Path(config["out_dir"])
    table: list[dict[str, Any]] = []
    for model in config["models"]:
        name = model_name(model)
        judge = None if on_ray is not None else judge_spec(model).load()  # heavy: the engine loads
        scorers = {} if on_ray is not None else {
            e.stem: build_scorer(e.name, judge, scale=e.scale, mode=e.mode, options=e.options, compat=e.compat)
            for e in entries}
        calibration = calibrations.get(name)
        if calibration is not None:
            calibration.check_judge(scorers)  # before any cell is scored
        for data in config["datasets"]:
            dataset_name = data_name(data)
            dataset = read_table(data["path"])
            if data.get("limit"):
                dataset = dataset.select(range(min(int(data["limit"]), len(dataset))))
            columns = Columns(data.get("input_col", "input") or None, data.get("output_col", "output"),
                              data.get("context_col", "context") or None, data.get("id_col"))
            wanted = data.get("scorers")
            for entry in entries:
                if wanted and entry.name not in wanted:
                    continue
                out = out_dir / name / dataset_name / f"{entry.stem}.jsonl"
                bars = Bars(len(dataset), not quiet)
                try:
                    batch_size = int(data.get("batch_size", config.get("batch_size", 8)))
                    store = ResultStore(f"{out}.progress")
                    if on_ray is not None:  # the cell's actors load the judge
                        spec = ScorerSpec(entry.name, entry.scale, entry.mode, entry.options, entry.compat,
                                          tuple(config["scorer_modules"]))
                        result = sweep_cell_on_ray(on_ray, judge_spec(model), dataset, spec, columns=columns,
                                                   batch_size=batch_size, store=store, progress=bars)
                    else:
                        scorer = scorers[entry.stem]
                        calibrate = calibration.cell(entry.stem, scorer, dataset.column_names, out) \
                            if calibration is not None else None  # checked before the cell's rows are scored
                        result = evaluate(dataset, [scorer], batch_size=batch_size, columns=columns, store=store,
                                          progress=bars)
                        if calibrate is not None:
                            result = calibrate(result)
                finally:
                    bars.close()
                write_table(result.dataset, out)
                direction = {entry.name: higher_is_better(entry.name, entry.scale, entry.mode, entry.options,
                                                          entry.compat)}
                for row in summary_rows(result.summary, direction):
                    table.append({"model": name, "dataset": dataset_name, **row, "file": str(out)})
    return table
