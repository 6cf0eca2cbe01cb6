"""The engine tests' fake server: one a test (`server`), from `fake_server.serving`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.engines.fake_server import FakeServer, serving


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serving() as srv:
        yield srv
