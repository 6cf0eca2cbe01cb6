"""The server engine against a hostile server (`fake_server`'s hostile replies): what a server
sends back is untrusted. One HTTP rule for every request (`localjudge.engines.server.client`):
no redirect is followed, each attempt has one deadline, a reply has a size cap, the key never
comes back out, every number is finite; a bad reply costs its row, never the batch or the run."""

from __future__ import annotations

import json
import logging
import math
import time
import tracemalloc
from collections import deque
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from localjudge.engines.server import ServerError, ServerJudge
from localjudge.engines.server.client import Client
from localjudge.engines.server.judge import base_urls
from tests.unit.engines.fake_server import ANSWER, FakeServer, judge_on, ok_reply, serving

SECRET = "sk-hostile-echo-5b9e21"


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


def prompt(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def rows(*texts: str) -> tuple[list[list[dict[str, str]]], list[type[BaseModel]]]:
    return [prompt(t) for t in texts], [Verdict] * len(texts)


# --- redirects ----------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_refused_and_the_key_goes_nowhere_else(server: FakeServer, monkeypatch: pytest.MonkeyPatch,
                                                             status: int) -> None:
    monkeypatch.setenv("LJ_TEST_KEY", SECRET)
    with serving() as thief:
        judge = judge_on(server, api_key_env="LJ_TEST_KEY")
        server.actions["go"] = deque([("redirect", status, thief.url + "/completions")])
        out = judge.generate(*rows("go", "stay"), max_new_tokens=16)
        assert out[0].error_kind == "judge_failed" and f"HTTP {status}" in (out[0].error or "")
        assert "redirect" in (out[0].error or "") and out[1].text == ANSWER
        server.pages["/v1/models"] = ("redirect", status, thief.url + "/models")
        with pytest.raises(ServerError, match=f"HTTP {status}: .*redirect"):
            judge_on(server, api_key_env="LJ_TEST_KEY")
        assert not thief.requests, "a redirect was followed"
    assert len([b for _, b in server.posts() if b["messages"][-1]["content"] == "go"]) == 1  # not retried


# --- the key and the URL's credentials ----------------------------------------------------------

ECHOES = [("echo", 401, "json"), ("echo", 401, "text"), ("echo", 500, "json"), ("echo", 503, "text"),
          ("echo", 200, "text"), ("redirect", 302, f"http://127.0.0.1:9/?key={SECRET}")]


@pytest.mark.parametrize("action", ECHOES, ids=lambda a: "-".join(map(str, a[:3]))[:20])
def test_a_key_the_server_echoes_is_in_no_error_or_log(server: FakeServer, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture, action: Any) -> None:
    monkeypatch.setenv("LJ_TEST_KEY", SECRET)
    with caplog.at_level(logging.DEBUG):
        judge = judge_on(server, api_key_env="LJ_TEST_KEY", retries=1)
        server.default = action
        out = judge.generate(*rows("a", "b"), max_new_tokens=16)
    assert all(g.error_kind == "judge_failed" for g in out), out
    seen = [judge.identity, repr(judge), repr(judge.client), caplog.text, *(g.error or "" for g in out),
            *(g.text for g in out)]
    assert all(SECRET not in text for text in seen), seen
    assert all("redirect" in (g.error or "") for g in out) if action[0] == "redirect" else \
        all("***" in (g.error or "") for g in out)


