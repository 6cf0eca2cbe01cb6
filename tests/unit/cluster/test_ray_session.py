"""`ray_session` without Ray (a stand-in module): usage stats are off while it lasts, whatever the
user's environment says, and the environment is as it was after; a local cluster it starts itself
listens on 127.0.0.1 only, a cluster the user names is left as it is; the actors' output reaches
the driver only at DEBUG."""

from __future__ import annotations

import logging
import os
import types
from typing import Any

import pytest

from localjudge.cluster import address as cluster_address
from localjudge.cluster import ray_session, runner

LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def fake_ray(seen: list[Any], found: str | None = None) -> Any:
    """A stand-in `ray` whose `init` records what it was given and the environment it ran in;
    `found` is the cluster Ray's own lookup finds (None: it would start a new one)."""
    constants = types.SimpleNamespace(ENABLE_RAY_CLUSTER=True)
    services = types.SimpleNamespace(canonicalize_bootstrap_address=lambda address: found if address is None
                                     else address, get_node_ip_address=lambda: "10.0.0.9")

    def init(**kwargs: Any) -> None:
        seen.append({**kwargs, "stats": os.environ.get("RAY_USAGE_STATS_ENABLED"),
                     "local_only": os.environ.get(LOCAL_ONLY), "cluster_mode": constants.ENABLE_RAY_CLUSTER})

    return types.SimpleNamespace(is_initialized=lambda: False, shutdown=lambda: seen.append("shutdown"), init=init,
                                 _private=types.SimpleNamespace(services=services, ray_constants=constants))


@pytest.mark.parametrize("before", ["1", None])
def test_usage_stats_are_forced_off_for_the_session(monkeypatch: pytest.MonkeyPatch, before: str | None) -> None:
    seen: list[Any] = []
    fake = fake_ray(seen)
    monkeypatch.setattr(runner, "_import_ray", lambda: fake)
    if before is None:
        monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    else:
        monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", before)
    with ray_session() as ray:
        assert ray is fake and os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    assert [s["stats"] if isinstance(s, dict) else s for s in seen] == ["0", "shutdown"]
    assert seen[0]["include_dashboard"] is False
    assert os.environ.get("RAY_USAGE_STATS_ENABLED") == before


def test_a_local_cluster_it_starts_listens_on_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    fake = fake_ray(seen)
    monkeypatch.setattr(runner, "_import_ray", lambda: fake)
    monkeypatch.delenv(LOCAL_ONLY, raising=False)
    with ray_session():
        pass
    init = seen[0]
    assert init["_node_ip_address"] == "127.0.0.1" and init["address"] is None
    assert init["local_only"] == "0" and init["cluster_mode"] is False  # Ray's processes and this one: loopback
    assert LOCAL_ONLY not in os.environ and fake._private.ray_constants.ENABLE_RAY_CLUSTER is True  # as before


@pytest.mark.parametrize(("address", "found"), [("auto", None), ("ray://head:10001", None), (None, "10.0.0.5:6379")])
def test_a_cluster_the_user_names_or_ray_finds_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch, address: str | None,
                                                              found: str | None) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(runner, "_import_ray", lambda: fake_ray(seen, found))
    monkeypatch.setattr(cluster_address, "_accepts", lambda host, port, seconds: True)  # a cluster there
    monkeypatch.delenv(LOCAL_ONLY, raising=False)
    with ray_session(address):
        pass
    init = seen[0]
    assert "_node_ip_address" not in init and init["address"] == address
    assert init["local_only"] is None and init["cluster_mode"] is True


def test_the_actors_output_reaches_the_driver_only_at_debug(monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(runner, "_import_ray", lambda: fake_ray(seen))
    caplog.set_level(logging.WARNING, logger=runner.log.name)
    with ray_session():
        pass
    caplog.set_level(logging.DEBUG, logger=runner.log.name)  # `localjudge --debug`
    with ray_session():
        pass
    assert [s["log_to_driver"] for s in seen if isinstance(s, dict)] == [False, True]
