"""What the server engine reads of a server's grammar setup into the judge's identity, against the
in-process fake server: vLLM's dev-mode ``/server_info`` (backend, logits processors) and the
grammar probe's logprobs (whitespace allowed between JSON tokens or not). The probe replies are
shaped as vLLM 0.32's CPU server answered them (docs/servers.md): masked tokens at -9999."""

from __future__ import annotations

import json
import logging
import math
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from localjudge.engines.server import ServerError
from localjudge.engines.server.dialects import GUARD, GUARD_ARG
from localjudge.engines.server.discovery import PROBE_PROMPT, PROBE_TOKENS
from localjudge.repetition import MAX_REPEAT_WORDS
from tests.unit.engines.fake_server import CharTokenizer, FakeServer, judge_on, ok_reply

MASKED = -9999.0
# vLLM 0.32, SmolLM2, localjudge's spec (x-guidance: compact): one allowed token at most positions
COMPACT = [("{\"", {"{\"": 0.0, "<reponame>": MASKED, " ": MASKED}), ("ver", {"ver": 0.0, "\n": MASKED}),
           ("dict", {"dict": 0.0}), ("\":\"", {"\":\"": 0.0, " \"": MASKED}),
           ("yes", {"yes": -0.44, "no": -1.57, "y": -2.44, "\n": MASKED}), ("\"}", {"\"}": 0.0, "\n": MASKED})]
# the same schema where the backend ignores x-guidance: whitespace tokens allowed after "{"
FREE = [("{", {"{": -0.23, "{\"": -1.6, "\"": MASKED}), ("\n ", {"\n ": -0.84, "\n": -1.34, " \"": -6.84}),
        (" \"", {" \"": 0.0, "\n   ": -11.44}), ("ver", {"ver": 0.0})]


def probe_reply(positions: list[tuple[str, dict[str, float]]]) -> Any:
    logprobs = {"tokens": [t for t, _ in positions], "top_logprobs": [top for _, top in positions],
                "token_logprobs": [0.0] * len(positions), "text_offset": []}
    return lambda path, body: ok_reply(path, body, text="".join(t for t, _ in positions), logprobs=logprobs)


def info(backend: str = "guidance", processors: list[str] | None = None) -> dict[str, Any]:
    return {"vllm_config": {"structured_outputs_config": {"backend": backend, "disable_any_whitespace": False},
                            "model_config": {"logits_processors": processors}}, "vllm_env": {}}


def test_the_server_info_page_gives_the_backend_and_the_repetition_guard(server: FakeServer) -> None:
    server.server_info = info("guidance", [GUARD])
    judge = judge_on(server)
    assert judge.grammar.backend == "guidance" and judge.grammar.repeat_guard
    assert f":greedy+repeat-guard-{MAX_REPEAT_WORDS}+ctx-4096+server-template" in judge.identity
    assert "+grammar-" not in judge.identity
    server.server_info = info("xgrammar", None)
    other = judge_on(server)
    assert other.identity.endswith(":greedy+ctx-4096+grammar-xgrammar+server-template")


def test_without_the_page_nothing_is_claimed(server: FakeServer) -> None:
    judge = judge_on(server)  # no /server_info (no dev mode), a probe reply without logprobs
    assert judge.grammar.backend is None and judge.grammar.free_whitespace is None
    assert not judge.grammar.repeat_guard and judge.identity.endswith(":vllm-0.32.0:greedy+ctx-4096+server-template")


