"""What both engines share about an answer's grammar, so they constrain and read it alike.

- `grammar_spec`: the JSON schema handed to llguidance (compact JSON, no free whitespace),
  by `TransformersJudge` compiled in-process and by `VLLMJudge` sent to vLLM's "guidance"
  structured-output backend: the same grammar either way.
- `literal_fields`: the keys whose values are Literal labels (a verdict).
- `piece_after`: the text one token adds after the ones before it.
- `LabelReader` (and `read_labels`, for a finished answer): the one reader of label
  probabilities, for every engine. At each point where the grammar lets the judge choose a
  label (`label_quote`), the probability of each label from the probabilities of the allowed
  tokens there (`label_mass`); a reading whose label is only chosen at the next position (the
  quote came alone: `label_deferred`) is dropped for the one read there.

No heavy imports: the reader takes (token text, probability) pairs from any engine: the
transformers engine's masked softmax as it decodes, vLLM's and a server's top logprobs after.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

# No whitespace between JSON tokens: the judge spends no tokens (and cannot loop) on it.
GUIDANCE_OPTIONS = {"whitespace_flexible": False, "coerce_one_of": True}
CONTEXT_TOKENS = 4  # tokens decoded before a new one to read its text (see `piece_after`)
TAIL_CHARS = 40  # the text kept before a position to find a label choice there (`label_quote`)


def grammar_spec(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema's JSON schema with llguidance's options, as both engines compile it."""
    return {**schema.model_json_schema(), "x-guidance": GUIDANCE_OPTIONS}


