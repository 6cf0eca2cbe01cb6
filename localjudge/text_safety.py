"""The one rule for untrusted text that localjudge stores or sends: valid UTF-8, no NUL.

A data row, a live run or a judge's answer can hold text that no UTF-8 encoder accepts (a lone
surrogate: any JSON client can send ``"\\ud83d"``) or that a store refuses (PostgreSQL rejects
NUL). Every place such text is kept applies `safe_text` (a string) or `safe_value` (anything
JSON-like): data rows as they are read, sample run ids, results (`ScoreResult` cleans itself),
the live store's records. A surrogate pair becomes its character, a lone surrogate one U+FFFD, a
NUL is dropped (as `clean_text` drops it from judged text); nothing else changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_UNSAFE = re.compile("[\x00\ud800-\udfff]")


def safe_text(text: str) -> str:
    """`text` with surrogates mended (a pair joined, a lone one U+FFFD) and NULs dropped; the same
    string, untouched, when it holds neither (the common case costs one regex scan)."""
    if _UNSAFE.search(text) is None:
        return text
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.replace("\x00", "")


def safe_value(value: Any) -> Any:
    """`safe_text` applied to every string in `value`: dict keys and values, list and tuple items
    (a tuple stays a tuple); other values are returned as they are."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, Mapping):
        return {safe_value(k): safe_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(safe_value(v) for v in value)
    return value
