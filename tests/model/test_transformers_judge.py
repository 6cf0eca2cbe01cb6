"""The transformers engine on the real SmolLM2-135M: the prefix cache and the decode loop change no
token (its own loop against `generate`, rows joining in flight), torch's out-of-memory errors
reach the engine as `JudgeOutOfMemory`, and building a judge leaves the caller's objects alone.
Every scorer end to end on this model: tests/model/test_scorers.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import hallucination_scorer, toxicity_scorer
from localjudge.scorers.claims import Claims
from tests.engines.decoding import LONGER_RUNS, compare_scorers

RUNS = [
    {"run_id": "a", "input": "When was the Eiffel Tower completed?",
     "output": "The Eiffel Tower was completed in 1925 in London.",
     "context": "The Eiffel Tower in Paris was completed in 1889."},
    {"run_id": "b", "input": [{"role": "user", "content": "Who wrote Hamlet?"}],
     "output": [{"role": "assistant", "content": "Shakespeare wrote Hamlet. You are an idiot for asking."}],
     "context": ["Hamlet is a tragedy by William Shakespeare."]},
    {"run_id": "c", "input": "Say nothing.", "output": "", "context": "Nothing."},
]


def test_prefix_cache_gives_the_tokens_of_full_prompts(real_judge, model_dir) -> None:
    """The shared-prefix KV cache changes nothing: results (texts, scores, label probabilities)
    of every kind of step equal those of a judge that prefills every full prompt."""
    from localjudge.engines.transformers.judge import TransformersJudge

    plain = TransformersJudge.load(model_dir, dtype="float32", prefix_cache=False)  # as real_judge, on a GPU too
    for factory in (hallucination_scorer, toxicity_scorer):  # faithfulness has hallucination's steps
        cached = [r.to_dict() for r in factory(real_judge).run_batch(RUNS)]
        assert [r.to_dict() for r in factory(plain).run_batch(RUNS)] == cached
    assert real_judge._prefix_caches and not plain._prefix_caches, "the cache was used, and only there"


def test_out_of_memory_in_the_backend_is_the_library_error(real_judge, monkeypatch) -> None:
    """torch's OutOfMemoryError inside `generate` reaches the engine as `JudgeOutOfMemory`, which
    it retries in halves: the engine itself knows nothing of torch."""
    import torch

    from localjudge import score_runs
    from localjudge.judge import JudgeOutOfMemory

    real = real_judge._generate

    def picky(prefix, suffixes, schemas, max_new_tokens):
        if len(suffixes) > 1:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(prefix, suffixes, schemas, max_new_tokens)

    monkeypatch.setattr(real_judge, "_generate", picky)
    with pytest.raises(JudgeOutOfMemory, match="simulated"):
        toxicity_scorer(real_judge).run_batch(RUNS[:2])
    results, summary = score_runs(RUNS[:2], [toxicity_scorer(real_judge)], batch_size=2)
    assert summary["toxicity"].oom_backoffs == 1 and [r.scored for r in results["toxicity"]] == [True, True]


def test_out_of_memory_frees_the_attempts_memory_and_covers_cublas(real_judge, monkeypatch) -> None:
    """The error the backend raises holds no frame of the failed attempt (a chained `from error`
    would keep its cache alive through the back-off); allocation failures that torch reports as a
    plain RuntimeError (cuBLAS, the driver) back off too; any other RuntimeError is no OOM."""
    import weakref

    import torch

    from localjudge.judge import JudgeOutOfMemory

    held: list[weakref.ref[torch.Tensor]] = []

    def failing(message: str, kind: type[Exception]) -> Any:
        def attempt(prefix, suffixes, schemas, max_new_tokens):
            cache = torch.ones(32 * 2**20, dtype=torch.uint8)  # 32 MiB, held by this frame
            held.append(weakref.ref(cache))
            raise kind(message)
        return attempt

    prompts = [[{"role": "user", "content": "hi"}]]
    for message, kind in [("CUDA out of memory (simulated)", torch.OutOfMemoryError),
                          ("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)", RuntimeError),
                          ("CUDA error: out of memory", RuntimeError)]:
        monkeypatch.setattr(real_judge, "_generate", failing(message, kind))
        with pytest.raises(JudgeOutOfMemory) as caught:
            real_judge.generate(prompts, [Claims], max_new_tokens=8)
        assert held[-1]() is None, message  # freed by the time the engine sees the error
        assert caught.value.__cause__ is None and caught.value.__context__ is None
    monkeypatch.setattr(real_judge, "_generate", failing("shape mismatch", RuntimeError))
    with pytest.raises(RuntimeError, match="shape mismatch"):
        real_judge.generate(prompts, [Claims], max_new_tokens=8)


def test_building_a_judge_leaves_the_callers_objects_and_torch_alone(real_judge, model_dir) -> None:
    """The constructor copies the tokenizer it pads (left, EOS as pad) and sets no torch
    thread count: loading and wrapping change nothing the caller holds."""
    import torch
    from transformers import AutoTokenizer

    from localjudge.engines.transformers.judge import TransformersJudge

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    tokenizer.padding_side = "right"
    tokenizer.pad_token = None
    threads = torch.get_num_threads()
    judge = TransformersJudge(real_judge.model, tokenizer, identity="wrapped")
    assert (tokenizer.padding_side, tokenizer.pad_token) == ("right", None)
    assert (judge.tokenizer.padding_side, judge.tokenizer.pad_token) == ("left", tokenizer.eos_token)
    TransformersJudge.load(model_dir, dtype="float32")
    assert torch.get_num_threads() == threads
    assert judge.identity == "wrapped:torch.float32:greedy+repeat-guard-40"
    with pytest.raises(TypeError, match="TransformersJudge.load"):
        TransformersJudge(str(model_dir), tokenizer, identity="x")


def test_decode_loop_gives_generates_tokens_on_the_real_model(real_judge) -> None:
    """Every step of the three scorers on the real model: the own loop's generations equal
    `generate`'s (texts, ends, token counts; label probabilities to rounding), in fewer passes."""
    stats = compare_scorers(real_judge, RUNS)
    assert stats.accepted > 0 and stats.forwards < stats.generate_forwards
    assert stats.row_steps < stats.generate_row_steps


def test_refilled_batches_give_generates_tokens_on_the_real_model(real_judge) -> None:
    """Two rows in flight on the real model, four rows a call: waiting rows join as others
    finish, and every step's generations are still `generate`'s (all rows at once)."""

    refill = real_judge.variant(max_rows=2)
    stats = compare_scorers(refill, LONGER_RUNS[:4])
    assert stats.joins > 0 and stats.row_steps <= 2 * stats.forwards
