"""A sweep's cells planned before any model loads: each scorer entry's result file, and every file checked.

A cell is a model x dataset x scorer entry, written to ``<out_dir>/<model>/<dataset>/<stem>.jsonl``.
`scorer_entries` names each entry's file (its stem) by what sets it apart from the others of its
scorer and mode; `plan_cells` lists every cell's file, refusing two cells on one file and a file
that cannot be written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from localjudge.cli.outputs import check_output_file
from localjudge.cli.sweep_config import scorer_spec

_PLAIN = re.compile(r"[A-Za-z0-9._+-]{1,24}")  # an option value short and safe enough to name a file by


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
        name, scale, mode = scorer_spec(raw)
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
                out = out_dir / model_name(model) / data_name(data) / f"{entry.stem}.jsonl"
                cell = f"model {model_name(model)!r}, dataset {data['path']!r}, scorer entry {entry.stem!r}"
                if out in files:
                    raise ValueError(f"{cell} and {files[out]} would write one file ({out}): give the models "
                                     "or datasets distinct names")
                files[out] = cell
                check_output_file(out, (".jsonl",), "a sweep cell")
    return list(files)


def model_name(model: dict[str, Any]) -> str:
    """A model entry's results folder: its `name`, else its model folder's name."""
    return str(model.get("name") or Path(model["path"]).name)


def data_name(data: dict[str, Any]) -> str:
    """A dataset entry's results folder: its `name`, else its file's stem."""
    return str(data.get("name") or Path(data["path"]).stem)
