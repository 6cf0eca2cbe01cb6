"""Loops in free text: finding them (`repeats`), following the string being written
(`StringTracker`, for the backend's repetition guard) and dropping the repeat the guard leaves
(`drop_repeats`, for the engine).

A small model's reason often turns into "The score is 1. The score is 1. ..." until the token
budget runs out. The guard closes the string as soon as a run of words has come twice; the
engine then drops that second copy, so what remains was said once.
"""

from __future__ import annotations

from typing import Any

MIN_REPEAT_WORDS = 3  # a run of at least this many words, said twice in a row, is a loop...
MAX_REPEAT_WORDS = 40  # ...up to this many (a whole repeated sentence; a reason is at most ~40 words)
SHORT_REPEATS = 4  # a run of one or two words must come this many times in a row


def repeats(text: str) -> bool:
    """Whether `text` ends with a loop: the same run of 3-40 words twice in a row, or of one or
    two words four times ("very very very very")."""
    return _repeat_length(text.split()) > 0


class StringTracker:
    """The JSON string being written, if any, fed the generated text piece by piece."""

    def __init__(self) -> None:
        self.inside = False
        self.escaped = False
        self.text = ""

    def feed(self, piece: str) -> None:
        for char in piece:
            if not self.inside:
                if char == '"':
                    self.inside, self.text = True, ""
            elif self.escaped:
                self.escaped = False
                self.text += char
            elif char == "\\":
                self.escaped = True
            elif char == '"':
                self.inside = False
            else:
                self.text += char

    @property
    def looping(self) -> bool:
        return self.inside and not self.escaped and repeats(self.text)


def _repeat_length(words: list[str]) -> int:
    """How many words at the end of `words` repeat the run just before them (0: none)."""
    for n in range(MIN_REPEAT_WORDS, MAX_REPEAT_WORDS + 1):
        if len(words) >= 2 * n and words[-n:] == words[-2 * n:-n]:
            return n
    for n in (1, 2):
        if len(words) >= SHORT_REPEATS * n and all(
                words[-n:] == words[-(k + 1) * n:-k * n or None] for k in range(1, SHORT_REPEATS)):
            return (SHORT_REPEATS - 1) * n
    return 0


def drop_repeats(value: Any) -> Any:
    """`value` (parsed JSON) with every string's trailing repeated runs removed, until none is
    left: "The score is 1. The score is 1." -> "The score is 1."."""
    if isinstance(value, dict):
        return {k: drop_repeats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [drop_repeats(v) for v in value]
    if not isinstance(value, str):
        return value
    words = value.split()
    cut = 0
    while (n := _repeat_length(words)):
        words, cut = words[:-n], cut + n
    if not cut:
        return value
    kept = len(value.split()) - cut  # keep the original spacing of what stays
    end = 0
    for _ in range(kept):
        while value[end].isspace():
            end += 1
        while end < len(value) and not value[end].isspace():
            end += 1
    return value[:end]
