"""What a request's answer must be: JSON under a schema, a tool call, or text.

Read in this order, the first that applies:

1. ``response_format``: ``json_schema`` (strict or not: the schema is enforced either way) or
   ``json_object`` (any JSON object, bounded: `schema_bounds.json_object_schema`);
2. ``tools`` with ``tool_choice`` ``"required"`` (one call of any of them) or a named function
   (that function's arguments);
3. **a JSON schema the client wrote into its last user message**, in one of the instructions
   below (`INSTRUCTIONS`): the answer is that schema's JSON, nothing around it;
4. otherwise text, with the repetition guard.

Every schema is bounded first (`schema_bounds.bound`); one the grammar cannot enforce is a
`SchemaError` (a 400 naming the keyword), never a silently unconstrained answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from localjudge.serve.requests import ChatRequest, last_user_text
from localjudge.serve.schema_bounds import Caps, SchemaError, bound, json_object_schema

# Instructions clients append to a prompt, each followed by the JSON schema of the answer:
# (name, the text right before the schema).
INSTRUCTIONS = (
    # @mastra/core 1.71.0 `buildJsonInstruction` (jsonPromptInjection "auto" for a model it does not
    # list): appended to the last user message
    ("mastra", "Return your response as JSON matching this schema:"),
    # ragas 0.4.3 `PydanticPrompt._generate_output_signature`
    ("ragas", "following schema as specified in JSON Schema:"),
    # LangChain's PydanticOutputParser / JsonOutputParser format instructions (the schema in a fence)
    ("langchain", "Here is the output schema:"),
)

Kind = Literal["json", "tool", "text"]


@dataclass(frozen=True)
class Constraint:
    """The answer a request gets.

    Attributes:
        kind: ``json`` (the content is JSON under `schema`), ``tool`` (a tool call: `schema`
            is its arguments' when `tool` names it, else a choice of ``{"name", "arguments"}``),
            ``text``.
        schema: The bounded schema (None for text).
        source: Where the constraint came from: ``response_format``, ``tools``,
            ``prompt:mastra`` (an instruction of `INSTRUCTIONS`), ``text``.
        tool: The tool called, when the request names one.
    """

    kind: Kind
    schema: dict[str, Any] | None
    source: str
    tool: str | None = None


TEXT = Constraint("text", None, "text")


class RequestError(ValueError):
    """A request the server refuses (400): `param` names the field."""

    def __init__(self, param: str, message: str) -> None:
        self.param = param
        super().__init__(message)


def constraint(request: ChatRequest, caps: Caps = Caps()) -> Constraint:
    """The constraint of `request` (see the module's docstring).

    Raises:
        RequestError: a response format, tool choice or schema that cannot be enforced.
    """
    try:
        return _constraint(request, caps)
    except SchemaError as error:
        raise RequestError(error.keyword, f"the answer's JSON schema: {error}") from None


def _constraint(request: ChatRequest, caps: Caps) -> Constraint:
    form = request.response_format
    if form is not None and form.get("type") not in (None, "text"):
        kind = form.get("type")
        if kind == "json_object":
            return Constraint("json", json_object_schema(caps), "response_format")
        if kind == "json_schema":
            spec = form.get("json_schema")
            if not isinstance(spec, dict) or not isinstance(spec.get("schema", {}), dict):
                raise RequestError("response_format", "response_format.json_schema must be an object with a `schema`")
            return Constraint("json", bound(spec.get("schema", {}), caps), "response_format")
        raise RequestError("response_format", f"response_format.type {kind!r} is not json_schema, json_object or text")
    if request.tools:
        tool = _tool_constraint(request, caps)
        if tool is not None:
            return tool
    found = prompt_schema(last_user_text(request.messages))
    if found is not None:
        name, schema = found
        return Constraint("json", bound(schema, caps), f"prompt:{name}")
    return TEXT


def _tool_constraint(request: ChatRequest, caps: Caps) -> Constraint | None:
    tools = {t.function.name: t.function for t in request.tools or []}
    choice = request.tool_choice
    if choice in (None, "auto", "none"):
        return None  # the model may answer in text: it does (docs/serve.md)
    if choice == "required":
        options = [{"type": "object", "properties": {"name": {"const": name}, "arguments": bound(f.parameters, caps)},
                    "required": ["name", "arguments"], "additionalProperties": False} for name, f in tools.items()]
        return Constraint("tool", options[0] if len(options) == 1 else {"anyOf": options}, "tools")
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name not in tools:
            raise RequestError("tool_choice", f"tool_choice names {name!r}, which is not among the request's tools")
        return Constraint("tool", bound(tools[name].parameters, caps), "tools", tool=name)
    raise RequestError("tool_choice", f"tool_choice {choice!r} is not auto, none, required or a named function")


def prompt_schema(text: str) -> tuple[str, dict[str, Any]] | None:
    """The JSON schema an instruction of `INSTRUCTIONS` puts in `text` (the last one there):
    (the instruction's name, the schema), or None."""
    best: tuple[int, str, dict[str, Any]] | None = None
    for name, marker in INSTRUCTIONS:
        at = text.rfind(marker)
        if at < 0 or (best is not None and at < best[0]):
            continue
        schema = _json_after(text, at + len(marker))
        if schema is not None:
            best = (at, name, schema)
    return None if best is None else (best[1], best[2])


def _json_after(text: str, start: int) -> dict[str, Any] | None:
    """The JSON object that starts at the first ``{`` after `start` (past whitespace and a
    markdown fence), or None."""
    rest = text[start:start + 200_000].lstrip()
    if rest.startswith("```"):
        rest = rest.split("\n", 1)[-1].lstrip()
    if not rest.startswith("{"):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(rest)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
