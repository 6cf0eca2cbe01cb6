"""What `--ray ADDRESS` names and what reaching it needs (`localjudge.cluster.address`), without Ray:
real sockets on loopback stand in for a cluster's GCS port."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from localjudge.cluster import address
from localjudge.cluster.address import Target


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:6379", Target("127.0.0.1", 6379, False)),
    ("ray://head.example:10001", Target("head.example", 10001, True)),
    ("[::1]:6379", Target("::1", 6379, False)),
    ("localhost:6379", Target("localhost", 6379, False)),
    (None, None), ("", None), ("auto", None), ("local", None),
    ("head-without-port", None), ("host:port", None),
])
def test_an_address_names_a_host_and_port_or_is_left_to_ray(text: str | None, expected: Target | None) -> None:
    assert address.target(text) == expected


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                                ("localhost", True), ("10.0.0.5", False), ("head", False)])
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert Target(host, 1, False).loopback is loopback


@pytest.fixture
def listener(request: pytest.FixtureRequest) -> Iterator[int]:
    """A socket listening on the host the test names (127.0.0.1 by default): its port."""
    with socket.socket() as server:
        server.bind((getattr(request, "param", "127.0.0.1"), 0))
        server.listen()
        yield int(server.getsockname()[1])


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_port_that_accepts_is_reachable(listener: int) -> None:
    assert address.unreachable(Target("127.0.0.1", listener, False)) is None


def test_a_port_where_nothing_listens_is_one_line_naming_it_and_the_fix() -> None:
    port = closed_port()
    why = address.unreachable(Target("127.0.0.1", port, False), seconds=1)
    assert why is not None and f"127.0.0.1:{port}" in why and "ray start --head" in why and "\n" not in why


def test_a_cluster_on_loopback_only_is_told_from_one_on_every_interface(listener: int) -> None:
    # 127.0.0.2 stands in for the machine's own address: nothing bound to 127.0.0.1 answers there
    assert address.bound_to_loopback(Target("127.0.0.1", listener, False), node_ip="127.0.0.2")
    assert not address.bound_to_loopback(Target("127.0.0.1", listener, False), node_ip="127.0.0.1")
    assert not address.bound_to_loopback(Target("127.0.0.1", listener, True), node_ip="127.0.0.2")  # ray://
    assert not address.bound_to_loopback(Target("10.0.0.5", listener, False), node_ip="127.0.0.2")


@pytest.mark.parametrize("listener", ["0.0.0.0"], indirect=True)
def test_a_cluster_on_every_interface_is_not_loopback_bound(listener: int) -> None:
    assert not address.bound_to_loopback(Target("127.0.0.1", listener, False), node_ip="127.0.0.2")


def test_this_machine_is_loopback_or_its_own_address() -> None:
    assert address.on_this_machine(Target("localhost", 1, False), "10.0.0.5")
    assert address.on_this_machine(Target("10.0.0.5", 1, False), "10.0.0.5")
    assert not address.on_this_machine(Target("10.0.0.6", 1, False), "10.0.0.5")


def fake_ray(calls: list[bool]) -> Any:
    """A `ray` whose token set-up enables token mode as Ray's does when a token is stored."""
    def maybe_enable(warn_if_disabled: bool = True) -> bool:
        calls.append(warn_if_disabled)
        os.environ[address.AUTH_MODE] = "token"
        return True
    setup = SimpleNamespace(__name__="fake.setup", maybe_enable_token_auth_if_token_available=maybe_enable)
    return SimpleNamespace(_private=SimpleNamespace(authentication=SimpleNamespace(authentication_token_setup=setup)))


def test_token_mode_holds_for_the_session_and_is_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(address.AUTH_MODE, raising=False)
    calls: list[bool] = []
    with address.local_token_auth(fake_ray(calls)):
        assert os.environ[address.AUTH_MODE] == "token"
    assert calls == [False] and address.AUTH_MODE not in os.environ


def test_a_mode_the_user_set_is_theirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(address.AUTH_MODE, "disabled")
    calls: list[bool] = []
    with address.local_token_auth(fake_ray(calls)):
        assert os.environ[address.AUTH_MODE] == "disabled"
    assert calls == [] and os.environ[address.AUTH_MODE] == "disabled"


def test_a_ray_without_token_auth_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(address.AUTH_MODE, raising=False)
    with address.local_token_auth(SimpleNamespace(_private=SimpleNamespace())):
        assert address.AUTH_MODE not in os.environ
