"""The `openai` Python client against `localjudge serve` on the default model: a json_schema
response format, a stream, a forced tool call — each answer parses — and the same request twice
gives the same bytes."""

from __future__ import annotations

import json

import openai
import pytest

from tests.serve.serve_process import SERVED, ServeProcess

VERDICT = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]},
                                            "reason": {"type": "string", "maxLength": 120}},
           "required": ["verdict", "reason"], "additionalProperties": False}
QUESTION = [{"role": "user", "content": "Context: Paris is the capital of France.\nClaim: Lyon is the capital of "
                                        "France.\nDoes the context support the claim?"}]


@pytest.fixture(scope="module")
def client(serve: ServeProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=serve.url, api_key="unused", max_retries=0, timeout=300)


def test_json_schema_answers_parse_with_label_logprobs_and_repeat_byte_for_byte(client: openai.OpenAI) -> None:
    def ask() -> openai.types.chat.ChatCompletion:
        return client.chat.completions.create(
            model=SERVED, messages=QUESTION, temperature=0.9, logprobs=True, top_logprobs=2,  # type: ignore[arg-type]
            response_format={"type": "json_schema", "json_schema": {"name": "verdict", "strict": True,
                                                                    "schema": VERDICT}})

    first, second = ask(), ask()
    answer = json.loads(first.choices[0].message.content or "")
    assert answer["verdict"] in ("yes", "no") and 0 < len(answer["reason"]) <= 120
    assert first.choices[0].message.content == second.choices[0].message.content  # greedy whatever temperature
    assert first.system_fingerprint == second.system_fingerprint and "greedy" in (first.system_fingerprint or "")
    assert first.usage is not None and first.usage.completion_tokens > 0
    (label,) = first.choices[0].logprobs.content  # type: ignore[union-attr]
    assert label.token == answer["verdict"] and {t.token for t in label.top_logprobs} == {"yes", "no"}


def test_a_stream_parses_and_carries_usage(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model=SERVED, messages=QUESTION, stream=True, stream_options={"include_usage": True},
        response_format={"type": "json_schema", "json_schema": {"name": "verdict", "schema": VERDICT}})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert json.loads(text)["verdict"] in ("yes", "no")
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0


def test_a_forced_tool_call_parses_under_its_parameters(client: openai.OpenAI) -> None:
    tool = {"type": "function", "function": {"name": "record_verdict", "parameters": VERDICT}}
    reply = client.chat.completions.create(model=SERVED, messages=QUESTION, tools=[tool],  # type: ignore[list-item]
                                           tool_choice={"type": "function", "function": {"name": "record_verdict"}})
    (call,) = reply.choices[0].message.tool_calls or []
    assert call.function.name == "record_verdict"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments)["verdict"] in ("yes", "no")  # type: ignore[union-attr]
    assert reply.choices[0].finish_reason == "tool_calls"


def test_plain_text_ends_within_its_budget(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model=SERVED, messages=QUESTION, max_tokens=40)
    assert reply.choices[0].message.content and reply.usage is not None
    assert reply.usage.completion_tokens <= 40 + 8
