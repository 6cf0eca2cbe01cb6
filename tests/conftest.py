"""Test tiers, one folder each; a test's folder gives its marker:

- tests/unit/: the scripted FakeJudge only; no torch, no transformers (tests/unit/conftest.py
  fails the session if a unit test imports either). Seconds to a couple of minutes.
- tests/engines/ (`slow`): torch and transformers without a trained model: the decode loop
  against `generate` on a random-weight family fixture, real tokenizers, loading arguments.
- tests/model/ (`slow`): the real default model (SmolLM2-135M, models/smollm2-135m-instruct).
- tests/families/ (`slow`): every model family's fixture (models/fixtures).
- tests/vllm/ (`vllm`): the vLLM engine end to end, in .venv-vllm.
- tests/differential/ (`differential`): Mastra's published scorers (Node.js, tests/differential/node,
  set up by scripts/setup_node.sh) beside localjudge's on the same judge answers.
- tests/storage/ (`storage`): a Mastra app's storage (a LibSQL file and a PostgreSQL server the tier
  starts) scored by localjudge, the scores read back through Mastra's own storage API.
- tests/ray/ (`ray`): `localjudge score --ray` on a local Ray cluster the tier starts (the ray extra,
  scripts/setup_ray.sh): the same file as without Ray, actors killed, runs interrupted and resumed.
- tests/server/ (`server`): the server engine against a real vLLM server that the tier starts
  from .venv-vllm (`localjudge score --engine server`, a server killed mid-run, resume).
- tests/serve/ (`serve`): `localjudge serve` on the default model, started by the tier, with real
  clients (Mastra's own scorers under Node, the `openai` client), a client gone mid-stream, SIGTERM.
- tests/llama_server/ (`llama`): the server engine's `llama-cpp` dialect against a real llama.cpp
  `llama-server` (built into .llama-server by scripts/setup_llama_server.sh), started by the tier.

`pytest tests/unit` (or `pytest -m "not slow and not vllm and not server and not differential and not storage and
not ray and not llama and not serve"`)
runs the unit tier alone;
scripts/check.sh runs each tier as its own step. A marker written on a test still counts (a
`vllm` test in tests/unit runs in the vLLM tier too).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeJudgeFactory, make_fake_judge

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
DEFAULT_MODEL = ROOT / "models" / "smollm2-135m-instruct"
EXAMPLES = ROOT / "examples"
# The folder of a test -> the marker it gets: `-m "not slow"` keeps the unit tier (and vLLM's).
FOLDER_MARKERS = {"engines": "slow", "model": "slow", "families": "slow", "vllm": "vllm", "server": "server",
                  "differential": "differential", "storage": "storage", "ray": "ray", "llama_server": "llama",
                  "serve": "serve"}

os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")  # no kernel compile warm-up in tests


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by its tier folder (tests/model/... -> `slow`), beside its own markers."""
    for item in items:
        parts = item.path.relative_to(TESTS).parts if item.path.is_relative_to(TESTS) else ()
        marker = FOLDER_MARKERS.get(parts[0]) if len(parts) > 1 else None
        if marker is not None:
            item.add_marker(marker)


@pytest.fixture(scope="session", autouse=True)
def _weight_hash_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Weight-file hashes go to a temporary folder, not the user's ~/.cache/localjudge."""
    os.environ["LOCALJUDGE_CACHE"] = str(tmp_path_factory.mktemp("localjudge-cache"))


@pytest.fixture
def fake_judge() -> FakeJudgeFactory:
    """`fake_judge(answers=None, /, *, identity="fake-judge", **more)`: a new scripted FakeJudge.

    Each schema family (``"Claims"``, ``"HallucinationVerdicts"``, ``"Reason"``, ...) is answered
    from `answers` (a module's answer table) or the keyword of its name, else from
    `tests.fakes.DEFAULT_ANSWERS` (one claim, verdicts "yes", nothing toxic, reason "ok"). An answer
    is one output given on every call, a list of outputs handed out in order, or a function of the
    chat prompt. The same function is `tests.fakes.make_fake_judge`, for code no fixture reaches.
    """
    return make_fake_judge


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The default model's directory; fails (never skips) when it has not been set up."""
    if not (DEFAULT_MODEL / "model.safetensors").exists():
        pytest.fail(f"{DEFAULT_MODEL} is missing: run `python scripts/get_default_model.py` first")
    return DEFAULT_MODEL


@pytest.fixture(scope="session")
def real_judge(model_dir: Path):  # type: ignore[no-untyped-def]
    """The real SmolLM2-135M judge, loaded once per test session: on the GPU when there is one,
    in float32 everywhere (bf16 on a GPU would make batch composition change results)."""
    from localjudge.engines.transformers.judge import TransformersJudge

    return TransformersJudge.load(model_dir, dtype="float32")


FIXTURES = ROOT / "models" / "fixtures"


@pytest.fixture(scope="session")
def family_manifest() -> dict:
    """The family fixtures' manifest; fails (never skips) when they have not been built."""
    import json

    path = FIXTURES / "manifest.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `bash scripts/setup_fixtures.sh`")
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def family_dir(family_manifest: dict):  # type: ignore[no-untyped-def]
    """`family_dir(name)`: the fixture model directory of one family."""
    paths = {f["name"]: FIXTURES / f["path"] for f in family_manifest["families"]}

    def get(name: str) -> Path:
        if name not in paths:
            pytest.fail(f"no fixture for family {name!r} in the manifest: rerun scripts/get_family_fixtures.py")
        return paths[name]

    return get


@pytest.fixture(scope="session")
def family_judge(family_dir):  # type: ignore[no-untyped-def]
    """`family_judge(name)`: a TransformersJudge on one family's fixture, loaded once a session."""
    from localjudge.engines.transformers.judge import TransformersJudge

    judges: dict[str, TransformersJudge] = {}

    def get(name: str) -> TransformersJudge:
        if name not in judges:
            judges[name] = TransformersJudge.load(family_dir(name), dtype="float32")
        return judges[name]

    return get


class NetworkUsed(RuntimeError):
    """Raised (not OSError, which callers might swallow) by any attempt to reach the network."""


@pytest.fixture
def block_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Make every connection and DNS lookup in this process fail; yields the attempts made, and
    fails the test if any was made that the test did not clear."""
    attempts: list[str] = []

    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{what}{args[1:] if what.startswith('socket.') else args}")
            raise NetworkUsed(f"network access attempted: {what}")

        return refused

    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    yield attempts
    assert attempts == [], f"network access attempted: {attempts}"
