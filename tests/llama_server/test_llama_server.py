"""The llama tier: the server engine's `llama-cpp` dialect against a real llama.cpp server.

`llama-server`, built from llama-cpp-python 0.3.36's copy of llama.cpp by
scripts/setup_llama_server.sh, serves the default model's GGUF (the Q4_1 file
models/smollm2-135m-instruct was converted from) on 127.0.0.1 (`llama_server.command`).

1. The dialect as the server takes it: token ids on ``/v1/completions`` (the server counts the
   tokens sent), the JSON schema (``json_schema``) holding every answer, ``n_probs`` top tokens
   computed before the grammar (tokens the grammar forbids are among them), which localjudge
   renormalises over the labels (each reading sums to 1).
2. One score run of the example file with all three scorers in batches of 4 rows, as a user runs
   it (a CLI subprocess), the server SIGKILLed once the first batch is written: the second
   batch's rows unscored with the server's error; the server started again on its port and the
   same command resumes: each row once, what was stored before the kill kept and not judged
   again, every answer parsed, every score with a probability score in [0, 1].
3. How often the scores agree with the transformers engine's on the same GGUF (loaded by
   transformers, float32): printed, not asserted (llama.cpp computes in the quantized type).

Skipped without .llama-server (scripts/setup_llama_server.sh).
"""

from __future__ import annotations

import json
import math
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from tests import machine
from tests.llama_server.llama_server import BINARY, GGUF, SERVED, LlamaServer
from tests.server_process import (
    BATCH,
    EXAMPLE,
    RUN_IDS,
    SCORERS,
    TOKENIZER,
    Run,
    finish,
    killed_run,
    outcome,
    resumed_run,
    start,
    summary,
)

if not (BINARY.exists() and GGUF.exists()):
    pytest.skip("no .llama-server (scripts/setup_llama_server.sh builds it): the llama tier did not run",
                allow_module_level=True)

JUDGE_FREE = (None, "not_scorable", "invalid_run")  # error kinds of rows decided without the judge
START_TIMEOUT = 120.0  # seconds: the 98 MB GGUF loads in about a second


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


QUESTIONS = ("Is Paris the capital of France?", "Is the sun cold?", "Does water boil at 100 C at sea level?",
             "Is a whale a fish?")


def verdict_prompt(question: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f'{question} Answer with JSON: {{"verdict": "yes"}} or {{"verdict": "no"}}.'}]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llama-tier")


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[LlamaServer]:
    srv = LlamaServer(folder / "server-1.log")
    srv.start()
    try:
        print(f"\nfirst server start: {srv.wait_ready(START_TIMEOUT):.1f} s")
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def killed(server: LlamaServer, folder: Path) -> Run:
    """The score run, with the server SIGKILLed once the first batch's results are on disk (the
    second batch's requests are then in flight)."""
    return killed_run(server, folder)


@pytest.fixture(scope="module")
def again(killed: Run, server: LlamaServer, folder: Path) -> Iterator[LlamaServer]:
    """The server started again on its port, after the killed run."""
    srv = LlamaServer(folder / "server-2.log", port=server.port)
    srv.start()
    try:
        print(f"\nsecond server start: {srv.wait_ready(START_TIMEOUT):.1f} s")
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def resumed(again: LlamaServer, folder: Path) -> Run:
    """The same command again, on the server started again."""
    return resumed_run(again, folder)