def literal_fields(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> dict[str, tuple[str, ...]]:
    """Every property of a JSON schema whose values are an enum of strings: name -> labels."""
    defs = schema.get("$defs", {}) if defs is None else defs
    found: dict[str, tuple[str, ...]] = {}
    for name, prop in schema.get("properties", {}).items():
        labels = prop.get("enum", [prop["const"]] if "const" in prop else [])
        if labels:
            found[name] = tuple(sorted(set(found.get(name, ())) | set(labels)))
        items = prop.get("items", {})
        for node in [prop, items, *items.get("oneOf", []), *items.get("anyOf", [])]:
            if "$ref" in node:
                for key, more in literal_fields(defs[node["$ref"].rsplit("/", 1)[-1]], defs).items():
                    found[key] = tuple(sorted(set(found.get(key, ())) | set(more)))
    return found


def triggers(fields: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """The text that precedes a label choice in compact JSON (``"verdict":``) -> its labels."""
    return {f'"{key}":': labels for key, labels in fields.items()}


def piece_after(tokenizer: Any, before: Sequence[int], token: int) -> str:
    """The text `token` adds after `before` (the last few tokens). Decoding it alone loses what
    depends on its neighbours: a SentencePiece tokenizer (Mistral, Gemma, Llama 2) drops the
    word-leading space of a lone token, so "toy toy toy" would read "toytoytoy"."""
    if not before:
        return str(tokenizer.decode([token]))
    head = tokenizer.decode(list(before))
    return str(tokenizer.decode([*before, token]))[len(head):]


def closer_ids(tokenizer: Any) -> list[int]:
    """The tokens whose text starts with a quote: those that can end a JSON string (the
    repetition guard allows only these once a string loops)."""
    return [t for t in range(len(tokenizer)) if str(tokenizer.decode([t])).startswith('"')]


def label_quote(tail: str, trigger: str) -> str | None:
    """At a label choice after `trigger`, whether the label's first token must carry the
    opening quote (``'"'``) or the quote is already written (``""``); None: not at a choice."""
    if tail.endswith(trigger + '"'):
        return ""
    if tail.endswith(trigger):
        return '"'
    return None


def label_deferred(quote: str, chosen: str) -> bool:
    """Whether the token chosen at a label choice (`label_quote` gave `quote`) only wrote the
    opening quote: the label is chosen at the next position, whose reading replaces this one
    (else one verdict would be read twice, the first time from the few tokens that carry the
    quote and a label's start, like Qwen's `"s`)."""
    return quote == '"' and chosen == '"'


DISTRIBUTION_SLACK = 1e-3  # 20 logprobs rounded by a server may total a little over 1


def not_a_distribution(candidates: Sequence[tuple[str, float]]) -> bool:
    """Whether a position's candidates (text, probability) are no share of one distribution: a
    probability outside [0, 1] (NaN, infinite, a server's logprob of +5 read as 148), or
    probabilities totalling more than 1 (beyond `DISTRIBUTION_SLACK`, a float's rounding)."""
    return any(not 0.0 <= p <= 1.0 for _, p in candidates) or \
        math.fsum(p for _, p in candidates) > 1.0 + DISTRIBUTION_SLACK


def label_mass(candidates: Iterable[tuple[str, float]], labels: tuple[str, ...], quote: str) -> dict[str, float] | None:
    """Probability of each label: the probability of the allowed tokens (text, probability)
    that begin it, renormalised over the labels. None when no candidate starts a label, or when
    the candidates are no share of one distribution (`not_a_distribution`: a number outside [0, 1],
    or candidates totalling 3): a broken number is never renormalised into a reading."""
    candidates = list(candidates)
    if not_a_distribution(candidates):
        return None
    mass = dict.fromkeys(labels, 0.0)
    for piece, p in candidates:
        if not piece.startswith(quote) or not (piece := piece[len(quote):]):
            continue
        for label in labels:
            if label.startswith(piece) or piece.startswith(label):
                mass[label] += p
    total = sum(mass.values())
    return {label: round(m / total, 6) for label, m in mass.items()} if total > 0 else None


Candidates = Iterable[tuple[str, float]]  # the allowed tokens at a position: (text, probability)


class LabelReader:
    """The label probabilities of one answer, read position by position as it is written.

    At each position, before its token is chosen: `read` its candidates (used at a label choice
    only); then `feed` the text the chosen token adds. `readings` holds one reading per
    label choice, in order; `broken` says whether a candidate at a choice held a probability
    that is none (outside [0, 1], NaN) or candidates that total more than 1: such a choice gives no
    reading, see `label_mass`.

    Args:
        fields: The answer's label fields (`literal_fields`): JSON key -> its labels.
    """

    def __init__(self, fields: Mapping[str, tuple[str, ...]]) -> None:
        self.choices = triggers(dict(fields))
        self.tail = ""  # the answer's last characters (`TAIL_CHARS`)
        self.readings: list[dict[str, float]] = []
        self.broken = False
        self._read_at: str | None = None  # the quote of the label read at this position

    def open(self) -> list[tuple[tuple[str, ...], str]]:
        """The label choices open at this position: (labels, quote) for each trigger at which a
        label is chosen now (`label_quote`)."""
        found = ((labels, label_quote(self.tail, trigger)) for trigger, labels in self.choices.items())
        return [(labels, quote) for labels, quote in found if quote is not None]

    def read(self, candidates: Candidates) -> None:
        """At this position, each open choice's label probabilities from `candidates` (consumed
        only at a choice: a generator costs nothing elsewhere)."""
        choices = self.open()
        if not choices:
            return
        candidates = list(candidates)
        if not_a_distribution(candidates):
            self.broken = True
        for labels, quote in choices:
            probs = label_mass(candidates, labels, quote)
            if probs:
                self.readings.append(probs)
                self._read_at = quote

    def feed(self, piece: str) -> None:
        """The text the chosen token adds: a reading here whose label is chosen at the next
        position (the token wrote the opening quote alone) is dropped for the one read there."""
        if self._read_at is not None and label_deferred(self._read_at, piece):
            self.readings.pop()
        self._read_at = None
        self.tail = (self.tail + piece)[-TAIL_CHARS:]


def read_labels(positions: Iterable[tuple[str, Candidates]], fields: Mapping[str, tuple[str, ...]]) -> LabelReader:
    """A finished answer's label readings: `positions` are (the text its token added, the
    candidates there) in order, as vLLM's and a server's logprobs give them."""
    reader = LabelReader(fields)
    for piece, candidates in positions:
        reader.read(candidates)
        reader.feed(piece)
    return reader
