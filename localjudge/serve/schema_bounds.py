"""A client's JSON schema made into a bounded grammar schema, as localjudge bounds its own steps.

`bound` walks the schema a client sent (in `response_format`, a tool's parameters or its prompt)
and returns a self-contained copy that a constrained decode always closes:

- every `$ref` inlined (`$defs`, `definitions`); a cycle is refused (a recursive schema has no
  longest answer);
- every string gets a `maxLength` and every array a `maxItems`: the schema's own where it has
  them (at most `Caps.hard_string` / `Caps.hard_items`), else the documented defaults;
- an object forbids keys it does not name (a small model invents keys and loops on them), unless
  the schema gives `additionalProperties` a schema of its own: then keys are short words
  (`KEY_PATTERN`) and at most `Caps.items` of them;
- a keyword the grammar cannot enforce is refused (`SchemaError` names it), never dropped.

`longest` is the longest compact JSON the bounded schema allows, in characters (an escaped
character counted twice, a key as long as `KEY_PATTERN` allows): a budget of that many tokens
always closes it, since every token writes at least one character. `fit` shrinks the caps of a
bounded schema until `longest` fits a token budget — the second try of an answer that was cut off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localjudge.scoring import MAX_ITEMS, STATEMENT_CHARS

# Keywords read, kept as given (after the walk checks them) or only annotating.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$id", "$comment",
                         "deprecated", "readOnly", "writeOnly", "strict", "nullable", "$anchor"})
CHECKED = frozenset({"type", "properties", "required", "additionalProperties", "items", "prefixItems",
                     "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions",
                     "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
                     "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "pattern", "format",
                     "patternProperties", "minProperties", "maxProperties"})
TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
KEY_CHARS = 48
KEY_PATTERN = rf"^[A-Za-z0-9_ .-]{{1,{KEY_CHARS}}}$"  # a key of a free-form object (a map)
MAX_NODES = 2000  # schema nodes after `$ref`s are inlined
MAX_DEPTH = 16  # nesting of objects and arrays
NUMBER_CHARS = 24  # the longest number written (as `scoring.schemas.max_json_chars` counts)


class SchemaError(ValueError):
    """A schema the grammar cannot bound or enforce: `keyword` names what, at `path`."""

    def __init__(self, keyword: str, path: str, why: str) -> None:
        self.keyword, self.path = keyword, path
        super().__init__(f"{keyword} at {path or '/'}: {why}")


@dataclass(frozen=True)
class Caps:
    """The bounds a schema gets where it has none (`string`, `items`) and the most it may ask
    for (`hard_string`, `hard_items`). The defaults are localjudge's own steps' bounds: a claim or
    statement of at most 200 characters, at most 10 claims or verdicts (`scoring.schemas`)."""

    string: int = STATEMENT_CHARS
    items: int = MAX_ITEMS
    hard_string: int = 8000
    hard_items: int = 200


# `json_object` (any JSON object): a bounded, two-level value grammar.
def _json_value(caps: Caps, depth: int) -> dict[str, Any]:
    scalars: list[dict[str, Any]] = [{"type": "string", "maxLength": caps.string}, {"type": "number"},
                                     {"type": "boolean"}, {"type": "null"}]
    if depth == 0:
        return {"anyOf": scalars}
    inner = _json_value(caps, depth - 1)
    return {"anyOf": [*scalars, {"type": "array", "items": inner, "maxItems": caps.items},
                      _map_of(inner, caps)]}


def _map_of(value: dict[str, Any], caps: Caps) -> dict[str, Any]:
    return {"type": "object", "patternProperties": {KEY_PATTERN: value}, "additionalProperties": False,
            "maxProperties": caps.items}


def json_object_schema(caps: Caps = Caps()) -> dict[str, Any]:
    """Any JSON object, bounded: short keys, values nested at most two levels deep."""
    return _map_of(_json_value(caps, 1), caps)


def bound(schema: Any, caps: Caps = Caps()) -> dict[str, Any]:
    """The bounded, self-contained copy of `schema` (see the module's docstring).

    Raises:
        SchemaError: a `$ref` cycle or a dangling one, a keyword the grammar cannot enforce, a
            schema too large or too deep, a value of the wrong kind.
    """
    if not isinstance(schema, dict):
        raise SchemaError("schema", "", "must be a JSON object")
    walk = _Walk(schema, caps)
    return walk.node(schema, "", 0, ())


class _Walk:
    def __init__(self, root: dict[str, Any], caps: Caps) -> None:
        self.defs = {**_dict(root.get("definitions", {}), "definitions"), **_dict(root.get("$defs", {}), "$defs")}
        self.caps = caps
        self.nodes = 0

    def node(self, schema: Any, path: str, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        if schema is True or schema == {}:
            return json_object_schema(self.caps) if depth == 0 else _json_value(self.caps, 1)
        if not isinstance(schema, dict):
            raise SchemaError("schema", path, f"must be a JSON object, got {type(schema).__name__}")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise SchemaError("schema", path, f"more than {MAX_NODES} nodes once its $refs are inlined")
        if depth > MAX_DEPTH:
            raise SchemaError("schema", path, f"nested deeper than {MAX_DEPTH} levels")
        for key in schema:
            if key not in CHECKED and key not in ANNOTATIONS:
                raise SchemaError(key, path, "not a keyword the grammar can enforce")
        if "$ref" in schema:
            return self.ref(schema, path, depth, refs)
        out: dict[str, Any] = {}
        for union in ("anyOf", "oneOf", "allOf"):
            if union in schema:
                options = schema[union]
                if not isinstance(options, list) or not options:
                    raise SchemaError(union, path, "must be a non-empty list of schemas")
                out[union] = [self.node(o, f"{path}/{union}/{i}", depth, refs) for i, o in enumerate(options)]
        for key in ("enum", "const"):
            if key in schema:
                out[key] = schema[key]
        if "enum" in out and (not isinstance(out["enum"], list) or not out["enum"]):
            raise SchemaError("enum", path, "must be a non-empty list")
        kind = schema.get("type")
        if kind is None and "properties" in schema:  # LangChain's format instructions drop the top-level type
            kind = "object"
        if isinstance(kind, list):
            if not kind or any(k not in TYPES for k in kind):
                raise SchemaError("type", path, f"must name JSON types ({', '.join(TYPES)})")
            rest = {k: v for k, v in schema.items() if k != "type"}
            if len(kind) == 1:
                return self.node({**rest, "type": kind[0]}, path, depth, refs)
            return {"anyOf": [self.node({**rest, "type": k}, path, depth, refs) for k in kind]}
        if kind is not None:
            if kind not in TYPES:
                raise SchemaError("type", path, f"{kind!r} is not a JSON type")
            out["type"] = kind
            out.update(self.typed(schema, kind, path, depth, refs))
        elif not out:
            # keywords without a type (`{"maxLength": 3}`) or only annotations: any bounded value
            return _json_value(self.caps, 1)
        return out

    def ref(self, schema: dict[str, Any], path: str, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith(("#/$defs/", "#/definitions/")):
            raise SchemaError("$ref", path, f"only local references (#/$defs/NAME) are followed, got {ref!r}")
        name = ref.rsplit("/", 1)[-1]
        if name in refs:
            raise SchemaError("$ref", path, f"{ref} refers to itself (a recursive schema has no bounded answer)")
        if name not in self.defs:
            raise SchemaError("$ref", path, f"{ref} is not defined")
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
        target = self.node(self.defs[name], f"{path}/{ref[2:]}", depth, (*refs, name))
        return {**target, **self.node(siblings, path, depth, refs)} if siblings else target

    def typed(self, schema: dict[str, Any], kind: str, path: str, depth: int,
              refs: tuple[str, ...]) -> dict[str, Any]:
        caps = self.caps
        out: dict[str, Any] = {}
        if kind == "string":
            out["maxLength"] = _count(schema, "maxLength", path, caps.string, caps.hard_string)
            if "minLength" in schema:
                out["minLength"] = min(_count(schema, "minLength", path, 0, caps.hard_string), out["maxLength"])
            for key in ("pattern", "format"):
                if key in schema:
                    if not isinstance(schema[key], str):
                        raise SchemaError(key, path, "must be a string")
                    out[key] = schema[key]
        elif kind == "array":
            out["maxItems"] = _count(schema, "maxItems", path, caps.items, caps.hard_items)
            if "minItems" in schema:
                out["minItems"] = min(_count(schema, "minItems", path, 0, caps.hard_items), out["maxItems"])
            if "prefixItems" in schema:
                raise SchemaError("prefixItems", path, "tuples are not supported; give `items` one schema")
            items = schema.get("items", True)
            if isinstance(items, list):
                raise SchemaError("items", path, "a list of schemas (a tuple) is not supported")
            out["items"] = self.node(items, f"{path}/items", depth + 1, refs) if items is not True \
                else _json_value(caps, 1)
        elif kind == "object":
            out.update(self.object(schema, path, depth, refs))
        elif kind in ("number", "integer"):
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
                if key in schema:
                    value = schema[key]
                    if isinstance(value, bool) or not isinstance(value, (int, float)):
                        raise SchemaError(key, path, "must be a number")
                    out[key] = value
        return out

    def object(self, schema: dict[str, Any], path: str, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        props = _dict(schema.get("properties", {}), "properties", path)
        out: dict[str, Any] = {"properties": {k: self.node(v, f"{path}/properties/{k}", depth + 1, refs)
                                              for k, v in props.items()}}
        required = schema.get("required", [])
        if not isinstance(required, list) or any(not isinstance(r, str) for r in required):
            raise SchemaError("required", path, "must be a list of property names")
        missing = [r for r in required if r not in props]
        if missing:
            raise SchemaError("required", path, f"names {missing[0]!r}, which `properties` does not define")
        if required:
            out["required"] = required
        extra = schema.get("additionalProperties", False if props else True)
        if "patternProperties" in schema:
            raise SchemaError("patternProperties", path, "not supported; give additionalProperties a schema")
        if extra is False:
            out["additionalProperties"] = False
        elif not props:  # a map: short keys, bounded values
            value = _json_value(self.caps, 1) if extra is True else \
                self.node(extra, f"{path}/additionalProperties", depth + 1, refs)
            most = _count(schema, "maxProperties", path, self.caps.items, self.caps.hard_items)
            out = {"patternProperties": {KEY_PATTERN: value}, "additionalProperties": False, "maxProperties": most}
        else:  # named keys and more: only the named ones are generated (a model loops on invented keys)
            out["additionalProperties"] = False
        return out


def _dict(value: Any, keyword: str, path: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SchemaError(keyword, path, "must be a JSON object")
    return value


def _count(schema: dict[str, Any], key: str, path: str, default: int, most: int) -> int:
    value = schema.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(key, path, f"must be a non-negative integer, got {value!r}")
    return min(value, most)


def longest(schema: dict[str, Any]) -> int:
    """The longest compact JSON valid under a bounded schema (`bound`'s output), in characters."""
    if "enum" in schema or "const" in schema:
        import json

        values = schema.get("enum", [schema.get("const")])
        return max(len(json.dumps(v, ensure_ascii=False)) * 2 for v in values)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return max(longest(option) for option in schema[union])
    if "allOf" in schema:
        return min(longest(option) for option in schema["allOf"])
    kind = schema.get("type")
    if kind == "string":
        return 2 + 2 * int(schema["maxLength"])
    if kind == "array":
        n = int(schema["maxItems"])
        return 2 + n * (longest(schema["items"]) + 1)
    if kind == "object" or "patternProperties" in schema:
        if "patternProperties" in schema:
            (value,) = schema["patternProperties"].values()
            n = int(schema["maxProperties"])
            return 2 + n * (2 * KEY_CHARS + 4 + longest(value))
        props = schema.get("properties", {})
        return 2 + sum(2 * len(k) + 4 + longest(v) for k, v in props.items())
    if kind in ("number", "integer"):
        return NUMBER_CHARS
    if kind == "boolean":
        return 5
    if kind == "null":
        return 4
    raise ValueError(f"not a bounded schema node: {schema}")


def fit(schema: dict[str, Any], budget: int, caps: Caps = Caps()) -> dict[str, Any] | None:
    """`schema` (bounded) with its string and list caps scaled down until `longest` is at most
    `budget`; None when even the smallest caps do not fit (the schema's own minimums)."""
    scale = 1.0
    for _ in range(40):
        shrunk = _scaled(schema, scale)
        if longest(shrunk) <= budget:
            return shrunk
        scale *= 0.7
    return None


def _scaled(schema: Any, scale: float) -> Any:
    if isinstance(schema, list):
        return [_scaled(s, scale) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _scaled(v, scale) for k, v in schema.items()}
    for cap, floor in (("maxLength", "minLength"), ("maxItems", "minItems"), ("maxProperties", "minProperties")):
        if isinstance(schema.get(cap), int) and not isinstance(schema.get(cap), bool):
            out[cap] = max(int(schema[cap] * scale), int(schema.get(floor, 0)), 1 if cap == "maxLength" else 0)
    return out