def test_the_probe_finds_whitespace_the_grammar_lets_through(server: FakeServer,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    server.probe = probe_reply(COMPACT)
    assert judge_on(server).grammar.free_whitespace is False
    server.probe = probe_reply(FREE)
    with caplog.at_level(logging.WARNING):
        judge = judge_on(server)
    assert judge.grammar.free_whitespace is True and "+json-whitespace" in judge.identity
    assert "whitespace between JSON tokens" in caplog.text and '"backend": "guidance"' in caplog.text


def test_the_probe_is_one_small_request_in_the_judges_own_dialect(server: FakeServer) -> None:
    server.probe = probe_reply(COMPACT)
    judge_on(server, tokenizer=CharTokenizer())
    [body] = server.probes()
    assert body["prompt"] == [ord(c) for c in CharTokenizer().apply_chat_template(PROBE_PROMPT)]
    assert body["max_tokens"] == PROBE_TOKENS and body["logprobs"] == 20 and body["temperature"] == 0
    assert body["structured_outputs"]["json"]["x-guidance"]["whitespace_flexible"] is False
    assert not server.posts()
    for kind in ("sglang", "llama-cpp", "ollama", "openai"):  # only vLLM's logprobs are read after the mask
        server.kind = kind
        judge_on(server)
        assert len(server.probes()) == 1, kind


def test_a_failed_probe_measures_nothing_and_is_not_fatal(server: FakeServer, caplog: pytest.LogCaptureFixture) -> None:
    server.probe = lambda path, body: {"error": "bad"}  # a reply of another shape
    assert judge_on(server).grammar.free_whitespace is None
    server.probe = lambda path, body: (400, {"error": {"message": "logprobs 20 exceeds max_logprobs 5"}})
    with caplog.at_level(logging.WARNING):
        judge = judge_on(server)
    assert judge.grammar.free_whitespace is None and "+json-whitespace" not in judge.identity
    assert "the grammar probe of 127.0.0.1" in caplog.text and "max_logprobs 5" in caplog.text


def test_every_vllm_request_switches_the_repetition_guard_on(server: FakeServer) -> None:
    from localjudge.engines.vllm import judge as vllm_judge  # light: vLLM itself is imported only on load

    assert (GUARD, GUARD_ARG) == (vllm_judge.GUARD, vllm_judge.GUARD_ARG)
    judge = judge_on(server)
    from pydantic import BaseModel

    class Claims(BaseModel):
        claims: list[str]

    judge.generate([[{"role": "user", "content": "x"}]], [Claims], max_new_tokens=8)
    [(_, body)] = server.posts()
    assert body["vllm_xargs"] == {GUARD_ARG: True}
    server.kind = "sglang"
    judge_on(server).generate([[{"role": "user", "content": "x"}]], [Claims], max_new_tokens=8)
    assert "vllm_xargs" not in server.posts()[-1][1]


# --- what a server lists is checked before it is trusted ------------------------------------------

@pytest.mark.parametrize("value", [-5, 0, [4096], "4096", True, 4096.5, 1e300, 10**12])
def test_a_context_length_that_is_no_length_is_ignored_with_a_warning(server: FakeServer, value: Any,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    server.models = [{"id": "judge-model", "max_model_len": value}]
    with caplog.at_level(logging.WARNING):
        judge = judge_on(server)
    assert judge.context_window is None and "+ctx" not in judge.identity
    assert "max_model_len" in caplog.text and "ignored" in caplog.text


def test_llama_servers_context_length_is_checked_alike(server: FakeServer, caplog: pytest.LogCaptureFixture) -> None:
    server.kind = "llama-cpp"
    server.models = [{"id": "judge-model"}]
    props = {"default_generation_settings": {"n_ctx": [2048]}, "build_info": "b1"}
    server.pages["/props"] = ("raw", json.dumps(props).encode())
    with caplog.at_level(logging.WARNING):
        assert judge_on(server).context_window is None
    assert "n_ctx" in caplog.text


def test_an_infinite_context_length_is_a_one_line_error(server: FakeServer) -> None:
    server.models = [{"id": "judge-model", "max_model_len": math.inf}]  # written as Infinity, not JSON
    with pytest.raises(ServerError, match="Infinity") as caught:
        judge_on(server)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["judge\nlocaljudge: error: forged", "judge-\ud800", "judge\x1b[31m-red"])
def test_a_model_id_is_shown_escaped_and_sent_as_listed(server: FakeServer, name: str,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    server.models = [{"id": name, "max_model_len": 4096}]
    with caplog.at_level(logging.DEBUG):
        judge = judge_on(server)
        judge.generate([[{"role": "user", "content": "x"}]], [_Verdict], max_new_tokens=8)
    assert judge.identity.isprintable() and "\\" in judge.identity.partition("@")[0]
    assert all(record.getMessage().isprintable() for record in caplog.records)
    [(_, body)] = server.posts()
    assert body["model"] == name  # the server is asked for its own id
    server.models.append({"id": "other\nforged"})
    with pytest.raises(ValueError) as caught:
        judge_on(server)
    assert str(caught.value).isprintable()


class _Verdict(BaseModel):
    verdict: Literal["yes", "no"]
