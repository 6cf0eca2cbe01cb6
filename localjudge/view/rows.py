"""Scored rows as one self-contained HTML page (`localjudge view`), to read offline in a browser.

A source is a results file (``localjudge score --out``: JSONL or parquet) or a folder of them:
a bench ``--out-dir`` (its ``scored/<benchmark>.jsonl``) or a sweep's ``out_dir``
(``<model>/<dataset>/<scorer>.jsonl``); each row is labelled with the file it came from, and
resume logs (``*.progress/``, ``*.ranks/``, hidden folders) are left out. The page has one
table row per (data row, scorer): sortable, filterable, unscored rows first; a click shows the
row's texts, claims, verdicts, reason and the judge's raw output; a histogram per scorer.

Nothing on the page can reach the network or run text from the data: the rows are embedded as
JSON in an inert ``<script type="application/json">`` with ``<``, ``>``, ``&``, U+2028 and
U+2029 escaped (no text can close the tag), the page's own script builds elements with
``textContent`` only (`view_page.py`), and its Content-Security-Policy allows no source at all
but that script and stylesheet, by hash.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import os
import secrets
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from localjudge.evaluation import decode_cell, read_table
from localjudge.view.page import PAGE_CSS, PAGE_JS

logger = logging.getLogger(__name__)

Source = str | Path | Sequence[str | Path]
TABLE_SUFFIXES = (".jsonl", ".parquet")
PAGE_SUFFIXES = (".html", ".htm")
SKIPPED_FOLDERS = (".progress", ".ranks")  # resume logs and a data-parallel run's scratch
ID_COLUMNS = ("run_id", "id", "runId")
TEXT_COLUMNS = ("input", "output", "context")
RESULT_PARTS = ("score", "prob_score", "reason", "error", "error_kind", "steps")  # see evaluate._result_columns
_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def find_tables(folder: Path) -> list[Path]:
    """Every JSONL or parquet file under `folder`, in path order, outside resume logs and hidden folders."""
    found = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if path.suffix.lower() not in TABLE_SUFFIXES or not path.is_file():
            continue
        if any(part.startswith(".") or part.endswith(SKIPPED_FOLDERS) for part in parts):
            continue
        found.append(path)
    return found


def scorer_names(columns: Sequence[str]) -> list[str]:
    """The scorers whose columns a results table holds (``NAME_score`` with ``NAME_error``), in column order."""
    names = [c[: -len("_score")] for c in columns if c.endswith("_score")]
    return [n for n in names if f"{n}_error" in columns]


def render_page(source: Source) -> str:
    """The HTML page of every scored row in `source`: a results file, a bench or sweep folder, or a list of them.

    Raises:
        FileNotFoundError: a source does not exist.
        ValueError: a file given by name has no scorer columns, or no results table was found.
    """
    payload = collect(_tables(source))
    if not payload["results"]:
        raise ValueError(f"no scored rows in {_describe(source)}: expected `localjudge score` results "
                         f"({', '.join(TABLE_SUFFIXES)} files with NAME_score and NAME_error columns)")
    return page_html(payload, _describe(source))


def page_html(payload: dict[str, Any], name: str) -> str:
    """The page of `collect`'s payload, titled by `name`."""
    title = escape(f"localjudge view: {name}")
    policy = (f"default-src 'none'; script-src '{_sha256(PAGE_JS)}'; style-src '{_sha256(PAGE_CSS)}'; "
              "base-uri 'none'; form-action 'none'")
    controls = ('<input id="q" type="search" placeholder="filter: id, text, error, reason" aria-label="filter">'
                '<select id="scorer" aria-label="scorer"><option value="">all scorers</option></select>'
                '<label><input type="checkbox" id="unscored"> unscored only</label><span id="count"></span>')
    return "".join([
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title><style>{PAGE_CSS}</style></head>\n<body>",
        f'<header><h1>{title}</h1><p id="sources"></p></header>',
        '<section id="hists" aria-label="score histograms"></section>',
        f'<div id="controls">{controls}</div>',
        '<main><div id="tablewrap"><table><thead><tr id="head"></tr></thead><tbody id="rows"></tbody></table></div>',
        '<aside id="detail" hidden></aside></main>\n',
        f'<script type="application/json" id="data">{embed_json(payload)}</script>\n',
        f"<script>{PAGE_JS}</script>\n</body></html>\n",
    ])


