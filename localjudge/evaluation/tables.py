"""Reading and writing row files: JSONL, JSON, CSV, parquet, a folder of them, or a saved HF dataset folder.

Reading writes nothing anywhere: files are parsed here (CSV by Python's `csv`, parquet by
pyarrow) into in-memory datasets, never through a `datasets` builder, which would keep an Arrow
copy of the user's data under ``~/.cache/huggingface/datasets``. Text files are UTF-8 (a BOM is
dropped); text is read under the storing rule (`localjudge.text_safety`: a lone surrogate becomes
U+FFFD, a NUL is dropped), so one odd row never rejects a file and no cell read from a user's
file can pass for a JSON cell (see `dataset_from_rows`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import secrets
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localjudge.text_safety import safe_text, safe_value
from localjudge.user_files import DATA_LIMIT, check_user_file, load_json, open_user_file

if TYPE_CHECKING:
    import pyarrow as pa
    from datasets import Dataset

READ_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
WRITE_SUFFIXES = (".jsonl", ".parquet")
JSON_CELL = "\x00json:"  # prefix of a cell stored as JSON text (see `dataset_from_rows`)
FOLDER_ROW = "localjudge_row"  # a data folder's rows: "<file name>#<row in that file>" (see `read_table`)


def read_table(path: str | Path) -> Dataset:
    """Load rows from a file, a folder of data files or a `save_to_disk` folder, entirely offline.

    A folder that is not a saved dataset is read as its data files (`READ_SUFFIXES`; not its
    subfolders, nor names starting with a dot) in sorted name order, their rows concatenated, plus
    a column `FOLDER_ROW` holding each row's ``"<file name>#<row number in that file>"`` (from 0):
    the run id when no column is named for one (`rows_to_runs`), so adding a file shifts no other
    file's result keys. A folder without data files, or whose files' columns differ, is an error.
    """
    from datasets import Dataset, load_from_disk

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    if p.is_dir():
        if not (p / "dataset_info.json").exists() and not (p / "state.json").exists():
            return _read_folder(p)
        loaded = load_from_disk(str(p))
        if not isinstance(loaded, Dataset):
            raise ValueError(f"{p} holds several splits; pass one split's folder")
        return loaded
    return _read_file(p)


def _read_folder(folder: Path) -> Dataset:
    """A data folder's files as one table (see `read_table`); a file with no rows adds nothing."""
    from datasets import concatenate_datasets

    files = sorted((f for f in folder.iterdir() if f.suffix.lower() in READ_SUFFIXES and f.is_file()
                    and not f.name.startswith(".")), key=lambda f: f.name)
    if not files:
        raise ValueError(f"{folder} is a folder with no data files ({', '.join(READ_SUFFIXES)}) and not a saved "
                         "Hugging Face dataset (save_to_disk)")
    read = [(f, _read_file(f)) for f in files]
    parts = [(f, part) for f, part in read if len(part)] or read[:1]
    first, head = parts[0]
    for f, part in parts:
        if FOLDER_ROW in part.column_names:
            raise ValueError(f"{f}: a data folder's file has a column {FOLDER_ROW!r}, the one its reader adds "
                             "(each row's file and row number): rename it")
        if set(part.column_names) != set(head.column_names):
            raise ValueError(f"{folder}: {f.name} has the columns {', '.join(part.column_names)} but {first.name} "
                             f"has {', '.join(head.column_names)}: the files of a data folder need the same columns")
    ids = [f"{f.name}#{n}" for f, part in parts for n in range(len(part))]
    try:
        joined = concatenate_datasets([part.select_columns(head.column_names) for _, part in parts])
    except ValueError:  # a column typed apart in two files (text here, lists there): stored as one JSONL's would be
        joined = dataset_from_rows([{k: decode_cell(v) for k, v in row.items()} for _, part in parts for row in part],
                                   where=str(folder))
    return joined.add_column(FOLDER_ROW, ids)


