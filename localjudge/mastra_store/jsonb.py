"""SQLite's JSONB, decoded: how LibSQL stores Mastra's JSON columns.

`@mastra/libsql` writes every JSON column through SQLite's ``jsonb(?)``: a binary encoding
(https://sqlite.org/jsonb.html), not JSON text. Python's own sqlite3 may be older than SQLite 3.45,
where ``json()`` learnt to read it, so localjudge decodes it itself. A column written as JSON text
(an older Mastra, or localjudge's own score rows) is read as text.

Each element is a header then a payload. The header's low four bits are the type; its high four
bits are the payload size (0-11), or say that the size follows in 1, 2, 4 or 8 big-endian bytes
(12-15). Containers hold their elements one after another (an object: key, value, key, value).
"""

from __future__ import annotations

import json
from typing import Any

NULL, TRUE, FALSE, INT, INT5, FLOAT, FLOAT5, TEXT, TEXTJ, TEXT5, TEXTRAW, ARRAY, OBJECT = range(13)
_SIZE_BYTES = {12: 1, 13: 2, 14: 4, 15: 8}
_JSON5_ESCAPES = {"\\'": "'", "\\v": "\\u000b", "\\0": "\\u0000"}
MAX_DEPTH = 200  # containers nested deeper are refused: beyond any message, well inside the recursion limit


class JsonbError(ValueError):
    """The bytes are not SQLite JSONB."""


def decode_jsonb(data: bytes) -> Any:
    """The JSON value SQLite JSONB bytes hold.

    Raises:
        JsonbError: for bytes that are not one well-formed JSONB element.
    """
    try:
        value, end = _element(data, 0)
    except JsonbError:
        raise
    except (UnicodeDecodeError, ValueError) as error:  # text that is not UTF-8, a number that is not one
        raise JsonbError(f"not SQLite JSONB: {error}") from None
    if end != len(data):
        raise JsonbError(f"{len(data) - end} bytes after the JSONB value")
    return value


def _element(data: bytes, at: int, depth: int = 1) -> tuple[Any, int]:
    if at >= len(data):
        raise JsonbError("JSONB cut off")
    kind, size_code = data[at] & 0x0F, data[at] >> 4
    at += 1
    if size_code in _SIZE_BYTES:
        width = _SIZE_BYTES[size_code]
        size, at = int.from_bytes(data[at:at + width], "big"), at + width
    else:
        size = size_code
    end = at + size
    if end > len(data):
        raise JsonbError("JSONB element runs past the end")
    payload = data[at:end]
    if kind == NULL:
        return None, end
    if kind in (TRUE, FALSE):
        return kind == TRUE, end
    if kind in (INT, INT5):
        text = payload.decode("ascii")
        return (int(text, 0) if kind == INT5 and "x" in text.lower() else int(text)), end
    if kind in (FLOAT, FLOAT5):
        return float(payload.decode("ascii")), end
    if kind in (TEXT, TEXTRAW):
        return payload.decode("utf-8"), end
    if kind in (TEXTJ, TEXT5):
        text = payload.decode("utf-8")
        if kind == TEXT5:
            for escape, plain in _JSON5_ESCAPES.items():
                text = text.replace(escape, plain)
        return json.loads(f'"{text}"'), end
    if kind in (ARRAY, OBJECT):
        if depth > MAX_DEPTH:
            raise JsonbError(f"JSONB nested deeper than {MAX_DEPTH} levels")
        items = []
        while at < end:
            item, at = _element(data, at, depth + 1)
            items.append(item)
        if at != end:
            raise JsonbError("JSONB container overruns its size")
        if kind == ARRAY:
            return items, end
        if len(items) % 2:
            raise JsonbError("JSONB object with a key but no value")
        return {str(items[i]): items[i + 1] for i in range(0, len(items), 2)}, end
    raise JsonbError(f"unknown JSONB element type {kind}")
