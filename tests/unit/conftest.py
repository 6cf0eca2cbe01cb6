"""The unit tier runs on the scripted FakeJudge only: it imports neither torch nor transformers.

A unit test module that imports either at collection, or a unit test that imports either while it
runs (directly, or through the code it calls: an engine's module, `TransformersJudge.load`),
fails the session, naming the first such module or test. Code that needs them belongs in
tests/engines/ (no trained model) or tests/model/ (the default model); a test that only needs a
judge to load stands the engine in (`tests.fakes.stand_in_engine`). A fresh process a test starts
(`subprocess`) is its own business. Where torch was already imported before a unit test (another
tier ran first in the same session), that test cannot be checked, and is not blamed.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path

import pytest

HEAVY = ("torch", "transformers")
UNIT = Path(__file__).resolve().parent
imported_by: dict[str, str] = {}  # heavy module -> the unit module or test that first imported it


def _note(where: str) -> None:
    for name in HEAVY:
        if name in sys.modules and name not in imported_by:
            imported_by[name] = where


def _in_unit_tier(path: Path) -> bool:
    return path.resolve().is_relative_to(UNIT)


def _loaded() -> set[str]:
    return {name for name in HEAVY if name in sys.modules}


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, None, None]:
    before = _loaded()
    yield
    if isinstance(collector, pytest.Module) and _in_unit_tier(collector.path) and _loaded() - before:
        _note(f"collecting {collector.nodeid}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    before = _loaded()
    yield
    if _in_unit_tier(item.path) and _loaded() - before:
        _note(item.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not imported_by:
        return
    found = "; ".join(f"{name} by {where}" for name, where in imported_by.items())
    session.config.get_terminal_writer().line(
        f"\ntests/unit/conftest.py: the unit tier imported {found}: move that test to tests/engines/ or "
        "tests/model/, or stand the engine in (tests.fakes.stand_in_engine)", red=True, bold=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
