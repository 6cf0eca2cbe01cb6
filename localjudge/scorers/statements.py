"""Statements by rule, for scorers that give one verdict per statement of the output
(toxicity, bias, answer relevancy): the output split into its sentences (`statements_of`) and
shown numbered (`numbered_prompt`), so the judge cannot skip, invent, repeat or replay one, and
the grammar fixes the verdict count."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from localjudge.samples import Sample
from localjudge.scoring import MAX_ITEMS, Results, block

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


def attach_statements(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    """Each verdict with its statement first (the grammar gave exactly one per statement)."""
    statements = statements_of(sample.output)
    return {"verdicts": [{"statement": s, **v} for s, v in zip(statements, parsed["verdicts"], strict=True)]}


def explained_example(statements: list[str], answer: str, score: Callable[[Sample, Results], float], scale: float,
                      reason: str, prompt: str = "") -> tuple[Sample, Results, str]:
    """The reason step's worked example: the analyze example's statements and verdicts (its
    JSON `answer`), scored for `scale`, explained by `reason`."""
    verdicts = [{"statement": s, **v} for s, v in zip(statements, json.loads(answer)["verdicts"], strict=True)]
    run = Sample("example", prompt, " ".join(statements))
    results: Results = {"analyze_step_result": {"verdicts": verdicts}}
    results["score"] = round(score(run, results) * scale, 2)
    return run, results, reason
