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
import dataclasses
import hashlib
import json
import re
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from localjudge.cli.calibration import ModelCalibration, sweep_calibrations
from localjudge.cli.cluster import sweep_cell_on_ray, sweep_ray
from localjudge.cli.outputs import check_output_dir, check_output_file, hold_run
from localjudge.cli.shared import Bars, check_scorers
from localjudge.cli.summary import higher_is_better, markdown_table, summary_rows
from localjudge.cluster import ScorerSpec, ray_session
from localjudge.engines import OPTIONS, EngineOptionError, JudgeSpec, engine_needs
from localjudge.evaluation import Columns, ResultStore, evaluate, read_table, write_table
from localjudge.scorers import build_scorer, load_scorer_modules
from localjudge.scoring import check_compat
from localjudge.user_files import MAX_DEPTH, UserFileError, check_depth, load_yaml, read_user_file

OWN_MODEL_KEYS = ("name", "path", "engine", "threads", "calibration")  # the rest are its engine's options
MODEL_KEYS = set(OWN_MODEL_KEYS) | set().union(*OPTIONS.values())
CELL_KEYS = {"name", "path", "input_col", "output_col", "context_col", "id_col", "limit", "batch_size", "scorers"}
SCORER_KEYS = {"name", "scale", "mode", "options", "compat"}
TOP_KEYS = {"out_dir", "batch_size", "models", "scorers", "scorer_options", "datasets", "scorer_modules", "compat",
            "ray"}
_PLAIN = re.compile(r"[A-Za-z0-9._+-]{1,24}")  # an option value short and safe enough to name a file by


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a sweep config (YAML or TOML) and check its shape."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"sweep config {str(path)!r} does not exist")
    suffix = p.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise ValueError(f"sweep config must be .yaml, .yml or .toml, got {p.name}")
    # a regular file of at most SMALL_LIMIT bytes, nested at most MAX_DEPTH deep (localjudge.user_files)
    text = read_user_file(p, "sweep config").decode("utf-8")
    if suffix == ".toml":
        try:
            import tomllib  # Python 3.11+
        except ImportError:
            try:
                import tomli as tomllib  # the same parser, for 3.10
            except ImportError:
                raise ValueError(
                    f"{p.name}: reading TOML needs Python 3.11+ or `pip install tomli`; or write the config as YAML"
                ) from None
        try:
            config = check_depth(tomllib.loads(text), str(p))
        except RecursionError:
            raise UserFileError(f"{p}: nested deeper than {MAX_DEPTH} levels: not read") from None
    else:
        config = load_yaml(text, str(p))
    if not isinstance(config, dict):
        raise ValueError(f"{p}: the config must be a mapping")
    unknown = set(config) - TOP_KEYS
    if unknown:
        raise ValueError(f"{p}: unknown key(s) {', '.join(repr(k) for k in sorted(map(str, unknown)))} (known: "
                         f"{', '.join(sorted(TOP_KEYS))})")
    for where, holder in [("", config), *((f"dataset entry {e!r}: ", e) for e in config.get("datasets") or []
                                          if isinstance(e, dict))]:
        for key, low in (("batch_size", 1), ("limit", 0)):  # limit 0: every row, as before
            value = holder.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not low <= value <= 10**9):
                raise ValueError(f"{p}: {where}{key} must be a whole number from {low} to 1,000,000,000, got {value!r}")
    if not isinstance(config.get("out_dir", ""), str):
        raise ValueError(f"{p}: out_dir must be a folder's path, got {config['out_dir']!r}")
    for key in ("models", "scorers", "datasets"):
        if not config.get(key) or not isinstance(config[key], list):
            raise ValueError(f"{p}: '{key}' must be a non-empty list")
    for entry in config["models"]:
        _check_model(p, entry)
    for entry in config["datasets"]:
        unknown = set(entry) - CELL_KEYS
        if unknown or "path" not in entry:
            raise ValueError(f"{p}: dataset entry {entry!r}: needs 'path'; unknown keys {sorted(unknown)}")
    for entry in config["scorers"]:
        unknown = set(entry) - SCORER_KEYS if isinstance(entry, dict) else set()
        if not isinstance(entry, (str, dict)) or unknown or (isinstance(entry, dict) and "name" not in entry):
            raise ValueError(f"{p}: scorer entry {entry!r}: a name or a mapping with 'name'; unknown keys "
                             f"{sorted(unknown)} (known: {', '.join(sorted(SCORER_KEYS))})")
        if isinstance(entry, dict) and not isinstance(entry.get("options", {}), dict):
            raise ValueError(f"{p}: scorer entry {entry!r}: 'options' must be a mapping ({{criteria: [...]}})")
    for where, holder in [("compat", config), *((f"scorer entry {e!r}: compat", e) for e in config["scorers"]
                                                 if isinstance(e, dict))]:
        try:
            check_compat(holder.get("compat", "localjudge"))
        except ValueError as error:
            raise ValueError(f"{p}: {where}: {error}") from None
    modules = config.setdefault("scorer_modules", [])
    if not isinstance(modules, list) or not all(isinstance(m, str) and m for m in modules):
        raise ValueError(f"{p}: 'scorer_modules' must be a list of .py files or module names (as --scorer-module)")
    try:  # the user's own scorers, before any name is read: the files as each Ray actor imports them again
        config["scorer_modules"] = list(load_scorer_modules(modules))
    except ValueError as error:
        raise ValueError(f"{p}: scorer_modules: {error}") from None
    options = config.setdefault("scorer_options", {})
    names = [_scorer_spec(e)[0] for e in config["scorers"]]
    if not isinstance(options, dict) or not all(isinstance(o, dict) for o in options.values()):
        raise ValueError(f"{p}: 'scorer_options' must map scorer names to mappings of options "
                         "({rubric: {criteria: [...]}})")
    for entry in config["datasets"]:
        wanted = entry.get("scorers")
        if wanted is not None and (not isinstance(wanted, list) or not all(isinstance(n, str) for n in wanted)
                                   or set(wanted) - set(names)):
            raise ValueError(f"{p}: dataset entry {entry!r}: 'scorers' must list names of 'scorers' "
                             f"({', '.join(names)})")
    for name in options:
        if name not in names:
            raise ValueError(f"{p}: scorer_options names {name!r}, which is not in 'scorers' ({', '.join(names)})")
    config.setdefault("out_dir", str(p.with_suffix("")) + "-results")
    sweep_ray(config, str(p))
    return config