def post(url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url.removesuffix("/v1") + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        return json.loads(reply.read())


def test_the_dialect_sends_token_ids_and_the_schema_and_reads_probabilities_from_before_the_grammar(
        again: LlamaServer) -> None:
    """The request the dialect builds, sent as is: the server judges exactly the token ids sent
    (its own count), the answer fits the schema, and the ``n_probs`` tokens at the answer's first
    position include tokens the JSON grammar forbids (computed before it, so localjudge must
    renormalise)."""
    from localjudge.engines.grammar import grammar_spec
    from localjudge.engines.server.dialects import reply, request
    from localjudge.engines.server.judge import ServerJudge

    judge = ServerJudge(again.url, tokenizer=TOKENIZER)
    assert judge.kind == "llama-cpp" and "+server-template" not in judge.identity, judge.identity
    ids = judge.prompt_ids(verdict_prompt(QUESTIONS[0]))
    path, body = request("llama-cpp", SERVED, ids, grammar_spec(Verdict), max_tokens=32, logprobs=True)
    assert path == "/v1/completions" and body["prompt"] == ids and "n_probs" in body and "json_schema" in body
    data = post(again.url, path, body)
    assert data["usage"]["prompt_tokens"] == len(ids), (data["usage"], len(ids))
    answer = reply(data)
    Verdict.model_validate_json(answer.text)
    assert answer.positions and all(len(found) == 20 for _, found in answer.positions)
    first = answer.positions[0][1]
    forbidden = [(text, p) for text, p in first if p > 0 and text.strip() and not text.startswith("{")]
    assert forbidden, f"every top token at the first position may begin the JSON object: {first}"


def test_label_probabilities_are_renormalised_over_the_labels(again: LlamaServer) -> None:
    """Through the judge: every answer parses into its schema; at its label choice each label's
    probability is in [0, 1] and they sum to 1, though the server's top tokens there hold mass
    outside the labels."""
    from localjudge.engines.server.judge import ServerJudge

    judge = ServerJudge(again.url, tokenizer=TOKENIZER, concurrency=4)
    prompts = [verdict_prompt(q) for q in QUESTIONS]
    generations = judge.generate(prompts, [Verdict] * len(prompts), max_new_tokens=32)
    for generation in generations:
        assert generation.error is None and generation.finished, generation
        Verdict.model_validate_json(generation.text)
        assert len(generation.label_probs) == 1, generation
        (reading,) = generation.label_probs
        assert set(reading) == {"yes", "no"} and all(0.0 <= p <= 1.0 for p in reading.values()), reading
        assert math.isclose(sum(reading.values()), 1.0, abs_tol=1e-5), reading
    print("\nlabel probabilities (yes): " + ", ".join(f"{g.label_probs[0]['yes']:.3f}" for g in generations))


def test_the_killed_run_keeps_what_was_scored_and_leaves_the_rest_unscored_with_the_error(
        killed: Run, server: LlamaServer) -> None:
    rows = killed.rows
    assert [r["run_id"] for r in rows] == RUN_IDS
    host = server.url.split("/")[2]
    failed = []
    for name in SCORERS:
        for row in rows:
            value, error = outcome(row, name)
            assert (value is None) != (error is None), (name, row["run_id"], value, error)
            if row[f"{name}_error_kind"] not in JUDGE_FREE:  # asked after the kill: the server's error
                assert row[f"{name}_error_kind"] == "judge_failed" and f"the server at {host}" in error, (name, error)
                failed.append((name, row["run_id"]))
    # the batch stored before the kill (its rows as the run groups them, not the file's order)
    complete = [r["run_id"] for r in rows if r["output"] and all(r[f"{name}_score"] is not None for name in SCORERS)]
    assert len(complete) >= BATCH, complete
    assert len(failed) >= BATCH, failed  # the second batch's rows that needed the judge
    assert f"judge: {SERVED}@{host}:llama-cpp-" in killed.stderr, killed.stderr[-2000:]
    assert "+server-template" not in killed.stderr


def test_resume_completes_the_file_with_nothing_lost_or_duplicated(killed: Run, resumed: Run) -> None:
    rows = resumed.rows
    assert [r["run_id"] for r in rows] == RUN_IDS  # each row once, in order
    for name in SCORERS:
        for row in rows:
            value, error = outcome(row, name)
            assert (value is None) != (error is None), (name, row["run_id"], value, error)
            # every answer parsed and fit its schema: the only unscored rows are the judge-free ones
            assert row[f"{name}_error_kind"] in JUDGE_FREE, (name, row["run_id"], error)
        assert sum(r[f"{name}_score"] is not None for r in rows) >= 6, name
    table = summary(resumed.stdout)
    for name in SCORERS:  # what was stored before the kill is read back, not judged again; the rest is
        kept = [k for k, r in enumerate(killed.rows) if r[f"{name}_error_kind"] != "judge_failed"]
        assert table[name]["resumed"] == str(len(kept)), (name, table[name])
        for field in ("score", "prob_score", "reason"):
            assert [rows[k][f"{name}_{field}"] for k in kept] == [killed.rows[k][f"{name}_{field}"] for k in kept]
    print(f"\nkilled run: {killed.seconds:.1f} s; resumed run: {resumed.seconds:.1f} s")


def test_every_score_has_a_probability_score_in_range(resumed: Run) -> None:
    """`n_probs`, renormalised over the labels: a probability score beside every score that
    reads one, in [0, 1]."""
    for name in SCORERS:
        for row in resumed.rows:
            if row[f"{name}_score"] is None or row["output"] == "":  # decided without the judge
                continue
            prob = row[f"{name}_prob_score"]
            assert prob is not None and 0.0 <= prob <= 1.0, (name, row["run_id"], prob)


def test_agreement_with_the_transformers_engine_is_reported(resumed: Run, folder: Path) -> None:
    """The transformers engine on the same GGUF (dequantized, float32) over the same rows: how
    many of the 24 scores equal the server's, printed (llama.cpp computes in Q4_1 x Q8)."""
    out = folder / "transformers.jsonl"
    command = [sys.executable, "-m", "localjudge.cli", "score", "--model", str(GGUF), "--dtype", "float32",
               "--threads", "2", "--scorer", ",".join(SCORERS), "--data", str(EXAMPLE), "--batch-size", "8",
               "--out", str(out)]
    theirs = {r["run_id"]: r for r in finish(start(command, folder, "transformers"), folder, "transformers",
                                              time.monotonic(), out).rows}
    pairs = [(row[f"{name}_score"], theirs[row["run_id"]][f"{name}_score"]) for row in resumed.rows
             for name in SCORERS]
    probs = [(row[f"{name}_prob_score"], theirs[row["run_id"]][f"{name}_prob_score"]) for row in resumed.rows
             for name in SCORERS]
    same = sum(ours == other for ours, other in pairs)
    gaps = [abs(a - b) for a, b in probs if a is not None and b is not None]
    assert len(pairs) == len(RUN_IDS) * len(SCORERS)
    print(f"\nscores equal to the transformers engine's (same GGUF, float32): {same} of {len(pairs)}; "
          f"prob_score gap: mean {sum(gaps) / max(len(gaps), 1):.3f}, max {max(gaps, default=0.0):.3f} "
          f"over {len(gaps)}; on {machine.cpu()}")
