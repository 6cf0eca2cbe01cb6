"""The server tier: `localjudge score --engine server` against a real vLLM server.

vLLM 0.32's OpenAI-compatible server (CPU build, .venv-vllm) serves the default model on
127.0.0.1, started as the in-process vLLM engine is built (`vllm_server.command`: the guidance
grammar backend, the repetition guard as a logits processor, seed 0, prefix caching; dev mode,
so the engine can read the backend and the guard off ``/server_info``). One score run of the
example file with all three scorers, as a user runs it (a CLI subprocess):

1. the server is SIGKILLed (with its engine process) once the first batch of rows (4 of 8, every
   scorer: one schedule across scorers) is written, while the second batch's requests are in
   flight: the run ends, every row it could not get answered unscored with the server's error;
2. the server is started again on the same port (the compile cache now warm) and the same
   command resumes: the file is complete, each row once, the rows scored before the kill kept;
3. the scores are compared with the in-process vLLM engine's on the same rows, which the vLLM
   tier hands over when both run in one `scripts/check.sh` (`LOCALJUDGE_TIER_OUT`).

Two server starts in all; skipped without .venv-vllm (scripts/setup_vllm.sh).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import machine
from tests.conftest import EXAMPLES, ROOT
from tests.server.vllm_server import PYTHON, VLLMServer

if not PYTHON.exists():
    pytest.skip("no .venv-vllm (scripts/setup_vllm.sh builds it): the server tier did not run",
                allow_module_level=True)

EXAMPLE = EXAMPLES / "example.jsonl"
RUN_IDS = [json.loads(line)["run_id"] for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
SCORERS = ("hallucination", "faithfulness", "toxicity")  # each batch of rows through all three together
BATCH = 4  # two batches of the 8 rows: the kill falls between them
START_TIMEOUT = 600.0  # seconds: a cold compiled start took ~4 minutes on 2 busy cores
HANDOVER = "LOCALJUDGE_TIER_OUT"  # the vLLM tier's results (tests/vllm/test_vllm_engine.py)
# Scores equal to the in-process vLLM engine's: at least this many of 24 (measured: 24; bf16 near
# ties may flip with batch composition, as between the two engines' own runs)
AGREEMENT_FLOOR = 22


@dataclass(frozen=True)
class Run:
    rows: list[dict[str, Any]]
    stdout: str
    stderr: str
    seconds: float
    stored: frozenset[str] = frozenset()  # run ids in the resume log when the run ended


def score(url: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "localjudge.cli", "score", "--engine", "server", "--base-url", url,
            "--tokenizer", str(ROOT / "models" / "smollm2-135m-instruct"), "--scorer", ",".join(SCORERS),
            "--data", str(EXAMPLE), "--batch-size", str(BATCH), "--request-timeout", "300", "--out", str(out)]


def run(command: list[str], folder: Path, name: str) -> subprocess.Popen[str]:
    """`command` started, its output to files (a pipe nobody reads while it runs could fill up)."""
    with open(folder / f"{name}.out", "w") as out, open(folder / f"{name}.err", "w") as err:
        return subprocess.Popen(command, stdout=out, stderr=err, text=True, cwd=ROOT)


def finish(process: subprocess.Popen[str], folder: Path, name: str, start: float) -> Run:
    process.wait(timeout=900)
    stdout, stderr = ((folder / f"{name}.{kind}").read_text(encoding="utf-8") for kind in ("out", "err"))
    assert process.returncode == 0, stderr[-4000:]
    rows = [json.loads(line) for line in (folder / "scored.jsonl").read_text(encoding="utf-8").splitlines()]
    log = folder / "scored.jsonl.progress" / "rank-0.jsonl"
    # a stored result's run id is its row number (the command names no --id-col)
    stored = frozenset(RUN_IDS[int(json.loads(line)["result"]["run_id"])]
                       for line in log.read_text(encoding="utf-8").splitlines())
    return Run(rows, stdout, stderr, time.monotonic() - start, stored)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("server-tier")


@pytest.fixture(scope="module")
def server(model_dir: Path, folder: Path) -> Iterator[VLLMServer]:
    srv = VLLMServer(model_dir, folder / "server-1.log")
    srv.start()
    try:
        print(f"\nfirst server start: {srv.wait_ready(START_TIMEOUT):.0f} s")
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def killed_run(server: VLLMServer, folder: Path) -> Run:
    """The score run, with the server SIGKILLed once the first batch's rows are on disk (every
    scorer's; the second batch's requests are then in flight)."""
    out = folder / "scored.jsonl"
    log = folder / "scored.jsonl.progress" / "rank-0.jsonl"
    start = time.monotonic()
    process = run(score(server.url, out), folder, "killed")
    while not (log.exists() and log.stat().st_size):  # the first batch's results appended
        assert process.poll() is None, f"the run ended before the kill: {(folder / 'killed.err').read_text()[-4000:]}"
        assert time.monotonic() - start < 900, "the first batch's rows were not written within 900 s"
        time.sleep(0.1)
    server.kill()
    print(f"\nserver killed {time.monotonic() - start:.0f} s into the run")
    return finish(process, folder, "killed", start)


@pytest.fixture(scope="module")
def resumed_run(killed_run: Run, server: VLLMServer, model_dir: Path, folder: Path) -> Run:
    """The same command again, on the server started again on its port."""
    again = VLLMServer(model_dir, folder / "server-2.log", port=server.port)
    again.start()
    try:
        print(f"\nsecond server start: {again.wait_ready(START_TIMEOUT):.0f} s")
        start = time.monotonic()
        return finish(run(score(again.url, folder / "scored.jsonl"), folder, "resumed"), folder, "resumed", start)
    finally:
        again.stop()


def outcome(row: dict[str, Any], name: str) -> tuple[Any, Any]:
    return row[f"{name}_score"], row[f"{name}_error"]


def test_the_killed_run_keeps_what_was_scored_and_leaves_the_rest_unscored_with_the_error(
        killed_run: Run, server: VLLMServer) -> None:
    rows = killed_run.rows
    assert [r["run_id"] for r in rows] == RUN_IDS
    host = server.url.split("/")[2]
    for name in SCORERS:
        for row in rows:
            score, error = outcome(row, name)
            assert (score is None) != (error is None), (name, row["run_id"], score, error)
    stored = killed_run.stored
    judged = [r for r in rows if r["run_id"] in stored and r["output"] != ""]
    assert 0 < len(judged) <= BATCH  # the first batch, written before the kill (and rows decided without the judge)
    for name in SCORERS:
        assert all(r[f"{name}_error_kind"] != "judge_failed" for r in rows if r["run_id"] in stored), name
        # the second batch, asked after it: the server's error, never a score (unless decided without the judge)
        failed = [r for r in rows if r["run_id"] not in stored and r["output"] != ""]
        assert len(failed) >= BATCH - 1, failed
        assert all(r[f"{name}_score"] is None and r[f"{name}_error_kind"] == "judge_failed"
                   and f"the server at {host}" in r[f"{name}_error"] for r in failed), failed
    assert f"judge: smollm2@{host}:vllm-0.32.0:greedy+repeat-guard-" in killed_run.stderr
    assert "+json-whitespace" not in killed_run.stderr and "+grammar-" not in killed_run.stderr


def test_resume_completes_the_file_with_nothing_lost_or_duplicated(killed_run: Run, resumed_run: Run) -> None:
    rows = resumed_run.rows
    assert [r["run_id"] for r in rows] == RUN_IDS  # each row once, in order
    for name in SCORERS:
        for row in rows:
            score, error = outcome(row, name)
            assert (score is None) != (error is None), (name, row["run_id"], score, error)
            assert row[f"{name}_error_kind"] != "judge_failed", (name, row["run_id"], error)
        assert sum(r[f"{name}_score"] is not None for r in rows) >= 6, name
        for name_field in ("score", "prob_score", "reason"):  # rows scored before the kill were not judged again
            field = f"{name}_{name_field}"
            assert [r[field] for r in rows if r["run_id"] in killed_run.stored] == [
                r[field] for r in killed_run.rows if r["run_id"] in killed_run.stored]
    table = [[cell.strip() for cell in line.strip("|").split("|")] for line in resumed_run.stdout.splitlines()
             if line.startswith("| ")]  # the summary table: its header, then a row per scorer
    summary = {row[0]: dict(zip(table[0], row, strict=True)) for row in table[1:]}
    assert all(summary[name]["resumed"] == str(len(killed_run.stored)) for name in SCORERS)  # the first batch
    # every scored row has a probability score (vLLM's logprobs, after the grammar's mask)
    for name in SCORERS:
        assert all(r[f"{name}_prob_score"] is not None for r in rows if r[f"{name}_score"] is not None), name
    print(f"\nresumed run: {resumed_run.seconds:.0f} s; killed run: {killed_run.seconds:.0f} s")


def test_scores_equal_the_in_process_vllm_engines(resumed_run: Run) -> None:
    folder = os.environ.get(HANDOVER)
    reference = Path(folder) / "vllm-example.jsonl" if folder else None
    if reference is None or not reference.exists():
        pytest.skip("no in-process vLLM results to compare with: run `bash scripts/check.sh vllm server`")
    theirs = {r["run_id"]: r for r in (json.loads(line) for line in reference.read_text(encoding="utf-8").splitlines())}
    pairs = [(row[f"{name}_score"], theirs[row["run_id"]][f"{name}_score"]) for row in resumed_run.rows
             for name in SCORERS]
    same = sum(ours == other for ours, other in pairs)
    print(f"\nscores equal to the in-process vLLM engine's: {same} of {len(pairs)} on {machine.cpu()}")
    assert same >= AGREEMENT_FLOOR, (f"{same} scores of {len(pairs)} equal on {machine.cpu()}: the server batches "
                                     "rows as their requests arrive (docs/engines.md \"Determinism\")")