def _check_model(p: Path, entry: Any) -> None:
    """A model entry's shape: known keys; `path` (a local engine) or `name` and what its engine
    needs (a server: `base_url`; the entry's results folder is named by its `name`, there being
    no model folder to name it by); then its judge spec, checked (`JudgeSpec.checked`)."""
    unknown = set(entry) - MODEL_KEYS if isinstance(entry, dict) else set()
    needed = engine_needs(entry.get("engine", "transformers")) if isinstance(entry, dict) else None
    needs = ("path",) if needed in ("model", None) else ("name", needed)
    if not isinstance(entry, dict) or unknown or any(key not in entry for key in needs):
        raise ValueError(f"{p}: model entry {entry!r}: needs {' and '.join(repr(k) for k in needs)}; unknown "
                         f"keys {sorted(unknown)} (known: {', '.join(sorted(MODEL_KEYS))})")
    if not isinstance(entry.get("calibration", ""), str):
        raise ValueError(f"{p}: model entry {entry!r}: 'calibration' is the path of a calibration file "
                         "(bench --fit-calibration)")
    try:
        _judge_spec(entry).checked()
    except EngineOptionError as error:
        said = (f"threads is a key of the local engines, not of the {error.engine} engine" if error.option == "threads"
                else str(error))
        raise ValueError(f"{p}: model entry {entry!r}: {said}") from None
    except ValueError as error:
        raise ValueError(f"{p}: model entry {entry!r}: {error}") from None


def _engine_options(model: dict[str, Any]) -> dict[str, Any]:
    """A model entry's options for its engine: every key but the entry's own."""
    return {key: value for key, value in model.items() if key not in OWN_MODEL_KEYS}


