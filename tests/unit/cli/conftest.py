"""Fixtures of the CLI's unit tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from localjudge.scorers import registry

# The modules a test imports as a user's scorer code (a file, a package, an entry point's target).
USER_MODULES = ("localjudge_scorers_", "my_scorers", "exits_", "ep_")


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The scorer registry and the imported user modules as before the test."""
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(registry.SCORERS))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(USER_MODULES):
            del sys.modules[name]
