"""The Mastra-storage tier: a small Mastra app (tests/storage/node_scripts/mastra_app.mjs: three
agents, tool calls with results and a failing one, a thread, a dataset and an experiment, a mock
model, observability on) writes its runs once a session to (a) a LibSQL file and (b) a PostgreSQL
server the tier starts (Debian's postgresql, 127.0.0.1, a temporary cluster); localjudge scores
them and Mastra's own storage API (node_scripts/read_scores.mjs) reads the scores back.

Without its set-up (the Node harness from scripts/setup_node.sh, PostgreSQL from
scripts/setup_postgres.sh, psycopg from the `postgres` extra) the tier is skipped with a note;
asked for explicitly (``-m storage``) it fails instead.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.storage.pg_server import PgServer, pg_bin, start_server

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "differential" / "node"
NODE = HARNESS / "node_modules" / ".bin" / "node"
SCRIPTS = ROOT / "tests" / "storage" / "node_scripts"


def missing_setup() -> str | None:
    if not NODE.exists() or not (HARNESS / "node_modules" / "@mastra" / "libsql").exists() \
            or not (HARNESS / "node_modules" / "@mastra" / "pg").exists():
        return "the Node harness lacks Mastra's storage packages: run scripts/setup_node.sh"
    if pg_bin() is None:
        return "PostgreSQL is not installed: run scripts/setup_postgres.sh"
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed: pip install -e '.[postgres]'"
    return None


def node(script: str, *args: str, stdin: Any = None, timeout: float = 120) -> Any:
    """Run one of the tier's Node scripts with the harness's Node; its stdout as JSON."""
    done = subprocess.run([str(NODE), str(SCRIPTS / script), *args], capture_output=True, text=True,
                          input=None if stdin is None else json.dumps(stdin), timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{script} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def storage_ready(request: pytest.FixtureRequest) -> None:
    why = missing_setup()
    if why is not None:
        markexpr = request.config.getoption("markexpr", "") or ""
        if "storage" in markexpr and "not storage" not in markexpr:
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="session")
def pg_server(storage_ready: None) -> Iterator[PgServer]:
    server = start_server()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def libsql_app(storage_ready: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The app's LibSQL file (written once a session; tests copy it) and what the app reported."""
    path = tmp_path_factory.mktemp("libsql") / "mastra.db"
    report = node("mastra_app.mjs", f"file:{path}")
    return {"path": path, **report}


@pytest.fixture
def libsql_copy(libsql_app: dict[str, Any], tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """A fresh copy of the app's LibSQL file for one test: (its URL, the app's report)."""
    copy = tmp_path / "mastra.db"
    # SQLite's backup, not a file copy: the app may exit with its writes still in mastra.db-wal
    # (LibSQL runs in WAL mode), which a copy of mastra.db alone would lose
    with closing(sqlite3.connect(libsql_app["path"])) as source, closing(sqlite3.connect(copy)) as target:
        source.backup(target)
    return f"file:{copy}", libsql_app


@pytest.fixture(scope="session")
def pg_base(pg_server: PgServer) -> dict[str, Any]:
    """The app's runs written once to a database `mastra_base`, which tests copy (as a template)."""
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as db:
        db.execute("CREATE DATABASE mastra_base")
    report = node("mastra_app.mjs", pg_server.url.rsplit("/", 1)[0] + "/mastra_base")
    return report


@pytest.fixture
def pg_copy(pg_server: PgServer, pg_base: dict[str, Any], request: pytest.FixtureRequest) -> tuple[str, dict]:
    """A fresh copy of the app's PostgreSQL database for one test: (its URL, the app's report)."""
    import psycopg

    name = f"t_{abs(hash(request.node.nodeid)) % 10 ** 10}"
    with psycopg.connect(pg_server.url, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")
        db.execute(f"CREATE DATABASE {name} TEMPLATE mastra_base")
    return pg_server.url.rsplit("/", 1)[0] + f"/{name}", pg_base


@pytest.fixture(params=["libsql", "postgres"])
def store(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    """Each backend in turn: a fresh copy of the app's store (its URL, the app's report)."""
    return request.getfixturevalue("libsql_copy" if request.param == "libsql" else "pg_copy")
