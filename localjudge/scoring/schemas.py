"""Bounded output schemas and the token budget they imply.

Every string and list a judge writes is bounded, every model forbids extra keys, and verdicts
are Literals: a constrained generation of at most `token_budget(schema)` tokens then always
closes its JSON. The reason schema is shared by every scorer.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

REASON_CHARS = 160  # a verdict's reason
STATEMENT_CHARS = 200  # a claim or statement
MAX_ITEMS = 10  # claims per output, verdicts per item


def text(max_chars: int) -> Any:
    """A non-empty string of at most `max_chars` characters, for a schema field (``reason:
    text(160)``). Type checkers cannot read a call as a type: for them, write the `Annotated`
    form, as `ReasonText` and `StatementText` below do."""
    return Annotated[str, Field(min_length=1, max_length=max_chars)]


ReasonText = Annotated[str, Field(min_length=1, max_length=REASON_CHARS)]  # a verdict's reason
StatementText = Annotated[str, Field(min_length=1, max_length=STATEMENT_CHARS)]  # a claim or statement


class Strict(BaseModel):
    """Base for judge schemas: no extra keys (so no grammar lets the model invent any)."""

    model_config = ConfigDict(extra="forbid")


class Reason(Strict):
    """The reason step's answer."""

    reason: Annotated[str, Field(min_length=1, max_length=240)]


class ScoreAnswer(Strict):
    """A prompt-object `generate_score`'s answer (Mastra's ``{score: number}``), bounded: a number
    of at most two decimals in [0, 1] (`score_answer` bounds it by a scale instead), so the
    grammar always closes it within the token budget."""

    score: Annotated[float, Field(ge=0, le=1, multiple_of=0.01)]


def score_answer(upper: float) -> type[BaseModel]:
    """`ScoreAnswer` for scores in [0, upper] (named ``ScoreAnswer_<upper>``; the fake judge
    scripts it under ``ScoreAnswer``). Cached."""
    return _score_answer(float(upper))


@functools.cache
def _score_answer(upper: float) -> type[BaseModel]:
    field: Any = Annotated[float, Field(ge=0, le=upper, multiple_of=0.01)]
    return create_model(f"ScoreAnswer_{upper:g}", __base__=ScoreAnswer, score=(field, ...))


def exactly(item: type[BaseModel], n: int, base: type[BaseModel]) -> type[BaseModel]:
    """A variant of `base` whose single list field holds exactly `n` items of `item`.

    Used for verdict lists: one verdict per claim asked about, enforced by the grammar. The
    variant is named `<Base>_<n>` (the fake judge scripts it under the base name) and cached.
    """
    return _exactly(item, n, base)


@functools.cache
def _exactly(item: type[BaseModel], n: int, base: type[BaseModel]) -> type[BaseModel]:
    (name,) = base.model_fields
    field: Any = Annotated[list[item], Field(min_length=n, max_length=n)]  # type: ignore[valid-type]
    fields: dict[str, Any] = {name: (field, ...)}
    return create_model(f"{base.__name__}_{n}", __base__=base, **fields)


def max_json_chars(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> int:
    """Upper bound on the length of compact JSON valid under a bounded JSON schema."""
    defs = schema.get("$defs", {}) if defs is None else defs
    if "$ref" in schema:
        return max_json_chars(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for union in ("oneOf", "anyOf"):
        if union in schema:
            return max(max_json_chars(option, defs) for option in schema[union])
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        return max(len(repr(v)) for v in values)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        inner = sum(len(k) + 3 + max_json_chars(v, defs) for k, v in props.items())
        return 2 + inner + max(len(props) - 1, 0)
    if kind == "array":
        if "maxItems" not in schema:
            raise ValueError("unbounded array in a judge schema")
        n = schema["maxItems"]
        return 2 + n * max_json_chars(schema["items"], defs) + max(n - 1, 0)
    if kind == "string":
        if "maxLength" not in schema:
            raise ValueError("unbounded string in a judge schema")
        return 2 + 2 * schema["maxLength"]  # an escaped character takes two
    if kind in ("integer", "number"):
        return 24
    if kind == "boolean":
        return 5
    raise ValueError(f"unsupported schema node: {schema}")


@functools.cache
def token_budget(schema: type[BaseModel]) -> int:
    """Tokens enough for the longest answer the schema allows, in practice.

    `max_json_chars` counts every string character twice (for escapes), so a quarter of it
    allows two characters a token of plain text; JSON tokenizes at 3-4. A generation that is
    still cut off is retried once with twice this budget (`scoring.asking`, the step runner).
    """
    return max_json_chars(schema.model_json_schema()) // 4 + 16