def test_a_key_in_a_json_reply_is_redacted_wherever_it_lands(server: FakeServer,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LJ_TEST_KEY", SECRET)
    judge = judge_on(server, api_key_env="LJ_TEST_KEY")
    server.answer = lambda path, body: {**ok_reply(path, body, text=f'{{"verdict":"yes","k":"{SECRET}"}}'),
                                        "usage": {"completion_tokens": f"n{SECRET}"}}  # a bad count quoting it
    server.actions["ok"] = deque(["ok"])
    out = judge.generate(*rows("ok"), max_new_tokens=16)
    assert SECRET not in repr(out) and "unexpected reply" in (out[0].error or "")
    server.answer = lambda path, body: ok_reply(path, body, text=f'{{"verdict":"yes","k":"{SECRET}"}}')
    [plain] = judge.generate(*rows("ok"), max_new_tokens=16)
    assert plain.text == '{"verdict":"yes","k":"***"}'


def test_credentials_in_the_url_are_refused_without_being_shown(server: FakeServer) -> None:
    url = server.url.replace("http://", "http://judge:pa55word@")
    for make in (lambda: Client(url, api_key=None, timeout=5.0), lambda: ServerJudge(url),
                 lambda: base_urls([url, url])):
        with pytest.raises(ValueError, match="user:password@") as caught:
            make()
        assert "pa55word" not in str(caught.value)
    assert not server.requests


# --- broken replies cost their row, not the server ----------------------------------------------

def test_a_cut_off_reply_costs_its_row_not_the_batch(server: FakeServer) -> None:
    judge = judge_on(server, concurrency=1, retries=1)
    server.actions["row 0"] = deque(["cut", "cut"])
    out = judge.generate(*rows(*(f"row {i}" for i in range(8))), max_new_tokens=16)
    assert out[0].error_kind == "judge_failed" and "IncompleteRead" in (out[0].error or "")
    assert [g.text for g in out[1:]] == [ANSWER] * 7, [g.error for g in out]
    server.actions["once"] = deque(["cut"])  # cut once, then answered: retried
    assert judge.generate(*rows("once"), max_new_tokens=16)[0].text == ANSWER


@pytest.mark.parametrize("refusals", [1, 2])
def test_a_server_that_refused_is_asked_again_before_the_rows_are_given_up(server: FakeServer,
                                                                          refusals: int) -> None:
    judge = judge_on(server, concurrency=1, retries=0)
    post = judge.clients[0].post
    refused = iter([True] * refusals)

    def flaky(path: str, body: dict[str, Any], **options: Any) -> Any:
        if next(refused, False):  # the server restarting: its connections refused for a while
            raise ServerError("cannot reach 127.0.0.1: [Errno 111] Connection refused", retryable=True,
                              unreachable=True)
        return post(path, body, **options)

    judge.clients[0].post = flaky  # type: ignore[method-assign]
    out = judge.generate(*rows(*(f"row {i}" for i in range(8))), max_new_tokens=16)
    assert [g.text for g in out[1:]] == [ANSWER] * 7, [g.error for g in out]
    if refusals == 1:  # the refused row went back to the queue once, and was judged
        assert out[0].text == ANSWER and len(server.posts()) == 8
    else:  # refused again: unscored, not sent a third time
        assert out[0].error_kind == "judge_failed" and "Connection refused" in (out[0].error or "")


# --- one deadline per attempt -------------------------------------------------------------------

@pytest.mark.parametrize("action", ["trickle", "trickle-headers"])
def test_a_trickling_reply_is_cut_at_the_request_timeout(server: FakeServer, action: str) -> None:
    judge = judge_on(server, retries=0, request_timeout=0.6)
    server.actions["slow"] = deque([action])
    start = time.monotonic()
    out = judge.generate(*rows("slow", "fine"), max_new_tokens=16)
    assert time.monotonic() - start < 3.0
    assert out[0].error_kind == "judge_failed" and "within 0.6 s" in (out[0].error or "")
    assert out[1].text == ANSWER


# --- a size cap -----------------------------------------------------------------------------------

@pytest.mark.parametrize("action", ["huge", "huge-chunked"])
def test_a_huge_reply_is_refused_at_the_cap_without_being_held(server: FakeServer, action: str) -> None:
    judge = judge_on(server, retries=0)
    server.actions["huge"] = deque([action])
    tracemalloc.start()
    try:
        out = judge.generate(*rows("huge", "fine"), max_new_tokens=16)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out[0].error_kind == "judge_failed" and "larger than" in (out[0].error or ""), out[0].error
    assert (out[0].error or "").count("\n") == 0 and out[1].text == ANSWER
    assert peak < 20 << 20, f"{peak / 2**20:.0f} MiB held for one reply"


# --- every number finite --------------------------------------------------------------------------

def raw(path: str, key: str, value: str) -> bytes:
    """An honest reply's JSON with one count written as `value` (`Infinity` and `NaN` are not JSON)."""
    return json.dumps(ok_reply(path, {})).replace(f'"{key}": ', f'"{key}": {value}, "was": ').encode()


@pytest.mark.parametrize(("key", "value"), [("completion_tokens", "Infinity"), ("completion_tokens", "-Infinity"),
                                            ("prompt_tokens", "NaN"), ("completion_tokens", "1e400"),
                                            ("completion_tokens", "123456789012345678901234567890"),
                                            ("completion_tokens", "-5")])
def test_a_number_out_of_range_costs_its_row_only(server: FakeServer, key: str, value: str) -> None:
    judge = judge_on(server)
    server.actions["bad"] = deque([("raw", raw("/v1/chat/completions", key, value))])
    out = judge.generate(*rows("bad", "fine"), max_new_tokens=16)
    assert out[0].error_kind == "judge_failed" and out[0].error and "\n" not in out[0].error
    assert out[1].text == ANSWER


def label_reply(yes: float, no: float) -> Any:
    content = [{"token": '{"verdict":', "logprob": 0.0, "top_logprobs": []},
               {"token": '"yes', "logprob": yes, "top_logprobs": [{"token": '"yes', "logprob": yes},
                                                                   {"token": '"no', "logprob": no}]},
               {"token": '"}', "logprob": 0.0, "top_logprobs": []}]
    return lambda path, body: ok_reply(path, body, logprobs={"content": content})


@pytest.mark.parametrize("yes", [1000.0, 5.0, 1e300])
def test_a_logprob_that_is_no_log_probability_leaves_prob_score_absent(server: FakeServer, yes: float) -> None:
    server.kind = "openai"
    judge = judge_on(server)
    server.answer = label_reply(yes, math.log(0.25))
    out = judge.generate(*rows("a", "b"), max_new_tokens=16)
    assert [g.text for g in out] == [ANSWER, ANSWER] and all(g.error is None for g in out)
    assert [g.label_probs for g in out] == [(), ()]
    server.answer = label_reply(math.log(0.75), math.log(0.25))  # honest: read as before
    assert judge.generate(*rows("a"), max_new_tokens=16)[0].label_probs == ({"yes": 0.75, "no": 0.25},)


def test_label_probabilities_totalling_more_than_one_give_no_reading(server: FakeServer,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """Issue 57 N8: candidates of total 3 (each a logprob of 0) were renormalised into a reading."""
    server.kind = "openai"
    judge = judge_on(server)
    server.answer = label_reply(0.0, 0.0)  # "yes" and "no" each probability 1
    with caplog.at_level(logging.WARNING):
        out = judge.generate(*rows("a"), max_new_tokens=16)
    assert out[0].text == ANSWER and out[0].error is None and out[0].label_probs == ()
    assert "totalling more than 1" in caplog.text


def test_the_grammar_probe_with_a_bad_logprob_measures_nothing(server: FakeServer,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    logprobs = {"tokens": ["{"], "top_logprobs": [{"{": 1000.0, "\n": 0.0}], "token_logprobs": [0.0]}
    server.probe = lambda path, body: ok_reply(path, body, text="{", logprobs=logprobs)
    with caplog.at_level(logging.WARNING):
        judge = judge_on(server)
    assert judge.grammar.free_whitespace is None and "grammar probe" in caplog.text
    server.probe = lambda path, body: (200, {"choices": [{"text": "{", "logprobs": {
        "tokens": ["{"], "top_logprobs": [{"{": 1e300}]}}]})
    assert judge_on(server).grammar.free_whitespace is None