def write_view(source: Source, out_path: str | Path | None = None) -> Path:
    """Write `render_page(source)` to `out_path` (atomically) and return that path.

    Without `out_path` the page goes next to the source: ``FILE.jsonl.html`` for a file,
    ``FOLDER/view.html`` for a folder. The page's name must end in ``.html`` (or ``.htm``) and
    not be a folder, checked before anything is read: a results file named as the page (``view
    out.jsonl --out out.jsonl``) would be overwritten with HTML.
    """
    out = Path(out_path) if out_path is not None else default_out(source)
    if out.suffix.lower() not in PAGE_SUFFIXES:
        raise ValueError(f"the page {str(out)!r} must be named .html: it would overwrite a file of another kind "
                         "(a results file?)")
    if out.is_dir():
        raise ValueError(f"the page {str(out)!r} is a folder: name a file (.html)")
    page = render_page(source)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.{secrets.token_hex(4)}.tmp"
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


def default_out(source: Source) -> Path:
    """Where `write_view` puts the page of one source when no path is given."""
    if not isinstance(source, (str, Path)):
        raise ValueError("several sources: name the page to write")
    path = Path(source)
    return path / "view.html" if path.is_dir() else Path(f"{path}.html")


def collect(tables: Sequence[tuple[str, Path, bool]]) -> dict[str, Any]:
    """The page's data: its sources, scorers, data rows and one result per (row, scorer), and
    the files left out as unreadable (`skipped`).

    Args:
        tables: (label, path, named by the user) per table; a table with no scorer columns or
            one that does not read is an error when named, left out (with a warning, and a note
            on the page for an unreadable one) when found in a folder.
    """
    sources: list[str] = []
    skipped: list[str] = []
    scorers: list[str] = []
    rows: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for label, path, named in tables:
        try:
            dataset = read_table(path)
        except (ValueError, OSError) as error:  # one unreadable file found in a folder costs that file only
            if named:
                raise
            logger.warning("%s: left out of the page, unreadable (%s)", path, error)
            skipped.append(label)
            continue
        names = scorer_names(dataset.column_names)
        if not names:
            if named:
                raise ValueError(f"{path}: no scorer columns (NAME_score, NAME_error): not a results file")
            logger.info("%s: no scorer columns, left out", path)
            continue
        sources.append(label)
        scorers += [n for n in names if n not in scorers]
        owned = {f"{n}_{part}" for n in names for part in RESULT_PARTS}
        id_col = next((c for c in ID_COLUMNS if c in dataset.column_names), None)
        for index, record in enumerate(dataset):
            cells = {k: decode_cell(v) for k, v in record.items()}
            row_id = cells.get(id_col) if id_col else None
            rows.append({
                "source": label, "index": index, "id": str(index) if row_id is None else str(row_id),
                **{c: _text(cells.get(c)) for c in TEXT_COLUMNS},
                "extra": {k: _text(v) for k, v in cells.items() if k not in owned and k not in (*TEXT_COLUMNS, id_col)},
            })
            results += [{
                "row": len(rows) - 1, "scorer": n, "score": _number(cells.get(f"{n}_score")),
                "prob": _number(cells.get(f"{n}_prob_score")), "kind": cells.get(f"{n}_error_kind"),
                "error": _text(cells.get(f"{n}_error")), "reason": _text(cells.get(f"{n}_reason")),
                "steps": _steps(cells.get(f"{n}_steps")),
            } for n in names]
    return {"sources": sources, "skipped": skipped, "scorers": scorers, "rows": rows, "results": results}


def embed_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u`` escapes.

    They can only occur inside JSON strings, where the escapes mean the same characters, so
    `JSON.parse` reads the same value while no ``</script>`` or ``<!--`` can appear in the text.
    """
    text = json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, default=str, separators=(",", ":"))
    return text.translate(_JSON_ESCAPES)


def _tables(source: Source) -> list[tuple[str, Path, bool]]:
    items = [source] if isinstance(source, (str, Path)) else list(source)
    tables: list[tuple[str, Path, bool]] = []
    for item in items:
        path = Path(item)
        if not path.exists():
            raise FileNotFoundError(f"{str(item)!r} does not exist")
        if path.is_dir():
            prefix = f"{path.name}/" if len(items) > 1 else ""
            tables += [(prefix + found.relative_to(path).as_posix(), found, False) for found in find_tables(path)]
        else:
            tables.append((path.name, path, True))
    labels = [label for label, _, _ in tables]
    return [(str(p) if labels.count(label) > 1 else label, p, named) for label, p, named in tables]


def _describe(source: Source) -> str:
    items = [source] if isinstance(source, (str, Path)) else list(source)
    return ", ".join(Path(item).name or str(item) for item in items)


def _text(value: Any) -> str | None:
    """A cell as text to show: strings as they are, anything else (chat messages, lists) as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(_finite(value), ensure_ascii=False, indent=1, default=str)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _steps(value: Any) -> Any:
    """The steps column (JSON text) as a value; text that does not parse is kept as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return {"unparsed": value}
    return value


def _finite(value: Any) -> Any:
    """`value` with NaN and infinities as None: JSON has no spelling for them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
