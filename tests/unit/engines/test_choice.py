"""Choosing an engine (`localjudge.engines.choice`): options checked per engine (API, CLI, sweeps),
bad model paths refused before vLLM is imported, GPUs shared out to data-parallel ranks. No model
runs. (Label probabilities read off vLLM's logprobs on a real tokenizer, and the engine without
vLLM installed: tests/engines/test_vllm_judge.py; the vLLM engine end to end: tests/vllm/.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from localjudge import FakeJudge
from localjudge.cli.main import main
from localjudge.cli.sweep_config import load_config
from localjudge.engines import EngineOptionError, JudgeSpec, check_engine, rank_cpus, rank_gpus
from tests.fakes import stand_in_engine


@pytest.mark.parametrize(("engine", "option", "owner"), [
    ("vllm", "device_map", "transformers"),
    ("vllm", "decoder", "transformers"),
    ("transformers", "tensor_parallel_size", "vllm"),
    ("transformers", "gpu_memory_utilization", "vllm"),
])
def test_an_engine_refuses_the_other_engines_options(engine: str, option: str, owner: str) -> None:
    with pytest.raises(EngineOptionError, match=f"{option} is an option of the {owner} engine, not of the {engine}"):
        check_engine(engine, {option: 1})
    assert check_engine(engine, {option: None, "dtype": "auto"}) == {"dtype": "auto"}  # None: not given


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="engine must be one of transformers, vllm"):
        check_engine("llamacpp", {})


def test_the_cli_names_the_flag_of_the_other_engine_before_any_model_loads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"input": "q", "output": "A reply of five words here.", "context": "c"}\n', encoding="utf-8")
    code = main(["--quiet", "score", "--engine", "vllm", "--device-map", "cpu", "--model", str(tmp_path),
                 "--scorer", "toxicity", "--data", str(data)])
    assert code == 2
    assert "--device-map is a flag of the transformers engine, not of --engine vllm" in capsys.readouterr().err


def test_sweep_model_entries_take_an_engine_and_refuse_the_others_options(tmp_path: Path) -> None:
    base = "scorers: [toxicity]\ndatasets: [{path: d.jsonl}]\n"
    good = tmp_path / "good.yaml"
    good.write_text(base + "models: [{path: m, engine: vllm, tensor_parallel_size: 2, max_rows: 64}]\n")
    assert load_config(good)["models"][0]["engine"] == "vllm"
    bad = tmp_path / "bad.yaml"
    bad.write_text(base + "models: [{path: m, tensor_parallel_size: 2}]\n")
    with pytest.raises(ValueError, match="tensor_parallel_size is an option of the vllm engine"):
        load_config(bad)


REFUSE = """
import sys
from localjudge.engines.model_files import ModelPathError
from localjudge.engines.vllm.judge import VLLMJudge
try:
    VLLMJudge.load(sys.argv[1])
except ModelPathError as error:
    print("refused:", error)
print("vllm imported:", "vllm" in sys.modules)
"""


@pytest.mark.vllm  # also in the vLLM tier, where vllm is installed and could be imported too early
@pytest.mark.parametrize(("path", "says"), [
    ("Qwen/Qwen2.5-7B-Instruct", "hub"),
    ("no/such/folder/here", "does not exist"),
    ("{gguf}", "not a .gguf file"),
])
def test_bad_model_paths_are_refused_before_vllm_is_imported(tmp_path: Path, path: str, says: str) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    done = subprocess.run([sys.executable, "-c", REFUSE, path.format(gguf=gguf)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert "refused:" in done.stdout and says in done.stdout.lower(), done.stdout + done.stderr[-2000:]
    assert "vllm imported: False" in done.stdout


@pytest.mark.parametrize(("rank", "per_rank", "visible", "gpus"), [
    (0, 1, None, "0"),
    (3, 1, None, "3"),
    (1, 2, None, "2,3"),
    (1, 2, "4,5,6,7", "6,7"),
    (0, 4, "2, 3,4,5", "2,3,4,5"),
])
def test_each_data_parallel_rank_gets_its_own_gpus(rank: int, per_rank: int, visible: str | None, gpus: str) -> None:
    assert rank_gpus(rank, per_rank, visible) == gpus


def test_a_rank_without_enough_gpus_is_refused() -> None:
    with pytest.raises(ValueError, match="rank 1 needs GPUs 2..3 but only 3 are visible"):
        rank_gpus(1, 2, "0,1,2")


@pytest.mark.parametrize(("rank", "world", "allowed", "cores"), [
    (0, 2, {0, 1}, [0]),
    (1, 2, {0, 1}, [1]),
    (1, 2, {4, 5, 6, 7, 8}, [6, 7]),  # equal shares: the odd core is left over
    (0, 1, {3, 1}, [1, 3]),
    (1, 3, {0, 1}, []),  # more ranks than cores: they share
])
def test_each_cpu_data_parallel_rank_gets_its_own_cores(rank: int, world: int, allowed: set[int],
                                                        cores: list[int]) -> None:
    assert rank_cpus(rank, world, allowed) == cores


def test_a_cpu_rank_binds_vllm_to_its_own_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    bound: list[str | None] = []
    stand_in_engine(monkeypatch, lambda path, **options: bound.append(os.environ.get("VLLM_CPU_OMP_THREADS_BIND"))
                    or FakeJudge({}), "vllm")
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "")
    monkeypatch.delenv("VLLM_CPU_OMP_THREADS_BIND")  # unset, and unset again after the test
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    JudgeSpec("m", "vllm").load("cpu")
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "0")  # the user's binding stays
    JudgeSpec("m", "vllm").load("cpu")
    assert bound == ["2,3", "0"]  # set before the engine starts
