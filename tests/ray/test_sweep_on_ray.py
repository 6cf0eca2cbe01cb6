"""A sweep with `ray:` in its config, its judge the server engine inside the actors (HTTP to a fake
OpenAI-compatible server in this process, tests/unit/engines/fake_server.py: no model): the same
files as the same sweep without Ray."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge.cli.main import main
from tests.conftest import EXAMPLES
from tests.unit.engines.fake_server import schema_answer, serving


def sweep(tmp_path: Path, name: str, url: str, ray: Any) -> Path:
    config = {"out_dir": str(tmp_path / name), "batch_size": 2,
              "models": [{"name": "served", "engine": "server", "base_url": url}],
              "scorers": ["toxicity", "hallucination"],
              "datasets": [{"name": "example", "path": str(EXAMPLES / "example.jsonl"), "limit": 4}]}
    if ray is not None:
        config["ray"] = ray
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    assert main(["--quiet", "sweep", str(path)]) == 0
    return tmp_path / name / "served" / "example"


def test_a_sweep_on_ray_with_the_server_engine_writes_the_same_files(cluster: Any, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def no_judge_here(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the sweep loaded a judge in the driver: its actors should")

    with serving() as server:
        server.answer = schema_answer
        with monkeypatch.context() as patch:
            patch.setattr("localjudge.engines.JudgeSpec.load", no_judge_here)
            on_ray = sweep(tmp_path, "ray", server.url, {"judges": 1})
        asked = len(server.posts())
        local = sweep(tmp_path, "local", server.url, None)
    assert asked > 0  # the actors did call the server
    for name in ("toxicity.jsonl", "hallucination.jsonl"):
        assert (on_ray / name).read_bytes() == (local / name).read_bytes()
        rows = [json.loads(line) for line in (on_ray / name).read_text().splitlines()]
        assert len(rows) == 4 and all(row[f"{name[:-6]}_score"] is not None for row in rows)
