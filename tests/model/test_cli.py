"""The CLI on the real model: resume after SIGKILL, data-parallel merge, sweeps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "example.jsonl"
ROWS = 4  # the file's first rows (`--limit`): two batches of two
BIN = Path(sys.executable).parent
ENV = {**os.environ, "TORCHDYNAMO_DISABLE": "1"}


def score_cmd(model_dir: Path, out: Path, *extra: str) -> list[str]:
    # float32 on any device: on a GPU, bf16 would let batch composition change results
    return [str(BIN / "localjudge"), "--quiet", "score", "--model", str(model_dir), "--threads", "1",
            "--dtype", "float32", "--scorer", "toxicity", "--data", str(EXAMPLE), "--limit", str(ROWS),
            "--out", str(out), *extra]


def gpu_count() -> int:
    import torch

    return torch.cuda.device_count()


@pytest.fixture(scope="module")
def reference(model_dir: Path, tmp_path_factory) -> bytes:
    """An uninterrupted single-process run's output file."""
    out = tmp_path_factory.mktemp("ref") / "out.jsonl"
    subprocess.run(score_cmd(model_dir, out, "--batch-size", "2"), check=True, env=ENV, capture_output=True,
                   timeout=600)
    return out.read_bytes()


def test_sigkill_then_resume_gives_the_same_file(model_dir: Path, tmp_path: Path, reference: bytes) -> None:
    """Killed as soon as its first batch is on disk: polled every 5 ms and frozen (SIGSTOP) the
    moment it is seen, so even a fast machine cannot finish the other batches in between."""
    out = tmp_path / "out.jsonl"
    log = tmp_path / "out.jsonl.progress" / "rank-0.jsonl"
    proc = subprocess.Popen(score_cmd(model_dir, out, "--batch-size", "2"), env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if log.exists() and log.stat().st_size and len(log.read_bytes().splitlines()) >= 2:
            proc.send_signal(signal.SIGSTOP)
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the run finished (or failed) before it could be stopped"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    done_before = len(log.read_text().splitlines())
    assert 2 <= done_before < ROWS and not out.exists()

    resumed = subprocess.run(score_cmd(model_dir, out, "--batch-size", "2"), env=ENV, capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == reference  # nothing lost, nothing duplicated, same bytes
    lines = log.read_text().splitlines()
    assert len(lines) == ROWS and len({json.loads(line)["key"] for line in lines}) == ROWS


def test_accelerate_two_processes_match_one(model_dir: Path, tmp_path: Path, reference: bytes) -> None:
    """Two processes: gloo on CPU, NCCL with one GPU each where there are two GPUs. With exactly
    one GPU (two NCCL ranks cannot share it) both runs go to the CPU."""
    out, env = tmp_path / "out.jsonl", ENV
    if gpu_count() == 1:
        env = {**ENV, "CUDA_VISIBLE_DEVICES": ""}
        reference_out = tmp_path / "reference.jsonl"
        subprocess.run(score_cmd(model_dir, reference_out, "--batch-size", "2"), check=True, env=env,
                       capture_output=True, timeout=600)
        reference = reference_out.read_bytes()
    cmd = [str(BIN / "accelerate"), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "localjudge.cli",
           *score_cmd(model_dir, out, "--batch-size", "2")[1:]]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    logs = sorted(p.name for p in (tmp_path / "out.jsonl.progress").iterdir())
    assert logs == [".lock", "rank-0.jsonl", "rank-1.jsonl"]  # the ranks shared one run's lock
    assert out.read_bytes() == reference


def test_sweep_writes_cells_and_summary(model_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "sweep.yaml"
    config.write_text(
        f"out_dir: {tmp_path / 'results'}\n"
        f"models:\n  - {{name: smol, path: {model_dir}, threads: 1}}\n"
        "scorers: [toxicity, {name: hallucination, scale: 10}]\n"
        f"datasets:\n  - {{name: ex, path: {EXAMPLE}, limit: 1, batch_size: 1}}\n"
    )
    done = subprocess.run([str(BIN / "localjudge"), "--quiet", "sweep", str(config)], env=ENV, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    for name in ("toxicity", "hallucination"):
        lines = (tmp_path / "results" / "smol" / "ex" / f"{name}.jsonl").read_text().splitlines()
        rows = [json.loads(line) for line in lines]
        assert len(rows) == 1 and f"{name}_score" in rows[0]
    summary = (tmp_path / "results" / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("model,dataset,scorer") and len(summary) == 3
    lines = (tmp_path / "results" / "smol" / "ex" / "hallucination.jsonl").read_text().splitlines()
    halluc = [json.loads(line) for line in lines]
    assert all(r["hallucination_score"] is None or 0 <= r["hallucination_score"] <= 10 for r in halluc)
