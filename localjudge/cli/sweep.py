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
`base_url`; its `path` (or `tokenizer`), optional, is the served model's tokenizer folder::

    models:
      - {name: qwen-on-vllm, engine: server, base_url: "http://127.0.0.1:8000/v1", path: models/qwen}

A dataset entry may set `input_col`, `output_col`, `context_col`, `id_col`, `limit`,
`batch_size` and `scorers` (a subset to run on it). A scorer entry is a name or `{name, scale,
mode}`; `scorer_options` gives a scorer's options by its name (the keywords of its factory, as
`--scorer-option`), for every entry of that scorer. Every cell is resumable
(`<out_dir>/<model>/<dataset>/<scorer>.jsonl` plus its `.progress/` log); the combined summary
is written to `<out_dir>/summary.csv` and `summary.md`.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Any

from localjudge.cli.shared import Bars, check_scorers, markdown_table, set_threads, summary_rows
from localjudge.engines import OPTIONS, check_engine, load_judge
from localjudge.evaluation import Columns, ResultStore, evaluate, read_table, write_table
from localjudge.scorers import build_scorer

MODEL_KEYS = {"name", "path", "engine", "threads"} | set().union(*OPTIONS.values())
CELL_KEYS = {"name", "path", "input_col", "output_col", "context_col", "id_col", "limit", "batch_size", "scorers"}
SCORER_KEYS = {"name", "scale", "mode"}


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a sweep config (YAML or TOML) and check its shape."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"sweep config {str(path)!r} does not exist")
    if p.suffix.lower() == ".toml":
        try:
            import tomllib  # Python 3.11+
        except ImportError:
            try:
                import tomli as tomllib  # the same parser, for 3.10
            except ImportError:
                raise ValueError(
                    f"{p.name}: reading TOML needs Python 3.11+ or `pip install tomli`; or write the config as YAML"
                ) from None
        config = tomllib.loads(p.read_text(encoding="utf-8"))
    elif p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        config = yaml.safe_load(p.read_text(encoding="utf-8"))
    else:
        raise ValueError(f"sweep config must be .yaml, .yml or .toml, got {p.name}")
    if not isinstance(config, dict):
        raise ValueError(f"{p}: the config must be a mapping")
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
    options = config.setdefault("scorer_options", {})
    names = [_scorer_spec(e)[0] for e in config["scorers"]]
    if not isinstance(options, dict) or not all(isinstance(o, dict) for o in options.values()):
        raise ValueError(f"{p}: 'scorer_options' must map scorer names to mappings of options "
                         "({rubric: {criteria: [...]}})")
    for name in options:
        if name not in names:
            raise ValueError(f"{p}: scorer_options names {name!r}, which is not in 'scorers' ({', '.join(names)})")
    config.setdefault("out_dir", str(p.with_suffix("")) + "-results")
    return config


def _check_model(p: Path, entry: Any) -> None:
    """A model entry's shape: known keys; `path` (a local engine) or `name` and `base_url` (a
    server); options its engine takes."""
    unknown = set(entry) - MODEL_KEYS if isinstance(entry, dict) else set()
    server = isinstance(entry, dict) and entry.get("engine") == "server"
    needs = ("name", "base_url") if server else ("path",)
    if not isinstance(entry, dict) or unknown or any(key not in entry for key in needs):
        raise ValueError(f"{p}: model entry {entry!r}: needs {' and '.join(repr(k) for k in needs)}; unknown "
                         f"keys {sorted(unknown)} (known: {', '.join(sorted(MODEL_KEYS))})")
    try:
        check_engine(entry.get("engine", "transformers"), _engine_options(entry))
    except ValueError as error:
        raise ValueError(f"{p}: model entry {entry!r}: {error}") from None
    if server and entry.get("threads"):
        raise ValueError(f"{p}: model entry {entry!r}: threads is a key of the local engines, not of the server engine")


def _engine_options(model: dict[str, Any]) -> dict[str, Any]:
    """A model entry's options for its engine: every key but the entry's own."""
    return {key: value for key, value in model.items() if key not in ("name", "path", "engine", "threads")}


def _scorer_spec(entry: Any) -> tuple[str, float, str]:
    if isinstance(entry, str):
        return entry, 1.0, "pipeline"
    return entry["name"], float(entry.get("scale", 1.0)), str(entry.get("mode", "pipeline"))


def run_sweep(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    out_dir = Path(config["out_dir"])
    specs = [_scorer_spec(e) for e in config["scorers"]]
    options = config["scorer_options"]
    check_scorers(specs, options, where=f"{args.config}: scorer_options")  # before any model loads
    table: list[dict[str, Any]] = []
    for model in config["models"]:
        model_name = model.get("name") or Path(model["path"]).name
        engine = model.get("engine", "transformers")
        set_threads(model.get("threads"), engine)
        judge = load_judge(model.get("path"), engine=engine, **_engine_options(model))  # heavy: the engine loads here
        for data in config["datasets"]:
            data_name = data.get("name") or Path(data["path"]).stem
            dataset = read_table(data["path"])
            if data.get("limit"):
                dataset = dataset.select(range(min(int(data["limit"]), len(dataset))))
            columns = Columns(data.get("input_col", "input") or None, data.get("output_col", "output"),
                              data.get("context_col", "context") or None, data.get("id_col"))
            wanted = data.get("scorers")
            for name, scale, mode in specs:
                if wanted and name not in wanted:
                    continue
                stem = name if mode == "pipeline" else f"{name}-{mode}"
                out = out_dir / model_name / data_name / f"{stem}.jsonl"
                scorer = build_scorer(name, judge, scale=scale, mode=mode, options=options.get(name))
                bars = Bars(len(dataset), not args.quiet)
                try:
                    batch_size = int(data.get("batch_size", config.get("batch_size", 8)))
                    result = evaluate(dataset, [scorer], batch_size=batch_size,
                                      columns=columns, store=ResultStore(f"{out}.progress"), progress=bars)
                finally:
                    bars.close()
                write_table(result.dataset, out)
                for row in summary_rows(result.summary):
                    table.append({"model": model_name, "dataset": data_name, **row, "file": str(out)})
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