def _read_file(p: Path) -> Dataset:
    """One data file, under the rule for files a user names (`localjudge.user_files`: a regular
    file of at most `DATA_LIMIT` bytes, JSON nested at most `MAX_DEPTH` deep), else one line."""
    from datasets import Dataset

    suffix = p.suffix.lower()
    if suffix not in READ_SUFFIXES:
        raise ValueError(f"unsupported data file {p.name}: use one of {', '.join(READ_SUFFIXES)} or a dataset folder")
    check_user_file(p, "data file", limit=DATA_LIMIT)
    try:
        if suffix == ".jsonl":
            return _from_rows(_jsonl_rows(p), p)
        if suffix == ".json":
            try:
                with _text(p) as handle:
                    rows = load_json(handle.read(), str(p))
            except json.JSONDecodeError as error:
                raise ValueError(f"{p}:{error.lineno}:{error.colno}: not valid JSON ({error.msg})") from None
            if not isinstance(rows, list):
                raise ValueError(f"{p}: a .json data file must hold a list of objects")
            return _from_rows(rows, p)
        if suffix == ".csv":
            return _read_csv(p)
    except UnicodeDecodeError:
        raise _not_utf8(p) from None
    if suffix == ".parquet":
        import pyarrow.parquet as pq
        from datasets.table import InMemoryTable

        try:
            table = pq.read_table(p)
        except Exception as error:  # noqa: BLE001 - pyarrow's errors name no file
            raise ValueError(f"{p}: not a readable parquet file ({error})") from None
        if b"huggingface" not in (table.schema.metadata or {}):  # not written by `datasets`: not ours
            table = _safe_text_columns(table)
        return Dataset(InMemoryTable(table))
    raise AssertionError(suffix)


def _text(path: Path, newline: str | None = None) -> io.TextIOWrapper:
    """A data file opened as UTF-8 text under the user-file rule (-sig: a BOM dropped, as Excel writes)."""
    return io.TextIOWrapper(open_user_file(path, "data file", limit=DATA_LIMIT), encoding="utf-8-sig",
                            newline=newline)


def _jsonl_rows(path: Path) -> list[Any]:
    rows = []
    with _text(path) as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    rows.append(load_json(line, f"{path}:{number}"))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
    return rows


def _not_utf8(path: Path) -> ValueError:
    """The one-line error for a text file that is not UTF-8, naming the line of its first bad byte
    (found by reading the bytes again: a decoder's error is relative to its chunk)."""
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        return ValueError(f"{path}:{line}: not UTF-8 text (byte 0x{raw[error.start]:02x}); save the file as UTF-8")
    return ValueError(f"{path}: not UTF-8 text; save the file as UTF-8")


def _safe_text_columns(table: pa.Table) -> pa.Table:
    """A parquet table's text columns under the storing rule (Arrow text holds no surrogate: only a
    NUL can be there). Only for files `datasets` did not write: those it wrote (localjudge's own
    output among them) keep their mixed-type cells, which start with `JSON_CELL` on purpose."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            column = table.column(i)
            if pc.any(pc.match_substring(column, "\x00")).as_py():
                table = table.set_column(i, field, pc.replace_substring(column, "\x00", ""))
    return table


def _read_csv(path: Path) -> Dataset:
    """Every CSV cell as text ("42" stays a string answer); only an empty cell is missing. A cell
    may be as long as the file (a 200 KB context): `csv`'s 128 KiB field limit is raised to the
    file's size while it is read, then put back."""
    from datasets import Dataset, Features, Value

    with _text(path, newline="") as handle, _field_limit(os.fstat(handle.fileno()).st_size):
        reader = csv.reader(handle)
        header = next(reader, [])
        if not header:
            raise ValueError(f"{path} is empty: a CSV file needs a first line naming its columns")
        header = [safe_text(name) for name in header]
        if len(set(header)) != len(header):
            raise ValueError(f"{path}: the first line names a column twice: {', '.join(header)}")
        columns: dict[str, list[str | None]] = {name: [] for name in header}
        for cells in reader:
            if not cells:
                continue  # a blank line
            if len(cells) > len(header):
                raise ValueError(f"{path}:{reader.line_num}: {len(cells)} cells, but the first line "
                                 f"names {len(header)} columns")
            cells += [""] * (len(header) - len(cells))
            for name, cell in zip(header, cells, strict=True):
                columns[name].append(safe_text(cell) if cell != "" else None)
    features = Features({name: Value("string") for name in header})
    return Dataset.from_dict(columns, features=features)


