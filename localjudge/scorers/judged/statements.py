"""Statements by rule, for scorers that give one verdict per statement of the output
(toxicity, bias, answer relevancy; answer similarity and summarization split theirs the same
way): the output split into its sentences (`sentences_of`) and
shown numbered (`numbered_prompt`), so the judge cannot skip, invent, repeat or replay one, and
the grammar fixes the verdict count. More than `MAX_ITEMS` sentences are asked in parts of at
most `MAX_ITEMS` in the same judge call (`split_statements`), every sentence its own verdict."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from localjudge.samples import Sample
from localjudge.scoring import MAX_ITEMS, Results, block, part_of, spans

_SENTENCE_END = re.compile(  # after . ! ? (and a closing quote), not before a lowercase word: "e.g. this"
    r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)]))\s+(?=[^\sa-z])|\s*\n\s*")  # not before a lowercase word: "e.g. this"


def sentences_of(output: str) -> list[str]:
    """The output's sentences, every one (split as `statements_of` splits), never merged."""
    return [part.strip() for part in _SENTENCE_END.split(output) if part.strip()]


def statements_of(output: str, limit: int = MAX_ITEMS) -> list[str]:
    """The output's statements, by rule: its sentences (split after ``.``, ``!`` or ``?``
    followed by a space and a word that is not lowercase, and at line breaks), or, when there
    are more than `limit`, `limit` runs of neighbouring sentences (the first runs one longer where they do not divide
    evenly), so every word is judged and the verdict list stays bounded. No built-in scorer
    merges sentences any more (they ask long outputs in parts); kept for callers that want a
    bounded list."""
    sentences = sentences_of(output)
    if len(sentences) <= limit:
        return sentences
    size, extra = divmod(len(sentences), limit)
    runs, start = [], 0
    for k in range(limit):
        end = start + size + (k < extra)
        runs.append(" ".join(sentences[start:end]))
        start = end
    return runs


def numbered_prompt(prompt: str, statements: list[str], first: int = 1) -> str:
    """User message: the prompt (for context, if any), then the response, one numbered statement
    a line (numbered from `first`: a later part of a long response), inside its block."""
    shown = block("PROMPT", prompt) + "\n" if prompt.strip() else ""
    lines = "\n".join(f"{i}. {s}" for i, s in enumerate(statements, first))
    return (f"{shown}The response, one numbered statement a line:\n{block('RESPONSE', lines)}\n"
            f"Give exactly {len(statements)} verdicts, one per statement, in order.")


def split_statements(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """A statement step's split: the output's sentences in parts of at most `MAX_ITEMS`."""
    return spans(len(sentences_of(sample.output)), MAX_ITEMS)


def part_statements(sample: Sample, results: Results) -> tuple[list[str], int]:
    """The sentences this part of a statement step asks about, and the number of its first."""
    sentences = sentences_of(sample.output)
    start, end = part_of(results, len(sentences))
    return sentences[start:end], start + 1


def attach_statements(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    """Each verdict with its statement first (the grammar gave exactly one per statement)."""
    statements = sentences_of(sample.output)
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
