"""`localjudge sweep CONFIG`: a grid of models x scorers x datasets, one results file per cell.

A config (YAML or TOML) looks like::

    out_dir: runs/my-sweep
    batch_size: 8
    models:
      - {name: smollm2, path: models/smollm2-135m-instruct}
    scorers: [hallucination, faithfulness, {name: toxicity, scale: 10}, rubric]
    scorer_options:
      rubric: {criteria: ["Answers the question.", "Under 50 words."]}
    datasets:
      - {name: example, path: examples/example.jsonl, context_col: context}

Each model is loaded once; a model entry may set `engine` (``transformers``, ``vllm`` or
``server``), `threads` and any option of its engine (as the flags of `localjudge score`): `dtype`,
`max_context`, `max_rows`; `device_map`, `decoder` (transformers); `tensor_parallel_size`,
`pipeline_parallel_size`, `gpu_memory_utilization`, `distributed_executor_backend`,
`enforce_eager` (vllm); `base_url`, `served_model`, `api_key_env`, `concurrency`,
`request_timeout`, `server_kind` (server). A server entry needs `name` (its results folder) and
`base_url` (a URL, or a list of URLs: several servers of the same model, rows spread over them);
its `path` (or `tokenizer`), optional, is the served model's tokenizer folder::

    models:
      - {name: qwen-on-vllm, engine: server, base_url: "http://127.0.0.1:8000/v1", path: models/qwen}

A model entry's `calibration` names a calibration file (`localjudge bench --fit-calibration`): each
row of that model's cells of a scorer and mode the file has a map for gets
``<scorer>_calibrated_prob``, as with `localjudge score --calibration` (`localjudge.cli.calibration`;
another scorer version is refused before any model loads, another judge once it has loaded).

A dataset entry may set `input_col`, `output_col`, `context_col`, `id_col`, `limit`,
`batch_size` and `scorers` (a subset to run on it). A scorer entry is a name or `{name, scale,
mode, options}`; `scorer_options` gives a scorer's options by its name (the keywords of its
factory, as `--scorer-option`), for every entry of that scorer, and an entry's own `options`
override them. Every cell is resumable (`<out_dir>/<model>/<dataset>/<scorer>.jsonl`, or
`<scorer>-<mode>.jsonl` for a direct mode, plus its `.progress/` log). `scorer_modules` lists
your own scorer modules (``.py`` files or module names, as `localjudge score --scorer-module`),
imported before any scorer name is read (it runs that code). `compat: mastra` (top level,
or an entry's own `compat`) scores as `localjudge score --compat mastra` does. Entries of one scorer and
mode (two rubrics) get a file each, named by what differs (`rubric-criteria-1a2b3c4d.jsonl`,
`toxicity-scale-10.jsonl`). Two cells that would still write one file (the same entry twice, two
datasets of one name) are refused before any model loads, as is an `out_dir` that cannot be
written. The combined summary is written to `<out_dir>/summary.csv` and `summary.md`.

`ray: true` (or a mapping: `address`, `judges`, `gpus_per_judge`, `cpus_per_judge`, as `localjudge
score --ray`'s flags) scores every cell on a Ray cluster (docs/ray.md): one Ray session for the
sweep, each cell's actors loading the model entry's judge; the files and logs are the same.
"""

from __future__ import annotations

import argparse
import csv
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from localjudge.cli.calibration import ModelCalibration, sweep_calibrations
from localjudge.cli.cluster import sweep_ray
from localjudge.cli.outputs import check_output_dir, hold_run
from localjudge.cli.shared import check_scorers
from localjudge.cli.summary import markdown_table
from localjudge.cli.sweep_cells import run_cells
from localjudge.cli.sweep_config import judge_spec, load_config
from localjudge.cli.sweep_plan import ScorerEntry, model_name, plan_cells, scorer_entries
from localjudge.cluster import ray_session


def run_sweep(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    out_dir = check_output_dir(config["out_dir"], "out_dir")
    try:
        entries = scorer_entries(config)
        plan_cells(config, entries)
    except ValueError as error:
        raise ValueError(f"{args.config}: {error}") from None
    unloaded = {}  # each entry's mode and scorer, built on no judge: before any model loads
    for entry in entries:
        [scorer] = check_scorers([(entry.name, entry.scale, entry.mode)], {entry.name: entry.options},
                                 where=f"{args.config}: scorer options of {entry.stem}", compat=entry.compat)
        unloaded[entry.stem] = (entry.mode, scorer)
    if sweep_ray(config, args.config) is not None and any(m.get("calibration") for m in config["models"]):
        raise ValueError(f"{args.config}: a model entry's calibration is not applied on Ray (as score --calibration "
                         "is not with --ray): drop ray, or apply the file in Python "
                         "(localjudge.bench.apply_calibration)")
    try:  # each file read, and checked against its cells' scorer versions
        calibrations = sweep_calibrations(config["models"], [model_name(m) for m in config["models"]], unloaded)
    except ValueError as error:
        raise ValueError(f"{args.config}: {error}") from None
    if sweep_ray(config, args.config) is not None:  # every model's path, before Ray starts
        for model in config["models"]:
            judge_spec(model).check()
    with hold_run(out_dir, f"out_dir {out_dir}"):
        return _sweep(args, config, entries, calibrations)


def _sweep(args: argparse.Namespace, config: dict[str, Any], entries: list[ScorerEntry],
           calibrations: dict[str, ModelCalibration]) -> int:
    """`run_sweep` once its config is checked and its out_dir held: the cells scored (`sweep_cells`),
    then the summary written to `<out_dir>/summary.csv` and `summary.md` and printed."""
    out_dir = Path(config["out_dir"])
    on_ray = sweep_ray(config, args.config)
    with ray_session(on_ray.get("address")) if on_ray is not None else nullcontext():
        table = run_cells(config, entries, on_ray, calibrations, quiet=args.quiet)
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "summary.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    (out_dir / "summary.md").write_text(markdown_table(table) + "\n", encoding="utf-8")
    print(markdown_table(table))
    print(f"wrote {out_dir / 'summary.csv'} and summary.md", file=sys.stderr)
    return 0


def add_sweep_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "sweep",
        help="run a models x scorers x datasets grid from a YAML or TOML config",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", help="sweep config file (.yaml, .yml or .toml)")
    parser.set_defaults(func=run_sweep)
