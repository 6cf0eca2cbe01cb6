"""`ray_session` without Ray (a stand-in module): usage stats are off while it lasts, whatever the
user's environment says, and the environment is as it was after."""

from __future__ import annotations

import os
import types
from typing import Any

import pytest

from localjudge.cluster import ray_session, runner


@pytest.mark.parametrize("before", ["1", None])
def test_usage_stats_are_forced_off_for_the_session(monkeypatch: pytest.MonkeyPatch, before: str | None) -> None:
    seen: list[Any] = []
    fake = types.SimpleNamespace(is_initialized=lambda: False, shutdown=lambda: seen.append("shutdown"),
                                 init=lambda **kwargs: seen.append((os.environ.get("RAY_USAGE_STATS_ENABLED"),
                                                                    kwargs["include_dashboard"])))
    monkeypatch.setattr(runner, "_import_ray", lambda: fake)
    if before is None:
        monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    else:
        monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", before)
    with ray_session() as ray:
        assert ray is fake and os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    assert seen == [("0", False), "shutdown"]
    assert os.environ.get("RAY_USAGE_STATS_ENABLED") == before
