"""`localjudge serve`'s HTTP API on the scripted fake judge: what each request gets, what the
batcher does with requests that arrive together, and a hostile client's requests (each a 4xx or a
429, the server still serving)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from localjudge.judge import FakeJudge, Generation
from localjudge.serve import Caps, Limits, create_app
from localjudge.serve.schema_bounds import longest

CLAIMS = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
          "required": ["claims"], "additionalProperties": False}
MASTRA = ("Return your response as JSON matching this schema:\n\n{schema}\n\n"
          "Return only valid JSON. Do not include markdown or explanatory text.")


def words(prompt: list[dict[str, str]]) -> int:
    return sum(len(m["content"].split()) for m in prompt)


def make_client(judge: FakeJudge, **options: Any) -> TestClient:
    window = options.pop("window", 4096)
    return TestClient(create_app(judge, served_name="judge", count_tokens=words, context_window=window, **options))


@pytest.fixture
def judge() -> FakeJudge:
    return FakeJudge({"Answer": lambda prompt: {"claims": ["Paris is in France."]},
                      "Text": lambda prompt: {"text": "Because it says so. Because it says so."}})


@pytest.fixture
def client(judge: FakeJudge) -> Iterator[TestClient]:
    with make_client(judge) as c:
        yield c


def chat(client: TestClient, **body: Any) -> httpx.Response:
    body.setdefault("messages", [{"role": "user", "content": "Judge this."}])
    return client.post("/v1/chat/completions", json=body)


def test_models_lists_the_name_context_and_guarantees(client: TestClient) -> None:
    (model,) = client.get("/v1/models").json()["data"]
    assert model["id"] == "judge" and model["max_model_len"] == 4096
    assert model["localjudge"]["identity"] == "fake-judge" and model["localjudge"]["guarantees"]


def test_mastras_inline_schema_is_enforced_from_the_last_user_message(client: TestClient, judge: FakeJudge) -> None:
    instruction = MASTRA.format(schema=json.dumps(CLAIMS))
    # as the AI SDK sends Mastra's injected instruction: a second text part of the last user message
    reply = chat(client, messages=[{"role": "system", "content": "You judge."},
                                   {"role": "user", "content": [{"type": "text", "text": "Extract claims."},
                                                                {"type": "text", "text": instruction}]}]).json()
    assert json.loads(reply["choices"][0]["message"]["content"]) == {"claims": ["Paris is in France."]}
    assert reply["localjudge"]["constraint"] == "prompt:mastra"
    (call,) = judge.calls
    assert call.schema_names == ("Answer",)
    assert call.prompts[0][-1]["content"].endswith("explanatory text.")
    assert reply["usage"]["total_tokens"] == reply["usage"]["prompt_tokens"] + reply["usage"]["completion_tokens"] > 0
    assert reply["system_fingerprint"] == "fake-judge"


def test_an_instruction_in_an_earlier_message_does_not_constrain(client: TestClient) -> None:
    instruction = MASTRA.format(schema=json.dumps(CLAIMS))
    reply = chat(client, messages=[{"role": "user", "content": instruction}, {"role": "assistant", "content": "{}"},
                                   {"role": "user", "content": "Now say why."}]).json()
    assert reply["localjudge"]["constraint"] == "text"


def test_response_format_json_schema_and_json_object(client: TestClient, judge: FakeJudge) -> None:
    reply = chat(client, response_format={"type": "json_schema", "json_schema": {"name": "c", "strict": True,
                                                                                 "schema": CLAIMS}}).json()
    assert reply["localjudge"]["constraint"] == "response_format"
    schema = judge.calls[-1]
    assert schema.schema_names == ("Answer",)
    chat(client, response_format={"type": "json_object"})
    assert chat(client, response_format={"type": "xml"}).status_code == 400


def test_text_answers_drop_the_repeat_and_stop_strings_cut(client: TestClient) -> None:
    reply = chat(client).json()
    assert reply["choices"][0]["message"]["content"] == "Because it says so."
    assert reply["choices"][0]["finish_reason"] == "stop"
    cut = chat(client, stop=["says"]).json()
    assert cut["choices"][0]["message"]["content"] == "Because it "


def test_a_stream_sends_chunks_usage_then_done(client: TestClient) -> None:
    text = chat(client, stream=True, stream_options={"include_usage": True}).text
    events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "Because it says so."
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["usage"]["prompt_tokens"] > 0


def test_tools_required_and_named_answer_a_call_under_the_parameters() -> None:
    weather = {"type": "function", "function": {"name": "weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
    time_tool = {"type": "function", "function": {"name": "time", "parameters": {"type": "object", "properties": {}}}}
    judge = FakeJudge({"Answer": [{"city": "Paris"}, {"name": "time", "arguments": {}},
                                  {"name": "weather", "arguments": {"city": "Rome"}}]})
    with make_client(judge) as client:
        named = chat(client, tools=[weather, time_tool],
                     tool_choice={"type": "function", "function": {"name": "weather"}}).json()["choices"][0]
        assert named["finish_reason"] == "tool_calls"
        assert named["message"]["tool_calls"][0]["function"] == {"name": "weather", "arguments": '{"city": "Paris"}'}
        required = chat(client, tools=[weather, time_tool], tool_choice="required").json()["choices"][0]
        assert required["message"]["tool_calls"][0]["function"] == {"name": "time", "arguments": "{}"}
        stream = chat(client, tools=[weather], tool_choice="required", stream=True).text
        deltas = [json.loads(line[6:])["choices"][0] for line in stream.splitlines()
                  if line.startswith("data: {")]
        (call,) = [d["delta"]["tool_calls"][0] for d in deltas if "tool_calls" in d["delta"]]
        assert call["function"] == {"name": "weather", "arguments": '{"city":"Rome"}'}
        assert deltas[-1]["finish_reason"] == "tool_calls"
        unknown = chat(client, tools=[weather], tool_choice={"type": "function", "function": {"name": "nope"}})
        assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "tool_choice"


def test_logprobs_report_the_label_choices() -> None:
    judge = FakeJudge({"Answer": [Generation('{"verdict":"yes"}', label_probs=({"no": 0.2, "yes": 0.8},))]})
    with make_client(judge) as client:
        schema = {"type": "object", "properties": {"verdict": {"enum": ["yes", "no"]}}, "required": ["verdict"]}
        reply = chat(client, logprobs=True, top_logprobs=2,
                     response_format={"type": "json_schema", "json_schema": {"schema": schema}}).json()
    (entry,) = reply["choices"][0]["logprobs"]["content"]
    assert entry["token"] == "yes" and entry["logprob"] == pytest.approx(-0.2231, abs=1e-4)
    assert [t["token"] for t in entry["top_logprobs"]] == ["yes", "no"]


def test_a_cut_off_answer_is_asked_again_with_caps_that_fit_the_budget() -> None:
    answers = [Generation('{"claims":["aaaa', finished=False), Generation('{"claims":["a"]}')]
    judge = Recording({"Answer": answers})
    with make_client(judge) as client:
        reply = chat(client, max_tokens=60,
                     response_format={"type": "json_schema", "json_schema": {"schema": CLAIMS}}).json()
    assert json.loads(reply["choices"][0]["message"]["content"]) == {"claims": ["a"]}
    first, second = judge.schemas
    assert longest(first) > 60 - 8 >= longest(second)  # the second fits the budget: it closes
    assert [call.max_new_tokens for call in judge.calls] == [60, 60]


class Recording(FakeJudge):
    """The fake judge, keeping each schema it was asked to follow."""

    def __init__(self, script: dict[str, Any]) -> None:
        super().__init__(script)
        self.schemas: list[dict[str, Any]] = []

    def generate(self, prompts: Any, schemas: Any, *, max_new_tokens: int) -> list[Generation]:
        self.schemas += [s.model_json_schema() for s in schemas]
        return super().generate(prompts, schemas, max_new_tokens=max_new_tokens)


def test_requests_that_arrive_together_share_one_judge_call(judge: FakeJudge) -> None:
    app = create_app(judge, served_name="judge", count_tokens=words, context_window=4096,
                     limits=Limits(window=0.2))

    async def eight() -> list[int]:
        async with app_lifespan(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
                body = {"messages": [{"role": "user", "content": "x"}],
                        "response_format": {"type": "json_schema", "json_schema": {"schema": CLAIMS}}}
                replies = await asyncio.gather(*(c.post("/v1/chat/completions", json=body) for _ in range(8)))
        return [r.status_code for r in replies]

    assert asyncio.run(eight()) == [200] * 8
    assert len(judge.calls) == 1 and len(judge.calls[0].prompts) == 8


def test_a_prompt_that_fails_the_judge_fails_alone() -> None:
    def answer(prompt: list[dict[str, str]]) -> dict[str, Any]:
        if "poison" in prompt[-1]["content"]:
            raise RuntimeError("the engine choked")
        return {"claims": ["ok"]}

    judge = FakeJudge({"Answer": answer})
    app = create_app(judge, served_name="judge", count_tokens=words, context_window=4096, limits=Limits(window=0.2))

    async def four() -> list[httpx.Response]:
        async with app_lifespan(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                bodies = [{"messages": [{"role": "user", "content": text}],
                           "response_format": {"type": "json_schema", "json_schema": {"schema": CLAIMS}}}
                          for text in ("a", "poison", "b", "c")]
                return list(await asyncio.gather(*(c.post("/v1/chat/completions", json=b) for b in bodies)))

    replies = asyncio.run(four())
    assert [r.status_code for r in replies] == [200, 500, 200, 200]
    assert "the engine choked" in replies[1].json()["error"]["message"]
    assert len(judge.calls[0].prompts) == 4  # one call, then halves down to the failing row


class app_lifespan:  # noqa: N801 - used as `async with app_lifespan(app)`
    """Run an ASGI app's lifespan (the batcher's task) around async requests."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __aenter__(self) -> None:
        self.queue: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        await self.queue.put({"type": "lifespan.startup"})
        self.task = asyncio.create_task(self.app({"type": "lifespan", "asgi": {"version": "3.0"}},
                                                 self.queue.get, self.sent.put))
        assert (await self.sent.get())["type"] == "lifespan.startup.complete"

    async def __aexit__(self, *exc: object) -> None:
        await self.queue.put({"type": "lifespan.shutdown"})
        await self.task