@contextmanager
def _field_limit(size: int) -> Iterator[None]:
    """`csv`'s field size limit (process-wide) at least `size` within the block, then as it was."""
    before = csv.field_size_limit()
    csv.field_size_limit(max(before, min(size + 1, sys.maxsize)))
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _from_rows(rows: list[Any], path: Path) -> Dataset:
    if not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path}: every row must be a JSON object")
    return dataset_from_rows(rows, where=str(path))


def dataset_from_rows(rows: Sequence[Mapping[str, Any]], *, where: str = "rows") -> Dataset:
    """A `Dataset` from dicts whose columns may mix types (a string here, chat messages there).

    Arrow needs one type per column, so a column whose values mix types is stored as JSON text
    (`decode_cell` turns each cell back); if Arrow still refuses (lists of different item
    types), every column that holds anything but strings is stored that way. Every string (keys
    too) is read under the storing rule (`safe_value`): a lone surrogate, which Arrow cannot hold,
    becomes U+FFFD, and a NUL is dropped, so no text of the rows starts like a JSON cell. Row
    values are never checked here: a bad value reaches the scorer, which records that row as
    unscored.
    """
    from datasets import Dataset

    if not all(isinstance(r, Mapping) for r in rows):
        raise ValueError(f"{where}: every row must be a dict (a JSON object)")
    rows = [safe_value(r) for r in rows]
    keys = list(dict.fromkeys(k for r in rows for k in r))
    kinds = {k: {type(r.get(k)).__name__ for r in rows if r.get(k) is not None} for k in keys}
    failure: Exception | None = None
    for encoded in (
        {k for k in keys if len(kinds[k]) > 1},
        {k for k in keys if kinds[k] - {"str"}},
    ):
        try:
            fixed = [{k: (_encode(r.get(k)) if k in encoded else r.get(k)) for k in keys} for r in rows]
        except (TypeError, ValueError) as error:  # bytes, a set...: nothing JSON or Arrow can hold
            raise ValueError(f"{where}: a value cannot be stored in a table: {error}") from None
        try:
            return Dataset.from_list(fixed)
        except Exception as error:  # noqa: BLE001 - Arrow's errors are long; say what to fix
            failure = error
    raise ValueError(f"{where}: rows do not form a table: {failure}") from None


def _is_json_cell(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(JSON_CELL)


def _encode(value: Any) -> Any:
    return value if value is None else JSON_CELL + json.dumps(value, ensure_ascii=False)


def decode_cell(value: Any) -> Any:
    """Undo the JSON-text storage of mixed-type cells (see `dataset_from_rows`)."""
    if _is_json_cell(value):
        try:
            return json.loads(value[len(JSON_CELL):])
        except json.JSONDecodeError:  # text that merely starts like one: keep it as it is
            return value
    return value


def write_table(dataset: Dataset, path: str | Path) -> None:
    """Write rows as JSONL or parquet (by extension), atomically: a crash leaves no half file.

    The rows go to a temporary file beside `path`, which is flushed to disk and then renamed
    over `path`; on any error the temporary file is removed and `path` is left as it was.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in WRITE_SUFFIXES:
        raise ValueError(f"unsupported output file {p.name}: use .jsonl or .parquet")
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.parent / f".{p.name}.{secrets.token_hex(4)}.tmp"  # created like any file: umask applies
    try:
        if suffix == ".jsonl":
            with open(tmp, "x", encoding="utf-8") as out:
                for row in dataset:
                    clean = {k: _finite_or_text(decode_cell(v)) for k, v in row.items()}
                    out.write(json.dumps(clean, ensure_ascii=False) + "\n")
        else:
            dataset.to_parquet(str(tmp))
        _fsync(tmp)
        os.replace(tmp, p)
        if os.name == "posix":
            _fsync(p.parent)  # make the rename itself durable
    finally:
        if tmp.exists():
            tmp.unlink()


def _finite_or_text(value: Any) -> Any:
    """A cell as JSON can hold it: a non-finite number (compat="mastra"'s NaN score) as its name,
    ``"NaN"``, as the resume log writes it (JSON has no NaN, and null is an unscored run)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
