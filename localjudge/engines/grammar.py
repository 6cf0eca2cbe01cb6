"""What both engines share about an answer's grammar, so they constrain and read it alike.

- `grammar_spec`: the JSON schema handed to llguidance (compact JSON, no free whitespace),
  by `TransformersJudge` compiled in-process and by `VLLMJudge` sent to vLLM's "guidance"
  structured-output backend: the same grammar either way.
- `literal_fields`: the keys whose values are Literal labels (a verdict).
- `piece_after`: the text one token adds after the ones before it.
- `label_quote` and `label_mass`: at a point where the grammar lets the judge choose a label,
  the probability of each label from the probabilities of the allowed tokens.

No heavy imports: `label_mass` takes (token text, probability) pairs from either engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
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


def label_choices(tail: str, choices: Mapping[str, tuple[str, ...]]) -> Iterator[tuple[tuple[str, ...], str]]:
    """The label choices open after `tail` (the answer's last characters): (labels, quote) for
    each trigger of `choices` (`triggers`) at which a label is chosen now (see `label_quote`)."""
    for trigger, labels in choices.items():
        quote = label_quote(tail, trigger)
        if quote is not None:
            yield labels, quote


def label_deferred(quote: str, chosen: str) -> bool:
    """Whether the token chosen at a label choice (`label_quote` gave `quote`) only wrote the
    opening quote: the label is chosen at the next position, whose reading replaces this one
    (else one verdict would be read twice, the first time from the few tokens that carry the
    quote and a label's start, like Qwen's `"s`)."""
    return quote == '"' and chosen == '"'


def label_mass(candidates: Iterable[tuple[str, float]], labels: tuple[str, ...], quote: str) -> dict[str, float] | None:
    """Probability of each label: the probability of the allowed tokens (text, probability)
    that begin it, renormalised over the labels. None when no candidate starts a label, or when
    a candidate's probability is not a number in [0, 1] (NaN, infinite, a server's logprob of
    +5 read as 148): a broken number is never renormalised into a reading."""
    mass = dict.fromkeys(labels, 0.0)
    for piece, p in candidates:
        if not 0.0 <= p <= 1.0:
            return None
        if not piece.startswith(quote) or not (piece := piece[len(quote):]):
            continue
        for label in labels:
            if label.startswith(piece) or piece.startswith(label):
                mass[label] += p
    total = sum(mass.values())
    return {label: round(m / total, 6) for label, m in mass.items()} if total > 0 else None
