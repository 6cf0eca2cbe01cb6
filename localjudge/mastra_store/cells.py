"""One rule for reading a stored cell: every cell localjudge reads from Mastra's tables goes
through `read_row`, which decodes it or says, in one line naming the table, row and column, why
it cannot.

A cell that cannot be read costs its run, never the store: the row comes back with that cell
None and the reason under `BAD_CELL`, and the reader records the run unreadable (`invalid_run`
when scored). What counts as unreadable:

- JSON that is not JSONB nor JSON text (bad JSONB bytes, a number that is not one), or nested
  deeper than `MAX_DEPTH` (a 5,000-deep or ``[`` x 200,000 value would otherwise end in a
  RecursionError wherever it is next walked);
- text that is not UTF-8 (SQLite keeps what it was given; `text_factory` hands it here as
  `NotUtf8` instead of failing the whole query).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from localjudge.mastra_store.jsonb import MAX_DEPTH, JsonbError, decode_jsonb

BAD_CELL = "localjudge:bad_cell"  # the key a row's reason is kept under (never one of Mastra's columns)
KEY_COLUMNS = ("traceId", "spanId", "id")  # what names a row, where the table has them


@dataclass(frozen=True)
class NotUtf8:
    """A TEXT cell whose bytes are not UTF-8 (SQLite's `text_factory` returns this instead of failing)."""

    raw: bytes

    def __str__(self) -> str:
        return f"<not UTF-8 text: {self.raw[:24]!r}>"


@dataclass(frozen=True)
class JsonText:
    """A PostgreSQL json/jsonb cell as the server sent it: decoded here, under this module's rule,
    not inside psycopg's fetch (where a RecursionError would fail the whole query)."""

    text: str


def sqlite_text(data: bytes) -> str | NotUtf8:
    """SQLite's `text_factory`: UTF-8 text, or `NotUtf8` for bytes that are not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return NotUtf8(bytes(data))


def postgres_json(data: bytes | str) -> JsonText:
    """psycopg's JSON loader: the text kept as `JsonText`, decoded later by `read_row`."""
    return JsonText(data if isinstance(data, str) else bytes(data).decode("utf-8"))


def read_cell(value: Any, *, json_column: bool) -> Any:
    """One cell as Python: a JSON column's JSONB bytes decoded, its JSON text parsed (text that is
    not JSON stays as it is), PostgreSQL's JSON parsed, other values unchanged.

    Raises:
        ValueError: a cell that cannot be read (the message says why, without its location).
    """
    if isinstance(value, NotUtf8):
        try:
            value.raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"not UTF-8 text (byte 0x{value.raw[error.start]:02x} at offset {error.start})") from None
    try:
        if isinstance(value, JsonText):
            return _bounded(json.loads(value.text))
        if json_column and isinstance(value, (bytes, bytearray, memoryview)):
            return decode_jsonb(bytes(value))
        if json_column and isinstance(value, str):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                return value  # a JSON column holding plain text: kept as text
            return _bounded(parsed)
    except JsonbError as error:
        raise ValueError(str(error)) from None
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    return value


def read_row(table: str, row: Mapping[str, Any], json_columns: frozenset[str]) -> dict[str, Any]:
    """A fetched row with every cell read by `read_cell`. A cell that cannot be read is None in
    the result, and `BAD_CELL` holds ``TABLE row (KEYS), column NAME: why`` (the first such cell)."""
    found: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name, value in row.items():
        try:
            found[name] = read_cell(value, json_column=name in json_columns or isinstance(value, JsonText))
        except ValueError as error:
            found[name] = None
            problems[name] = str(error)
    if problems:
        name, why = next(iter(problems.items()))
        found[BAD_CELL] = f"{row_label(table, found, unreadable=problems)}, column {name}: {why}"
    return found


def row_label(table: str, row: Mapping[str, Any], *, unreadable: Collection[str] = ()) -> str:
    """``TABLE row (traceId 't', spanId 's')``: the row named by the key columns it has (a NULL or
    unreadable key shown as such)."""
    keys = ", ".join(f"{k} unreadable" if k in unreadable else f"{k} NULL" if row[k] is None else f"{k} {row[k]!r}"
                     for k in KEY_COLUMNS if k in row)
    return f"{table} row ({keys})" if keys else f"{table} row"


def _bounded(value: Any) -> Any:
    """`value` when it is nested at most `MAX_DEPTH` deep (walked without recursion)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise RecursionError
        if isinstance(item, dict):
            todo.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, depth + 1) for v in item)
    return value

