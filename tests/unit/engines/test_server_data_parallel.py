"""The server engine on several servers at once (data parallel), against in-process fake servers:
rows spread over them, `concurrency` in flight per server, a server that dies mid-call losing
only the rows it held, a dead server skipped until it answers again, every row unscored (never
raised) when none is left, and servers that disagree refused at start."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from localjudge.engines import load_judge
from localjudge.engines.server import ServerJudge
from localjudge.engines.server.judge import base_urls
from tests.unit.engines.fake_server import ANSWER, FakeServer, serving


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


def prompts(n: int) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"row {i}"}] for i in range(n)]


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    with ExitStack() as stack:
        yield [stack.enter_context(serving()) for _ in range(3)]


def judge_on(servers: list[FakeServer], **options: Any) -> ServerJudge:
    return ServerJudge([s.url for s in servers], **{"backoff": 0.0, "retries": 1, **options})


def test_rows_are_spread_over_the_servers_with_concurrency_per_server(servers: list[FakeServer]) -> None:
    for srv in servers:
        srv.delay = 0.05
    judge = judge_on(servers, concurrency=2)
    out = judge.generate(prompts(18), [Verdict] * 18, max_new_tokens=16)
    assert [g.text for g in out] == [ANSWER] * 18
    sent = [len(srv.posts()) for srv in servers]
    assert sum(sent) == 18 and all(n >= 3 for n in sent), sent  # each server took a share
    assert all(srv.peak <= 2 for srv in servers) and max(srv.peak for srv in servers) == 2
    rows = sorted(body["messages"][-1]["content"] for srv in servers for _, body in srv.posts())
    assert rows == sorted(f"row {i}" for i in range(18))  # each row sent once


def test_the_hosts_are_named_in_the_identity_in_any_order(servers: list[FakeServer]) -> None:
    a, b = servers[:2]
    forward, backward = judge_on([a, b]), judge_on([b, a])
    assert forward.identity == backward.identity
    hosts = "+".join(sorted(s.url.split("/")[2] for s in (a, b)))
    assert forward.identity.startswith(f"judge-model@{hosts}:vllm-0.32.0:greedy")
    assert judge_on([a]).identity != forward.identity


def test_a_server_dying_mid_call_loses_only_the_rows_it_held(servers: list[FakeServer]) -> None:
    live, dying = servers[:2]
    live.delay = 0.05
    judge = judge_on([live, dying], concurrency=2)
    dying.answer = lambda path, body: _die(dying)  # its first request kills it
    out = judge.generate(prompts(12), [Verdict] * 12, max_new_tokens=16)
    lost = [g for g in out if g.error is not None]
    assert len(lost) <= 2, [g.error for g in out]  # at most the rows in flight there (a refused row goes to live)
    assert all(g.error_kind == "judge_failed" and dying.url.split("/")[2] in (g.error or "") for g in lost)
    assert [g.text for g in out if g.error is None] == [ANSWER] * (12 - len(lost))
    assert len(live.posts()) == 12 - len(lost)
    # the next call asks the dead server once, then sends it nothing
    again = judge.generate(prompts(4), [Verdict] * 4, max_new_tokens=16)
    assert [g.text for g in again] == [ANSWER] * 4 and len(live.posts()) == 16 - len(lost)


def _die(srv: FakeServer) -> dict[str, Any]:
    threading.Thread(target=lambda: (srv.shutdown(), srv.server_close()), daemon=True).start()
    raise ConnectionResetError("killed")  # the handler's connection closes unanswered


def test_a_dead_server_takes_rows_again_once_it_answers(servers: list[FakeServer]) -> None:
    a, b = servers[:2]
    a.delay = 0.02
    judge = judge_on([a, b], concurrency=1)
    port = b.server_address[1]
    b.shutdown()
    b.server_close()
    first = judge.generate(prompts(6), [Verdict] * 6, max_new_tokens=16)
    assert sum(g.error is None for g in first) == 6  # b refused its row, then was taken out: a judged it
    assert judge.generate(prompts(2), [Verdict] * 2, max_new_tokens=16)[0].error is None  # b still down: skipped
    with serving(port) as back:  # b restarted on its port
        out = judge.generate(prompts(6), [Verdict] * 6, max_new_tokens=16)
        assert all(g.error is None for g in out) and back.posts(), "the restarted server took no rows"


def test_with_every_server_gone_the_rows_are_unscored_not_raised(servers: list[FakeServer]) -> None:
    judge = judge_on(servers[:2], concurrency=1)
    for srv in servers[:2]:
        srv.shutdown()
        srv.server_close()
    out = judge.generate(prompts(5), [Verdict] * 5, max_new_tokens=16)
    assert all(g.error_kind == "judge_failed" and g.text == "" for g in out)
    assert sum("not sent, no server left" in (g.error or "") for g in out) >= 3
    later = judge.generate(prompts(2), [Verdict] * 2, max_new_tokens=16)  # both still down: none sent
    assert all("not sent, no server left" in (g.error or "") and "cannot reach" in (g.error or "") for g in later)


def test_a_slow_row_does_not_take_its_server_out(servers: list[FakeServer]) -> None:
    """A timeout is the row's, not the server's: the rows after it are still sent."""
    from collections import deque

    srv = servers[0]
    srv.actions["row 0"] = deque(["sleep", "sleep"])
    out = judge_on([srv], concurrency=1, request_timeout=0.3).generate(prompts(3), [Verdict] * 3, max_new_tokens=16)
    assert out[0].error_kind == "judge_failed" and "within 0.3 s" in (out[0].error or "")
    assert [g.text for g in out[1:]] == [ANSWER, ANSWER]


def test_servers_that_disagree_are_refused(servers: list[FakeServer]) -> None:
    a, b, c = servers
    b.models = [{"id": "judge-model", "max_model_len": 2048}]
    with pytest.raises(ValueError, match=r"the servers differ: .* serves judge-model \(vllm-0.32.0, context 4096\) "
                                         r"but .* serves judge-model \(vllm-0.32.0, context 2048\)"):
        judge_on([a, b])
    c.kind = "sglang"
    with pytest.raises(ValueError, match="the servers differ"):
        judge_on([a, c])
    b.models = [{"id": "judge-model", "max_model_len": 4096}]
    b.server_info = {"vllm_config": {"structured_outputs_config": {"backend": "xgrammar"}}}
    with pytest.raises(ValueError, match="constrain answers differently: .*grammar backend not shown.*xgrammar"):
        judge_on([a, b])


def test_urls_come_as_a_list_or_separated_by_commas(servers: list[FakeServer]) -> None:
    a, b = servers[:2]
    assert base_urls(f"{a.url}, {b.url}") == base_urls([a.url, b.url]) == base_urls([f"{a.url},{b.url}"])
    judge = load_judge(None, engine="server", base_url=f"{a.url},{b.url}")
    assert isinstance(judge, ServerJudge) and [c.host for c in judge.clients] == [a.url.split("/")[2],
                                                                                  b.url.split("/")[2]]
    with pytest.raises(ValueError, match="given twice"):
        base_urls([a.url, a.url])
    with pytest.raises(ValueError, match="at least one server URL"):
        base_urls(" , ")
    with pytest.raises(ValueError, match="a list of URLs"):
        base_urls(8000)  # type: ignore[arg-type]
