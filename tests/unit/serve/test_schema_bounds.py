"""A client's JSON schema bounded for the grammar: refs inlined, caps added, what cannot be
enforced refused by name, and `fit` shrinking it into a token budget."""

from __future__ import annotations

import pytest

from localjudge.serve.constraints import prompt_schema
from localjudge.serve.schema_bounds import Caps, SchemaError, bound, fit, json_object_schema, longest

CLAIMS = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
          "required": ["claims"], "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"}


def test_strings_and_arrays_get_the_default_caps_and_extra_keys_are_forbidden() -> None:
    out = bound({"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}}},
                Caps(string=30, items=4))
    claims = out["properties"]["claims"]
    assert claims["maxItems"] == 4 and claims["items"]["maxLength"] == 30
    assert out["additionalProperties"] is False


def test_a_schemas_own_bounds_are_kept_up_to_the_hard_caps() -> None:
    out = bound({"type": "array", "items": {"type": "string", "maxLength": 10 ** 6}, "maxItems": 3})
    assert out["maxItems"] == 3 and out["items"]["maxLength"] == Caps().hard_string


def test_refs_are_inlined_and_a_cycle_is_refused_naming_ref() -> None:
    pydantic_style = {"$defs": {"V": {"type": "object", "properties": {"verdict": {"enum": ["yes", "no"]}},
                                      "required": ["verdict"]}},
                      "type": "object", "properties": {"verdicts": {"type": "array", "items": {"$ref": "#/$defs/V"}}}}
    out = bound(pydantic_style)
    assert out["properties"]["verdicts"]["items"]["properties"]["verdict"] == {"enum": ["yes", "no"]}
    kids = {"type": "array", "items": {"$ref": "#/$defs/N"}}
    cyclic = {"$defs": {"N": {"type": "object", "properties": {"kids": kids}}}, "$ref": "#/$defs/N"}
    with pytest.raises(SchemaError) as caught:
        bound(cyclic)
    assert caught.value.keyword == "$ref"
    with pytest.raises(SchemaError, match="not defined"):
        bound({"$ref": "#/$defs/Missing"})
    with pytest.raises(SchemaError, match="only local references"):
        bound({"$ref": "https://example.com/schema.json"})


@pytest.mark.parametrize(("schema", "keyword"), [
    ({"type": "object", "not": {"type": "string"}}, "not"),
    ({"type": "string", "if": {}, "then": {}}, "if"),
    ({"type": "array", "uniqueItems": True}, "uniqueItems"),
    ({"type": "object", "propertyNames": {"maxLength": 3}}, "propertyNames"),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, "prefixItems"),
    ({"type": "object", "required": ["a"], "properties": {}}, "required"),
    ({"type": "string", "maxLength": -1}, "maxLength"),
    ({"type": "frog"}, "type"),
    ([1, 2], "schema"),
])
def test_what_the_grammar_cannot_enforce_is_refused_by_name(schema: object, keyword: str) -> None:
    with pytest.raises(SchemaError) as caught:
        bound(schema)
    assert caught.value.keyword == keyword


def test_a_type_list_becomes_a_union_and_langchains_typeless_object_is_an_object() -> None:
    out = bound({"type": ["string", "null"], "maxLength": 5})
    assert out == {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]}
    typeless = bound({"properties": {"a": {"type": "integer"}}, "required": ["a"]})
    assert typeless["type"] == "object" and typeless["required"] == ["a"]


def test_a_huge_schema_is_refused() -> None:
    wide = {"type": "object", "properties": {f"k{i}": {"type": "string"} for i in range(3000)}}
    with pytest.raises(SchemaError, match="nodes"):
        bound(wide)
    deep: dict[str, object] = {"type": "string"}
    for _ in range(40):
        deep = {"type": "array", "items": deep}
    with pytest.raises(SchemaError, match="deeper"):
        bound(deep)


def test_longest_counts_escapes_and_fit_shrinks_into_a_budget() -> None:
    out = bound(CLAIMS, Caps(string=100, items=10))
    assert longest(out) == 2 + (2 * 6 + 4) + 2 + 10 * (2 + 200 + 1)
    shrunk = fit(out, 300)
    assert shrunk is not None and longest(shrunk) <= 300
    assert shrunk["properties"]["claims"]["maxItems"] < 10
    assert fit(bound({"type": "array", "items": {"type": "string", "minLength": 50}, "minItems": 20}), 100) is None


def test_json_object_is_a_bounded_map() -> None:
    schema = json_object_schema(Caps(string=10, items=3))
    assert schema["maxProperties"] == 3 and schema["additionalProperties"] is False
    assert longest(schema) < 10_000


def test_the_prompt_instructions_are_found_in_the_last_text() -> None:
    import json

    mastra = (f"Judge this.\nReturn your response as JSON matching this schema:\n\n{json.dumps(CLAIMS)}\n\n"
              "Return only valid JSON. Do not include markdown or explanatory text.")
    assert prompt_schema(mastra) == ("mastra", CLAIMS)
    ragas = ("Please return the output in a JSON format that complies with the following schema as specified in "
             f"JSON Schema:\n{json.dumps(CLAIMS)}Do not use single quotes in your response but double quotes,"
             "properly escaped with a backslash.\n\nInput: {}")
    assert prompt_schema(ragas) == ("ragas", CLAIMS)
    langchain = ("The output should be formatted as a JSON instance that conforms to the JSON schema below.\n\n"
                 f"Here is the output schema:\n```\n{json.dumps(CLAIMS)}\n```")
    assert prompt_schema(langchain) == ("langchain", CLAIMS)
    assert prompt_schema("Return your response as JSON matching this schema: {not json") is None
    assert prompt_schema("Answer in JSON, please.") is None