def _scorer_spec(entry: Any) -> tuple[str, float, str]:
    if isinstance(entry, str):
        return entry, 1.0, "pipeline"
    return entry["name"], float(entry.get("scale", 1.0)), str(entry.get("mode", "pipeline"))


@dataclasses.dataclass(frozen=True)
class ScorerEntry:
    """One entry of `scorers`: the scorer, its scale, mode and options, and its file's stem."""

    name: str
    scale: float
    mode: str
    options: dict[str, Any]
    stem: str
    compat: str = "localjudge"


def scorer_entries(config: dict[str, Any]) -> list[ScorerEntry]:
    """The config's scorer entries, each with its result file's stem: ``NAME`` (``NAME-MODE`` for a
    direct mode), as always, where no other entry has the same; else that plus what sets the entry
    apart from the others of its name and mode (``-scale-10``, ``-criteria-1a2b3c4d``: an option's
    value, or a hash of it). Entries that still share a stem are refused."""
    entries = []
    for raw in config["scorers"]:
        name, scale, mode = _scorer_spec(raw)
        own = raw.get("options", {}) if isinstance(raw, dict) else {}
        options = {**config["scorer_options"].get(name, {}), **own}
        compat = raw.get("compat", config.get("compat", "localjudge")) if isinstance(raw, dict) \
            else config.get("compat", "localjudge")
        entries.append(ScorerEntry(name, scale, mode, options, name if mode == "pipeline" else f"{name}-{mode}",
                                   compat))
    for base in {e.stem for e in entries}:
        group = [i for i, e in enumerate(entries) if e.stem == base]
        if len(group) < 2:
            continue  # today's name: an existing sweep resumes, nothing is scored again
        keys = sorted({key for i in group for key in entries[i].options})
        differs = [k for k in keys if len({_label(entries[i].options.get(k, _DEFAULT)) for i in group}) > 1]
        scales = len({entries[i].scale for i in group}) > 1
        compats = len({entries[i].compat for i in group}) > 1
        for i in group:
            entry = entries[i]
            parts = [f"scale-{entry.scale:g}"] * scales + [f"{k}-{_label(entry.options.get(k, _DEFAULT))}"
                                                           for k in differs] + [f"compat-{entry.compat}"] * compats
            entries[i] = dataclasses.replace(entry, stem="-".join([base, *parts]))
    stems = [e.stem for e in entries]
    for i, stem in enumerate(stems):
        if stem in stems[:i]:
            raise ValueError(f"scorer entries {config['scorers'][stems.index(stem)]!r} and {config['scorers'][i]!r} "
                             f"are the same scorer, mode, scale and options: they would write one file ({stem}.jsonl)")
    return entries


_DEFAULT = object()  # an option an entry leaves to the scorer's default


def _label(value: Any) -> str:
    """An option value in a file name: itself when short and plain, else 8 hex digits of its hash."""
    if value is _DEFAULT:
        return "default"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if _PLAIN.fullmatch(text) else hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def plan_cells(config: dict[str, Any], entries: list[ScorerEntry]) -> list[Path]:
    """Every result file the sweep writes, each checked before any model loads: writable, and no
    two cells on one file (two models or datasets of one name)."""
    out_dir = Path(config["out_dir"])
    files: dict[Path, str] = {}
    for model in config["models"]:
        for data in config["datasets"]:
            for entry in entries:
                if data.get("scorers") and entry.name not in data["scorers"]:
                    continue
                out = out_dir / _model_name(model) / _data_name(data) / f"{entry.stem}.jsonl"
                cell = f"model {_model_name(model)!r}, dataset {data['path']!r}, scorer entry {entry.stem!r}"
                if out in files:
                    raise ValueError(f"{cell} and {files[out]} would write one file ({out}): give the models "
                                     "or datasets distinct names")
                files[out] = cell
                check_output_file(out, (".jsonl",), "a sweep cell")
    return list(files)


def _model_name(model: dict[str, Any]) -> str:
    return str(model.get("name") or Path(model["path"]).name)


