"""JavaScript's string rules, where Mastra's code scorers' numbers depend on them.

Mastra's code scorers run on JavaScript strings: `length`, `substring` and indexing count UTF-16
code units (an emoji is 2), `\\s` and `trim()` know more whitespace than Python's `str.split()`
(and less: not the separators U+001C-U+001F), and `Math.round` rounds halves up. The ports
here use these helpers so their scores are Mastra's to the bit, not nearly.
"""

from __future__ import annotations

import re
from collections import Counter

# ECMAScript's WhiteSpace and LineTerminator: what `\s` matches and `trim()` removes.
JS_SPACE_CHARS = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
JS_SPACE = f"[{JS_SPACE_CHARS}]"
JS_SPACES = re.compile(f"{JS_SPACE}+")
# the same set written out, for `str.strip` (a regex `\s+$` is quadratic on a long inner run of spaces)
_SPACE_SET = ("\t\n\x0b\x0c\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
              + "\u2028\u2029\u202f\u205f\u3000\ufeff")

Units = str | list[int]  # a text as UTF-16 code units: itself when every character is in the BMP


def js_trim(text: str) -> str:
    """`String.prototype.trim`."""
    return text.strip(_SPACE_SET)


def js_split_spaces(text: str) -> list[str]:
    """`text.split(/\\s+/)`: empty pieces at the ends kept, as JavaScript does."""
    return JS_SPACES.split(text)


def squash_spaces(text: str) -> str:
    """`text.replace(/\\s+/g, ' ').trim()`."""
    return js_trim(JS_SPACES.sub(" ", text))


def utf16(text: str) -> Units:
    """`text` as JavaScript sees it: a list of UTF-16 code units when it holds a character
    outside the BMP (an emoji), else the string itself (the same units, and faster)."""
    if all(ord(c) < 0x10000 for c in text):
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]


def js_length(text: str) -> int:
    """`text.length`: UTF-16 code units."""
    return len(utf16(text))


def dice_bigrams(first: str, second: str) -> float:
    """npm `string-similarity`'s `compareTwoStrings` (4.0.4): the Dice coefficient of the two
    texts' character bigrams (counted with repeats), whitespace removed, on UTF-16 units."""
    a, b = utf16(JS_SPACES.sub("", first)), utf16(JS_SPACES.sub("", second))
    if a == b:
        return 1.0  # identical or both empty
    if len(a) < 2 or len(b) < 2:
        return 0.0
    counts = Counter(_pair(a, i) for i in range(len(a) - 1))
    shared = 0
    for i in range(len(b) - 1):
        pair = _pair(b, i)
        if counts[pair] > 0:
            counts[pair] -= 1
            shared += 1
    return (2.0 * shared) / (len(a) + len(b) - 2)


def _pair(units: Units, i: int) -> object:
    return units[i:i + 2] if isinstance(units, str) else (units[i], units[i + 1])


def add_up(values: list[float]) -> float:
    """`values.reduce((a, b) => a + b, 0)`: left to right in plain floating point (Python 3.12's
    `sum` compensates, which changes the last bit)."""
    total = 0.0
    for value in values:
        total += value
    return total


__all__ = ["JS_SPACE", "JS_SPACES", "JS_SPACE_CHARS", "add_up", "dice_bigrams", "js_length", "js_split_spaces",
           "js_trim", "squash_spaces", "utf16"]
