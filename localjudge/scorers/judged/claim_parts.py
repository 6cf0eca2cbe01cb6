"""A long output's claims, asked part by part: the hallucination and faithfulness scorers'
claims and verdicts for outputs of any length a judge's window holds.

One prompt lists at most `MAX_CLAIMS` claims (the grammar's bound: one per `WORDS_PER_CLAIM`
words), so an output over `PART_WORDS` words is cut into parts of whole sentences, each at most
`PART_WORDS` words (a longer sentence is cut at word boundaries), and the claims step asks each
part in the same judge call; the parts' claims are joined in order. The verdict step asks the
claims in parts of `MAX_CLAIMS`, each against the whole context. An output within `PART_WORDS`
words is one part, asked exactly as before parts existed (the same prompts and hashes). An output
needing over `MAX_CLAIM_PARTS` parts (about 4,000 words) is asked whole, as before parts existed:
the judge's window decides (a local model's cannot hold it: the row is unscored, saying so).
"""

from __future__ import annotations

import functools

from localjudge.scorers.judged.statements import sentences_of
from localjudge.scoring import Results, part_of, spans

WORDS_PER_CLAIM = 4  # the claim cap: one claim per this many words of the output...
MIN_CLAIMS, MAX_CLAIMS = 2, 16  # ...within these bounds, per prompt
PART_WORDS = MAX_CLAIMS * WORDS_PER_CLAIM  # an output part's words: one prompt's claims
MAX_CLAIM_PARTS = 64  # parts one step may ask: 64 x 64 words, 64 x 16 verdicts


def claim_cap(output: str) -> int:
    """How many claims a text (an output, or a part of one) may yield: one per
    `WORDS_PER_CLAIM` words, within [`MIN_CLAIMS`, `MAX_CLAIMS`], so a short answer cannot grow
    claims it does not make."""
    return max(MIN_CLAIMS, min(MAX_CLAIMS, -(-len(output.split()) // WORDS_PER_CLAIM)))


@functools.lru_cache(maxsize=256)
def output_parts(output: str) -> tuple[str, ...]:
    """The output as the claims step asks it: whole, within `PART_WORDS` words; else runs of
    neighbouring sentences of at most `PART_WORDS` words each (a longer sentence cut into runs
    of words), every word in exactly one part, in order; whole again past `MAX_CLAIM_PARTS`."""
    if len(output.split()) <= PART_WORDS:
        return (output,)
    parts: list[str] = []
    run: list[str] = []  # the words of the part being filled
    for sentence in sentences_of(output):
        words = sentence.split()
        if run and len(run) + len(words) > PART_WORDS:
            parts.append(" ".join(run))
            run = []
        while len(words) > PART_WORDS:  # a sentence longer than a part: cut at word boundaries
            parts.append(" ".join(words[:PART_WORDS]))
            words = words[PART_WORDS:]
        run += words
    if run:
        parts.append(" ".join(run))
    return tuple(parts) if len(parts) <= MAX_CLAIM_PARTS else (output,)


def split_output(output: str) -> list[tuple[int, int]]:
    """The claims step's split: one part per output part."""
    return spans(len(output_parts(output)), 1)


def part_text(output: str, results: Results) -> str:
    """The output part the claims step's prompt (or schema) is asked for: the whole output
    when it is one part."""
    parts = output_parts(output)
    start, _ = part_of(results, len(parts))
    return parts[start]


def total_cap(output: str) -> int:
    """The most claims the output's parts may yield together."""
    return sum(claim_cap(part) for part in output_parts(output))


def split_claims(claims: list[str]) -> list[tuple[int, int]]:
    """The verdict step's split: the claims in parts of at most `MAX_CLAIMS`."""
    return spans(len(claims), MAX_CLAIMS)


__all__ = ["MAX_CLAIMS", "MAX_CLAIM_PARTS", "MIN_CLAIMS", "PART_WORDS", "WORDS_PER_CLAIM", "claim_cap",
           "output_parts", "part_text", "split_claims", "split_output", "total_cap"]
