"""Reading and writing row files: JSONL, JSON, CSV, parquet, or a saved HF dataset folder."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datasets import Dataset

READ_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
WRITE_SUFFIXES = (".jsonl", ".parquet")


def read_table(path: str | Path) -> "Dataset":
    """Load rows from a file or a `save_to_disk` folder, entirely offline."""
    from datasets import Dataset, load_from_disk

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    if p.is_dir():
        if not (p / "dataset_info.json").exists() and not (p / "state.json").exists():
            raise ValueError(f"{p} is a folder but not a saved Hugging Face dataset (save_to_disk)")
        loaded = load_from_disk(str(p))
        if not isinstance(loaded, Dataset):
            raise ValueError(f"{p} holds several splits; pass one split's folder")
        return loaded
    suffix = p.suffix.lower()
    if suffix == ".jsonl":
        rows = []
        with p.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as error:
                        raise ValueError(f"{p}:{number}: not valid JSON ({error.msg})") from None
        return _from_rows(rows, p)
    if suffix == ".json":
        rows = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise ValueError(f"{p}: a .json data file must hold a list of objects")
        return _from_rows(rows, p)
    if suffix == ".csv":
        return Dataset.from_csv(str(p), keep_in_memory=True)
    if suffix == ".parquet":
        return Dataset.from_parquet(str(p), keep_in_memory=True)
    raise ValueError(f"unsupported data file {p.name}: use one of {', '.join(READ_SUFFIXES)} or a dataset folder")


def _from_rows(rows: list[Any], path: Path) -> "Dataset":
    from datasets import Dataset

    if not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path}: every row must be a JSON object")
    # Columns whose values mix types (a string here, a list of messages there) are stored as
    # JSON text so that Arrow accepts them; `decode_cell` turns them back.
    keys = list(dict.fromkeys(k for r in rows for k in r))
    mixed = {k for k in keys if len({type(r.get(k)).__name__ for r in rows if r.get(k) is not None}) > 1}
    fixed = [{k: (_encode(r.get(k)) if k in mixed else r.get(k)) for k in keys} for r in rows]
    try:
        return Dataset.from_list(fixed)
    except Exception as error:  # noqa: BLE001 - Arrow's errors are long; say what to fix
        raise ValueError(f"{path}: rows do not form a table: {error}") from None


def _encode(value: Any) -> Any:
    return value if value is None else "\x00json:" + json.dumps(value, ensure_ascii=False)


def decode_cell(value: Any) -> Any:
    """Undo the JSON-text storage of mixed-type cells (see `_from_rows`)."""
    if isinstance(value, str) and value.startswith("\x00json:"):
        return json.loads(value[6:])
    return value


def write_table(dataset: "Dataset", path: str | Path) -> None:
    """Write rows as JSONL or parquet (by extension), atomically: a crash leaves no half file."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in WRITE_SUFFIXES:
        raise ValueError(f"unsupported output file {p.name}: use .jsonl or .parquet")
    p.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    os.close(handle)
    try:
        if suffix == ".jsonl":
            with open(tmp, "w", encoding="utf-8") as out:
                for row in dataset:
                    clean = {k: decode_cell(v) for k, v in row.items()}
                    out.write(json.dumps(clean, ensure_ascii=False) + "\n")
        else:
            dataset.to_parquet(tmp)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