def _data_name(data: dict[str, Any]) -> str:
    return str(data.get("name") or Path(data["path"]).stem)


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
        calibrations = sweep_calibrations(config["models"], [_model_name(m) for m in config["models"]], unloaded)
    except ValueError as error:
        raise ValueError(f"{args.config}: {error}") from None
    if sweep_ray(config, args.config) is not None:  # every model's path, before Ray starts
        for model in config["models"]:
            _judge_spec(model).check()
    with hold_run(out_dir, f"out_dir {out_dir}"):
        return _sweep(args, config, entries, calibrations)


def _judge_spec(model: dict[str, Any]) -> JudgeSpec:
    """A model entry's judge: loaded by the sweep, or on Ray handed to each cell's actors."""
    return JudgeSpec(model.get("path"), model.get("engine", "transformers"), _engine_options(model),
                     model.get("threads"))


def _sweep(args: argparse.Namespace, config: dict[str, Any], entries: list[ScorerEntry],
           calibrations: dict[str, ModelCalibration]) -> int:
    """`run_sweep` once its config is checked and its out_dir held: each model, then its cells."""
    out_dir = Path(config["out_dir"])
    table: list[dict[str, Any]] = []
    on_ray = sweep_ray(config, args.config)
    with ray_session(on_ray.get("address")) if on_ray is not None else nullcontext():
        _cells(args, config, entries, table, on_ray, calibrations)
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "summary.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    (out_dir / "summary.md").write_text(markdown_table(table) + "\n", encoding="utf-8")
    print(markdown_table(table))
    print(f"wrote {out_dir / 'summary.csv'} and summary.md", file=sys.stderr)
    return 0


def _cells(args: argparse.Namespace, config: dict[str, Any], entries: list[ScorerEntry], table: list[dict[str, Any]],
           on_ray: dict[str, Any] | None, calibrations: dict[str, ModelCalibration]) -> None:
    """Each model, then its cells, one summary row per cell into `table`; on Ray (`on_ray`: the
    config's `ray:`) each cell's actors load the model instead of this process. A model's
    `calibrations` entry adds its column to the cells it applies to."""
    out_dir = Path(config["out_dir"])
    for model in config["models"]:
        model_name = _model_name(model)
        judge = None if on_ray is not None else _judge_spec(model).load()  # heavy: the engine loads
        scorers = {} if on_ray is not None else {
            e.stem: build_scorer(e.name, judge, scale=e.scale, mode=e.mode, options=e.options, compat=e.compat)
            for e in entries}
        calibration = calibrations.get(model_name)
        if calibration is not None:
            calibration.check_judge(scorers)  # before any cell is scored
        for data in config["datasets"]:
            data_name = _data_name(data)
            dataset = read_table(data["path"])
            if data.get("limit"):
                dataset = dataset.select(range(min(int(data["limit"]), len(dataset))))
            columns = Columns(data.get("input_col", "input") or None, data.get("output_col", "output"),
                              data.get("context_col", "context") or None, data.get("id_col"))
            wanted = data.get("scorers")
            for entry in entries:
                if wanted and entry.name not in wanted:
                    continue
                out = out_dir / model_name / data_name / f"{entry.stem}.jsonl"
                bars = Bars(len(dataset), not args.quiet)
                try:
                    batch_size = int(data.get("batch_size", config.get("batch_size", 8)))
                    store = ResultStore(f"{out}.progress")
                    if on_ray is not None:  # the cell's actors load the judge
                        spec = ScorerSpec(entry.name, entry.scale, entry.mode, entry.options, entry.compat,
                                          tuple(config["scorer_modules"]))
                        result = sweep_cell_on_ray(on_ray, _judge_spec(model), dataset, spec, columns=columns,
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
                    table.append({"model": model_name, "dataset": data_name, **row, "file": str(out)})


def add_sweep_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "sweep",
        help="run a models x scorers x datasets grid from a YAML or TOML config",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", help="sweep config file (.yaml, .yml or .toml)")
    parser.set_defaults(func=run_sweep)
