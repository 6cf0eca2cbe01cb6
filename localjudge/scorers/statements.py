"""Statements by rule, for scorers that give one verdict per statement of the output
(toxicity, bias, answer relevancy): the output split into its sentences (`statements_of`) and
shown numbered (`numbered_prompt`), so the judge cannot skip, invent, repeat or replay one, and
the grammar fixes the verdict count."""

from __future__ import annotations

import re

from localjudge.prompting import block
from localjudge.schemas import MAX_ITEMS

_SENTENCE_END = re.compile(  # after . ! ? (and a closing quote), not before a lowercase word: "e.g. this"
    r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)]))\s+(?=[^\sa-z])|\s*\n\s*")  # not before a lowercase word: "e.g. this"


def statements_of(output: str, limit: int = MAX_ITEMS) -> list[str]:
    """The output's statements, by rule: its sentences (split after ``.``, ``!`` or ``?``
    followed by a space and a word that is not lowercase, and at line breaks), or, when there
    are more than `limit`, `limit` runs of neighbouring sentences (the first runs one longer where they do not divide
    evenly), so every word is judged and the verdict list stays bounded."""
    sentences = [part.strip() for part in _SENTENCE_END.split(output) if part.strip()]
    if len(sentences) <= limit:
        return sentences
    size, extra = divmod(len(sentences), limit)
    runs, start = [], 0
    for k in range(limit):
        end = start + size + (k < extra)
        runs.append(" ".join(sentences[start:end]))
        start = end
    return runs


def numbered_prompt(prompt: str, statements: list[str]) -> str:
    """User message: the prompt (for context, if any), then the response, one numbered statement
    a line, inside its block."""
    shown = block("PROMPT", prompt) + "\n" if prompt.strip() else ""
    lines = "\n".join(f"{i}. {s}" for i, s in enumerate(statements, 1))
    return (f"{shown}The response, one numbered statement a line:\n{block('RESPONSE', lines)}\n"
            f"Give exactly {len(statements)} verdicts, one per statement, in order.")
