"""The server engine against an in-process fake OpenAI-compatible server (`fake_server`).

The fake speaks each dialect as `localjudge.engines.server.dialects` encodes it: vLLM's as
checked against vLLM 0.32's server, the others as written from their documentation and source.
No model is loaded: a stand-in tokenizer renders prompts when token ids are sent (a real
tokenizer folder: tests/engines/test_server_tokenizer.py).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import deque
from typing import Literal

import pytest
from pydantic import BaseModel

from localjudge.engines import EngineOptionError, load_judge
from localjudge.engines.server import ServerJudge
from localjudge.judge import Judge
from tests.unit.engines.fake_server import ANSWER, CharTokenizer, FakeServer, judge_on, ok_reply

SECRET = "sk-test-do-not-leak-7f3a"


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


class Claims(BaseModel):
    claims: list[str]


def prompt(text: str = "judge this") -> list[dict[str, str]]:
    return [{"role": "system", "content": "You judge."}, {"role": "user", "content": text}]


# --- each dialect -------------------------------------------------------------------------------

DIALECTS = [  # kind, with the tokenizer?, path, identity part
    ("vllm", True, "/v1/completions", "judge-model@127.0.0.1"),
    ("vllm", False, "/v1/chat/completions", ":vllm-0.32.0:greedy+ctx-4096+server-template"),
    ("sglang", True, "/v1/completions", ":sglang-0.5.2:greedy+ctx-4096"),
    ("llama-cpp", True, "/v1/completions", ":llama-cpp-b6100-abc:greedy+ctx-2048"),
    ("llama-cpp", False, "/v1/chat/completions", "+server-template"),
    ("ollama", False, "/api/chat", ":ollama-0.12.3:greedy+server-template"),
    ("openai", False, "/v1/chat/completions", ":openai:greedy+server-template"),
]


@pytest.mark.parametrize(("kind", "tokens", "path", "identity"), DIALECTS)
def test_each_dialect_gets_its_request_and_its_answer_back(server: FakeServer, kind: str, tokens: bool, path: str,
                                                           identity: str) -> None:
    server.kind = kind
    if kind not in ("vllm", "sglang"):  # llama-server's context comes from /props; Ollama's is not listed
        server.models = [{"id": "judge-model", "meta": {"n_ctx_train": 8192}}]
    judge = judge_on(server, tokenizer=CharTokenizer() if tokens else None)
    assert isinstance(judge, Judge) and judge.kind == kind
    out = judge.generate([prompt()], [Verdict], max_new_tokens=64)
    assert out[0].text == ANSWER and out[0].finished and out[0].error is None and out[0].new_tokens == 5
    assert identity in judge.identity and judge.identity.startswith("judge-model@127.0.0.1:")
    [(sent_path, body)] = server.posts()
    assert sent_path == path and body["model"] == "judge-model"
    schema = Verdict.model_json_schema()
    if tokens:  # localjudge's own template, as token ids
        assert body["prompt"] == CharTokenizer()(CharTokenizer().apply_chat_template(prompt())).input_ids
        assert "messages" not in body
    else:
        assert body["messages"] == prompt() and "prompt" not in body
    if kind == "ollama":
        assert body["format"] == schema and body["stream"] is False
        assert body["options"] == {"temperature": 0, "seed": 0, "num_predict": 64}
        return
    assert body["temperature"] == 0 and body["max_tokens"] == 64
    if kind == "vllm":
        assert body["structured_outputs"] == {"json": {**schema, "x-guidance": {"whitespace_flexible": False,
                                                                                "coerce_one_of": True}}}
    elif tokens and kind == "sglang":
        assert json.loads(body["json_schema"]) == schema
    elif tokens:
        assert body["json_schema"] == schema
    else:
        assert body["response_format"] == {"type": "json_schema",
                                           "json_schema": {"name": "Verdict", "schema": schema, "strict": True}}
    asked = {"llama-cpp": ("n_probs", 20)}.get(kind, ("logprobs", 20)) if tokens else ("top_logprobs", 20)
    assert body[asked[0]] == asked[1]


def test_no_logprobs_are_asked_for_an_answer_without_labels(server: FakeServer) -> None:
    judge = judge_on(server, tokenizer=CharTokenizer())
    judge.generate([prompt()], [Claims], max_new_tokens=8)
    [(_, body)] = server.posts()
    assert "logprobs" not in body and "top_logprobs" not in body


def test_a_given_server_kind_is_trusted_and_chat_only_kinds_refuse_token_ids(server: FakeServer) -> None:
    server.kind = "openai"  # the server shows nothing: detected as the generic kind
    assert judge_on(server).kind == "openai"
    assert judge_on(server, server_kind="vllm").identity.endswith(":vllm:greedy+ctx-4096+server-template")
    with pytest.raises(ValueError, match="takes chat messages, not token ids"):
        judge_on(server, tokenizer=CharTokenizer())
    with pytest.raises(ValueError, match="server_kind must be one of"):
        judge_on(server, server_kind="tgi")


def test_the_served_model_is_the_only_one_listed_or_must_be_named(server: FakeServer) -> None:
    server.models = [{"id": "a"}, {"id": "b"}]
    with pytest.raises(ValueError, match=r"lists 2 models \(a, b\): choose one with served_model"):
        judge_on(server)
    with pytest.raises(ValueError, match="does not serve 'c'; it lists a, b"):
        judge_on(server, served_model="c")
    assert judge_on(server, served_model="b").served_model == "b"


# --- concurrency, faults ------------------------------------------------------------------------

def test_at_most_concurrency_requests_are_in_flight(server: FakeServer) -> None:
    server.delay = 0.1
    judge = judge_on(server, concurrency=3)
    out = judge.generate([prompt(f"row {i}") for i in range(10)], [Verdict] * 10, max_new_tokens=16)
    assert [g.text for g in out] == [ANSWER] * 10
    assert server.peak == 3 and len(server.posts()) == 10


def test_5xx_and_429_are_retried_until_the_answer_comes(server: FakeServer) -> None:
    server.actions["flaky"] = deque([500, 429, 503])
    judge = judge_on(server, retries=3)
    out = judge.generate([prompt("flaky"), prompt("fine")], [Verdict, Verdict], max_new_tokens=16)
    assert [g.text for g in out] == [ANSWER, ANSWER] and all(g.error is None for g in out)
    assert len(server.posts()) == 5


def test_the_servers_retry_after_is_waited_instead_of_the_back_off(server: FakeServer) -> None:
    server.actions["busy"] = deque([(429, "slow down", "0.05")])
    start = time.monotonic()
    [out] = judge_on(server, backoff=30.0).generate([prompt("busy")], [Verdict], max_new_tokens=16)
    assert out.text == ANSWER and time.monotonic() - start < 5


def test_timeouts_and_resets_are_retried_then_only_that_row_is_unscored(server: FakeServer) -> None:
    server.actions["stuck"] = deque(["sleep", "reset", "sleep"])
    judge = judge_on(server, retries=2, request_timeout=0.3)
    out = judge.generate([prompt("stuck"), prompt("fine")], [Verdict, Verdict], max_new_tokens=16)
    assert out[1].text == ANSWER and out[1].error is None
    assert out[0].text == "" and out[0].error_kind == "judge_failed"
    assert "within 0.3 s" in (out[0].error or "") and "tried 3 times" in (out[0].error or "")
    assert len([b for _, b in server.posts() if b["messages"][-1]["content"] == "stuck"]) == 3


def test_a_reset_then_an_answer_is_recovered(server: FakeServer) -> None:
    server.actions["once"] = deque(["reset"])
    out = judge_on(server, retries=1).generate([prompt("once")], [Verdict], max_new_tokens=16)
    assert out[0].text == ANSWER and len(server.posts()) == 2


def test_a_client_error_is_not_retried_and_a_context_overflow_is_too_long(server: FakeServer) -> None:
    server.actions["bad"] = deque([400])
    server.actions["huge"] = deque([(400, "This model's maximum context length is 4096 tokens. However, ...")])
    out = judge_on(server).generate([prompt("bad"), prompt("huge")], [Verdict, Verdict], max_new_tokens=16)
    assert out[0].error_kind == "judge_failed" and "HTTP 400: fake error 400" in (out[0].error or "")
    assert out[1].error_kind == "too_long" and "maximum context length" in (out[1].error or "")
    assert len(server.posts()) == 2


def test_an_unexpected_reply_or_a_dead_server_unscores_rows_without_raising(server: FakeServer) -> None:
    judge = judge_on(server, retries=1)
    server.answer = lambda path, body: {"unexpected": True}
    [out] = judge.generate([prompt()], [Verdict], max_new_tokens=16)
    assert out.error_kind == "judge_failed" and "unexpected reply" in (out.error or "")
    server.shutdown()
    server.server_close()  # the server dies mid-run: every row unscored, none lost
    out2 = judge.generate([prompt("a"), prompt("b")], [Verdict, Verdict], max_new_tokens=16)
    assert [g.error_kind for g in out2] == ["judge_failed", "judge_failed"]
    assert all("cannot reach 127.0.0.1" in (g.error or "") and "tried 2 times" in (g.error or "") for g in out2)


def test_a_cut_off_answer_is_reported_unfinished(server: FakeServer) -> None:
    server.answer = lambda path, body: ok_reply(path, body, text='{"verdict":"y', finish="length")
    [out] = judge_on(server).generate([prompt()], [Verdict], max_new_tokens=4)
    assert out.text == '{"verdict":"y' and out.finished is False and out.error is None


def test_a_prompt_longer_than_the_context_is_unscored_before_any_request(server: FakeServer) -> None:
    server.models = [{"id": "judge-model", "max_model_len": 60}]
    judge = judge_on(server, tokenizer=CharTokenizer())
    out = judge.generate([prompt("x" * 100), prompt("y")], [Verdict, Verdict], max_new_tokens=16)
    assert out[0].error_kind == "too_long" and out[1].text == ANSWER
    assert len(server.posts()) == 1


# --- the API key --------------------------------------------------------------------------------

def test_the_api_key_is_sent_as_a_bearer_header_and_nowhere_else(server: FakeServer, monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("LJ_TEST_KEY", SECRET)
    server.actions["down"] = deque([503, 503])
    with caplog.at_level(logging.DEBUG):
        judge = judge_on(server, api_key_env="LJ_TEST_KEY", retries=1)
        out = judge.generate([prompt("down"), prompt("up")], [Verdict, Verdict], max_new_tokens=16)
    assert {headers.get("Authorization") for *_, headers in server.requests} == {f"Bearer {SECRET}"}
    assert out[0].error_kind == "judge_failed" and out[1].text == ANSWER
    assert "retrying" in caplog.text
    seen = [judge.identity, repr(judge), repr(judge.client), caplog.text,
            *(g.error or "" for g in out)]
    assert all(SECRET not in text for text in seen)
    monkeypatch.delenv("LJ_TEST_KEY")
    with pytest.raises(ValueError, match="the environment variable LJ_TEST_KEY is not set"):
        judge_on(server, api_key_env="LJ_TEST_KEY")


# --- label probabilities ------------------------------------------------------------------------

def test_label_probabilities_are_read_from_completion_logprobs(server: FakeServer) -> None:
    """vLLM's completions shape: token texts and top-logprob dicts; masked tokens at -9999."""
    tokens = ['{"', "verdict", '":', '"', "yes", '"}']
    tops: list[dict[str, float] | None] = [None] * len(tokens)
    tops[3] = {'"': math.log(0.5), '"yes': math.log(0.3), '"no': math.log(0.2)}  # the quote won: the
    # label is chosen at the next position, whose reading is the only one kept
    tops[4] = {"yes": math.log(0.75), "no": math.log(0.25), "maybe": -9999.0}
    lp = {"tokens": tokens, "token_logprobs": [0.0] * 6, "top_logprobs": tops, "text_offset": []}
    server.answer = lambda path, body: ok_reply(path, body, logprobs=lp)
    [out] = judge_on(server, tokenizer=CharTokenizer()).generate([prompt()], [Verdict], max_new_tokens=16)
    assert out.label_probs == ({"no": 0.25, "yes": 0.75},)