# The hostile client: each request gets its 4xx (or a 429), OpenAI-shaped, and the server serves on.
HOSTILE: list[tuple[str, dict[str, Any] | bytes, int, str | None]] = [
    ("not JSON", b"{not json", 400, "body"),
    ("a JSON array", b"[1, 2]", 400, "body"),
    ("deeply nested JSON", b"[" * 100_000 + b"]" * 100_000, 400, "body"),
    ("messages missing", {"model": "judge"}, 400, "messages"),
    ("messages of the wrong type", {"messages": "hello"}, 400, "messages"),
    ("a role that is none", {"messages": [{"role": "wizard", "content": "x"}]}, 400, "messages.0.role"),
    ("content of the wrong type", {"messages": [{"role": "user", "content": 5}]}, 400, "messages.0.content.str"),
    ("an image part", {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}, 400,
     "messages"),
    ("no user message", {"messages": [{"role": "system", "content": "x"}]}, 400, "messages"),
    ("n=3", {"messages": [{"role": "user", "content": "x"}], "n": 3}, 400, "n"),
    ("max_tokens 0", {"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, 400, "max_tokens"),
    ("1,000 messages", {"messages": [{"role": "user", "content": "x"}] * 1000}, 400, "messages"),
    ("a $ref cycle", {"messages": [{"role": "user", "content": "x"}], "response_format": {
        "type": "json_schema", "json_schema": {"schema": {
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}}}}, 400, "$ref"),
    ("a keyword the grammar lacks", {"messages": [{"role": "user", "content": "x"}], "response_format": {
        "type": "json_schema", "json_schema": {"schema": {"type": "object", "not": {}}}}}, 400, "not"),
    ("a prompt longer than the context", {"messages": [{"role": "user", "content": "word " * 5000}]}, 400, "messages"),
]


@pytest.mark.parametrize(("body", "status", "param"), [case[1:] for case in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_a_hostile_request_gets_its_4xx_and_the_server_serves_on(client: TestClient, body: dict[str, Any] | bytes,
                                                                  status: int, param: str | None) -> None:
    if isinstance(body, bytes):
        reply = client.post("/v1/chat/completions", content=body, headers={"Content-Type": "application/json"})
    else:
        reply = client.post("/v1/chat/completions", json=body)
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert error["param"] == param and error["type"] and "Traceback" not in error["message"]
    assert chat(client).status_code == 200


def test_a_huge_body_is_refused_as_it_arrives(judge: FakeJudge) -> None:
    with make_client(judge, limits=Limits(max_body=1000)) as client:
        declared = client.post("/v1/chat/completions", content=b"x" * 5000)
        assert declared.status_code == 413 and declared.json()["error"]["param"] == "body"

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            for _ in range(10):
                yield b"x" * 500

        streamed = client.post("/v1/chat/completions", content=chunks())
        assert streamed.status_code == 413
        assert chat(client).status_code == 200


def test_a_flood_past_the_queue_gets_429_with_retry_after() -> None:
    slow = FakeJudge({"Text": lambda prompt: (__import__("time").sleep(0.3), {"text": "ok"})[1]})
    app = create_app(slow, served_name="judge", count_tokens=words, context_window=4096,
                     limits=Limits(max_queue=3, max_rows=1, window=0.0))

    async def flood() -> list[httpx.Response]:
        async with app_lifespan(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                body = {"messages": [{"role": "user", "content": "x"}]}
                return list(await asyncio.gather(*(c.post("/v1/chat/completions", json=body) for _ in range(8))))

    replies = asyncio.run(flood())
    codes = sorted(r.status_code for r in replies)
    assert codes.count(200) == 3 and codes.count(429) == 5
    busy = next(r for r in replies if r.status_code == 429)
    assert busy.headers["Retry-After"] == "2" and busy.json()["error"]["code"] == "queue_full"


def test_an_api_key_is_required_when_set(judge: FakeJudge) -> None:
    with make_client(judge, api_key="sk-local") as client:
        assert client.get("/v1/models").status_code == 401
        assert client.get("/v1/models", headers={"Authorization": "Bearer sk-wrong"}).status_code == 401
        ok = client.get("/v1/models", headers={"Authorization": "Bearer sk-local"})
        assert ok.status_code == 200
        assert client.get("/health").status_code == 200  # liveness needs no key
        assert "sk-local" not in client.get("/v1/models").text


def test_an_unknown_path_is_an_openai_error(client: TestClient) -> None:
    reply = client.post("/v1/embeddings", json={})
    assert reply.status_code == 404 and "error" in reply.json()


def test_caps_from_the_server_apply_where_a_schema_has_none(judge: FakeJudge) -> None:
    with make_client(judge, caps=Caps(string=7, items=2)) as client:
        chat(client, response_format={"type": "json_schema", "json_schema": {"schema": CLAIMS}})
    (call,) = judge.calls
    # the longest answer under the caps (two strings of 7 characters, each escaped), + the wrap
    assert call.max_new_tokens == 2 + (2 * len('claims') + 4) + (2 + 2 * (2 + 2 * 7 + 1)) + 8
