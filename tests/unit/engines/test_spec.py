"""The judge spec (`localjudge.engines.spec.JudgeSpec`): one value behind every door (the CLI, a
sweep, the pytest plugin, a Ray actor) that checks an engine's options with typed errors and loads
the judge, placing its process first (threads, a data-parallel rank's GPUs or cores, the
environment vLLM reads). Engines are stood in (`tests.fakes.stand_in_engine`): no model runs.
(The CLI's, a sweep's and the plugin's words for the same errors: tests/unit/cli/test_server_engine.py,
tests/unit/engines/test_choice.py, tests/unit/cli/test_pytest_plugin.py.)"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localjudge import FakeJudge
from localjudge.cli import build_parser, model_flags
from localjudge.cli.sweep_config import judge_spec
from localjudge.engines import (
    EngineOptionError,
    JudgeSpec,
    MissingOptionError,
    OptionValueError,
    load_judge,
    set_threads,
)
from tests.fakes import stand_in_engine

PLACED = ("CUDA_VISIBLE_DEVICES", "VLLM_CPU_OMP_THREADS_BIND", "VLLM_LOGGING_STREAM", "VLLM_LOGGING_LEVEL")


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What a placement sets, unset now and again after the test."""
    for name in PLACED:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    yield


def recorded(monkeypatch: pytest.MonkeyPatch, engine: str) -> list[tuple[Any, dict[str, Any], dict[str, str]]]:
    """Stand in for `engine`: each load's (model path, options, the placed environment then)."""
    loads: list[tuple[Any, dict[str, Any], dict[str, str]]] = []

    def load(path: Any, **options: Any) -> FakeJudge:
        loads.append((path, options, {name: os.environ[name] for name in PLACED if name in os.environ}))
        return FakeJudge({}, identity=f"on-{engine}")

    stand_in_engine(monkeypatch, load, engine)
    return loads


@pytest.mark.parametrize(("spec", "rank", "log_level", "options", "env"), [
    (JudgeSpec("m", "vllm", threads=4), None, None, {}, {"VLLM_CPU_OMP_THREADS_BIND": "0-3"}),
    (JudgeSpec("m", "vllm", {"tensor_parallel_size": 2}), "cuda:1", None, {"tensor_parallel_size": 2},
     {"CUDA_VISIBLE_DEVICES": "2,3"}),  # rank 1 of tensor parallel 2: the second pair of GPUs
    (JudgeSpec("m", "vllm"), None, "DEBUG", {},
     {"VLLM_LOGGING_STREAM": "ext://sys.stderr", "VLLM_LOGGING_LEVEL": "DEBUG"}),
    (JudgeSpec("m", "transformers", {"device_map": "cpu"}), "cuda:1", "DEBUG", {"device_map": "cuda:1"}, {}),
    (JudgeSpec("m", "vllm", {"device_map": None}), None, None, {}, {}),  # None: not given
])
def test_the_spec_places_its_process_before_the_engine_loads(
        monkeypatch: pytest.MonkeyPatch, unset: None, spec: JudgeSpec, rank: str | None, log_level: str | None,
        options: dict[str, Any], env: dict[str, str]) -> None:
    loads = recorded(monkeypatch, spec.engine)
    assert spec.load(rank, log_level=log_level).identity == f"on-{spec.engine}"
    assert loads == [("m", options, env)]


def test_load_judge_leaves_the_process_alone(monkeypatch: pytest.MonkeyPatch, unset: None) -> None:
    loads = recorded(monkeypatch, "vllm")
    load_judge(Path("m"), engine="vllm", tensor_parallel_size=2, dtype=None)
    assert loads == [(Path("m"), {"tensor_parallel_size": 2}, {})]


def test_set_threads_places_an_engines_threads_as_the_spec_does(unset: None) -> None:
    set_threads(3, "vllm")
    assert os.environ["VLLM_CPU_OMP_THREADS_BIND"] == "0-2"
    set_threads(None, "server")  # nothing to place
    with pytest.raises(OptionValueError, match="threads must be a whole number of at least 1, got 0"):
        set_threads(0, "vllm")