def test_logprobs_that_are_no_log_probabilities_leave_the_rows_readings_out(
        server: FakeServer, caplog: pytest.LogCaptureFixture) -> None:
    """A positive logprob at a label choice (+5 would be p = 148): none of the row's choices is
    read (so none is read out of its place), with a warning; where no label is chosen it is not read."""
    tokens = ['{"', "verdict", '":', '"yes', '"}']
    tops: list[dict[str, float] | None] = [None] * len(tokens)
    tops[3] = {'"yes': 5.0, '"no': math.log(0.2)}
    lp = {"tokens": tokens, "token_logprobs": [0.0] * 5, "top_logprobs": tops, "text_offset": []}
    server.answer = lambda path, body: ok_reply(path, body, logprobs=lp)
    with caplog.at_level(logging.WARNING):
        [out] = judge_on(server, tokenizer=CharTokenizer()).generate([prompt()], [Verdict], max_new_tokens=16)
    assert out.label_probs == () and out.text and "not log-probabilities" in caplog.text
    tops[0], tops[3] = {'{"': 5.0}, {'"yes': math.log(0.8), '"no': math.log(0.2)}
    [out] = judge_on(server, tokenizer=CharTokenizer()).generate([prompt()], [Verdict], max_new_tokens=16)
    assert out.label_probs == ({"no": 0.2, "yes": 0.8},)


