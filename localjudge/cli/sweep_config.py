"""A sweep's config (`localjudge sweep CONFIG`, YAML or TOML) read and checked before any model loads.

`load_config` refuses an unknown key, an entry of the wrong shape, a model entry its engine
cannot take (`JudgeSpec.checked`) and a scorer module that does not import, each naming the
file and the entry; it fills in `out_dir`, `scorer_options` and the resolved `scorer_modules`.
A model entry's own keys are `OWN_MODEL_KEYS`; every other key is an option of its engine, and
`judge_spec` turns the entry into the judge the sweep (or each Ray cell's actors) loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localjudge.cli.cluster import sweep_ray
from localjudge.engines import OPTIONS, EngineOptionError, JudgeSpec, engine_needs
from localjudge.scorers import load_scorer_modules
from localjudge.scoring import check_compat
from localjudge.user_files import MAX_DEPTH, UserFileError, check_depth, load_yaml, read_user_file

OWN_MODEL_KEYS = ("name", "path", "engine", "threads", "calibration")  # the rest are its engine's options
MODEL_KEYS = set(OWN_MODEL_KEYS) | set().union(*OPTIONS.values())
CELL_KEYS = {"name", "path", "input_col", "output_col", "context_col", "id_col", "limit", "batch_size", "scorers"}
SCORER_KEYS = {"name", "scale", "mode", "options", "compat"}
TOP_KEYS = {"out_dir", "batch_size", "models", "scorers", "scorer_options", "datasets", "scorer_modules", "compat",
            "ray"}


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
    names = [scorer_spec(e)[0] for e in config["scorers"]]
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
        judge_spec(entry).checked()
    except EngineOptionError as error:
        said = (f"threads is a key of the local engines, not of the {error.engine} engine" if error.option == "threads"
                else str(error))
        raise ValueError(f"{p}: model entry {entry!r}: {said}") from None
    except ValueError as error:
        raise ValueError(f"{p}: model entry {entry!r}: {error}") from None


def _engine_options(model: dict[str, Any]) -> dict[str, Any]:
    """A model entry's options for its engine: every key but the entry's own."""
    return {key: value for key, value in model.items() if key not in OWN_MODEL_KEYS}


def scorer_spec(entry: Any) -> tuple[str, float, str]:
    """A scorer entry (a name, or a mapping with `name`) as its name, scale and mode."""
    if isinstance(entry, str):
        return entry, 1.0, "pipeline"
    return entry["name"], float(entry.get("scale", 1.0)), str(entry.get("mode", "pipeline"))


def judge_spec(model: dict[str, Any]) -> JudgeSpec:
    """A model entry's judge: loaded by the sweep, or on Ray handed to each cell's actors."""
    return JudgeSpec(model.get("path"), model.get("engine", "transformers"), _engine_options(model),
                     model.get("threads"))