@pytest.mark.parametrize(("spec", "error", "fields", "says"), [
    (JudgeSpec("m", "vllm", {"device_map": "cpu"}), EngineOptionError,
     {"option": "device_map", "engine": "vllm", "owners": ("transformers",)},
     "device_map is an option of the transformers engine, not of the vllm engine"),
    (JudgeSpec(None, "server", {"dtype": "auto"}), EngineOptionError,  # another engine's option first
     {"option": "dtype", "owners": ("transformers", "vllm")}, "dtype is an option of the transformers engine"),
    (JudgeSpec(None, "vllm"), MissingOptionError, {"option": "model", "engine": "vllm"},
     "the vllm engine needs a local model path"),
    (JudgeSpec("m", "server"), MissingOptionError, {"option": "base_url", "engine": "server"},
     "the server engine needs base_url (the server's URL"),
    (JudgeSpec("m", threads=0), OptionValueError, {"option": "threads", "value": 0},
     "threads must be a whole number of at least 1, got 0"),
    (JudgeSpec(None, "server", {"base_url": "http://h/v1"}, threads=2), EngineOptionError,
     {"option": "threads", "engine": "server", "owners": ("transformers", "vllm")}, "threads is an option of"),
    (JudgeSpec("a", "server", {"base_url": "http://h/v1", "tokenizer": "b"}), ValueError, {},
     "the model path 'a' and tokenizer 'b' differ: give one"),
    (JudgeSpec("m", "llamacpp"), ValueError, {}, "engine must be one of transformers, vllm, server"),
])
def test_the_spec_refuses_what_cannot_load_with_typed_errors_before_any_engine(
        monkeypatch: pytest.MonkeyPatch, spec: JudgeSpec, error: type[ValueError], fields: dict[str, Any],
        says: str) -> None:
    for engine in ("transformers", "vllm"):
        stand_in_engine(monkeypatch, lambda path, **options: pytest.fail("an engine loaded"), engine)
    for attempt in (spec.checked, spec.check, spec.load):
        with pytest.raises(error, match=says.replace("(", r"\(")) as raised:
            attempt()
        assert type(raised.value) is error
        assert {name: getattr(raised.value, name) for name in fields} == fields


def test_a_spec_travels_pickled_and_checks_a_model_path(tmp_path: Path) -> None:
    spec = JudgeSpec(str(tmp_path / "model"), "vllm", {"tensor_parallel_size": 2}, threads=2)
    assert pickle.loads(pickle.dumps(spec)) == spec
    with pytest.raises(ValueError, match="does not exist"):
        spec.check()
    JudgeSpec(None, "server", {"base_url": "http://h/v1"}).check()  # no files to check


def test_the_cli_and_a_sweep_build_the_same_spec(monkeypatch: pytest.MonkeyPatch, unset: None) -> None:
    args = build_parser().parse_args(["score", "--model", "m", "--engine", "vllm", "--threads", "2",
                                      "--tensor-parallel-size", "2", "--scorer", "toxicity", "--data", "d.jsonl"])
    spec = JudgeSpec("m", "vllm", {"tensor_parallel_size": 2}, threads=2)
    assert model_flags.judge_spec(args) == spec
    assert judge_spec({"name": "x", "path": "m", "engine": "vllm", "threads": 2, "tensor_parallel_size": 2}) == spec
    loads = recorded(monkeypatch, "vllm")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7")
    model_flags.build_judge(args, device="cuda:1")  # a data-parallel rank: the CLI hands the spec its device
    assert loads == [("m", {"tensor_parallel_size": 2},
                      {"CUDA_VISIBLE_DEVICES": "6,7", "VLLM_CPU_OMP_THREADS_BIND": "0-1",
                       "VLLM_LOGGING_STREAM": "ext://sys.stderr", "VLLM_LOGGING_LEVEL": "WARNING"})]