def test_label_probabilities_are_read_from_chat_logprobs(server: FakeServer) -> None:
    """OpenAI's chat shape; a top list before the grammar (llama-server) keeps only label tokens."""
    content = [{"token": '{"verdict":', "logprob": 0.0, "top_logprobs": []},
               {"token": '"no', "logprob": math.log(0.3),
                "top_logprobs": [{"token": '"yes', "logprob": math.log(0.6)},
                                 {"token": '"no', "logprob": math.log(0.3)},
                                 {"token": " The", "logprob": math.log(0.1)}]},
               {"token": '"}', "logprob": 0.0, "top_logprobs": []}]
    server.kind = "openai"
    server.answer = lambda path, body: ok_reply(path, body, text='{"verdict":"no"}', logprobs={"content": content})
    [out] = judge_on(server).generate([prompt()], [Verdict], max_new_tokens=16)
    assert out.label_probs == ({"no": pytest.approx(1 / 3, abs=1e-6), "yes": pytest.approx(2 / 3, abs=1e-6)},)
    server.answer = ok_reply  # no logprobs in the reply: none read
    [plain] = judge_on(server).generate([prompt()], [Verdict], max_new_tokens=16)
    assert plain.label_probs == ()


# --- the engine choice --------------------------------------------------------------------------

def test_load_judge_builds_the_server_engine_and_refuses_other_engines_options(server: FakeServer) -> None:
    judge = load_judge(None, engine="server", base_url=server.url, concurrency=2)
    assert isinstance(judge, ServerJudge) and judge.concurrency == 2
    with pytest.raises(EngineOptionError, match="dtype is an option of the transformers engine"):
        load_judge(None, engine="server", base_url=server.url, dtype="auto")
    with pytest.raises(ValueError, match="needs base_url"):
        load_judge(None, engine="server")
    with pytest.raises(ValueError, match="concurrency must be a positive number"):
        load_judge(None, engine="server", base_url=server.url, concurrency=0)
