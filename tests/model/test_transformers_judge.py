"""The transformers engine on the real SmolLM2-135M: the prefix cache and the decode loop change no
token (its own loop, rows joining in flight, against `generate` on full prompts), torch's out-of-memory errors
reach the engine as `JudgeOutOfMemory`, and building a judge leaves the caller's objects alone.
Every scorer end to end on this model: tests/model/test_scorers.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import toxicity_scorer
from localjudge.scorers.judged.claims import Claims
from tests.engines import decoding
from tests.engines.decoding import recorded

RUNS = [
    {"run_id": "a", "input": "When was the Eiffel Tower completed?",
     "output": "The Eiffel Tower was completed in 1925 in London.",
     "context": "The Eiffel Tower in Paris was completed in 1889."},
    {"run_id": "b", "input": [{"role": "user", "content": "Who wrote Hamlet?"}],
     "output": [{"role": "assistant", "content": "Shakespeare wrote Hamlet. You are an idiot for asking."}],
     "context": ["Hamlet is a tragedy by William Shakespeare."]},
    {"run_id": "c", "input": "Say nothing.", "output": "", "context": "Nothing."},
]


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


def test_the_loop_with_prefix_cache_and_refills_gives_generates_tokens_on_the_real_model(real_judge) -> None:
    """Both steps of the toxicity scorer (a verdict with label probabilities for each sentence, a
    reason) on the real model, decoded by the engine's own loop with the shared-prefix KV cache and
    two rows in flight (waiting rows join as others finish): the texts, ends and token counts of
    `generate` prefilling every full prompt, all rows at once; label probabilities to rounding; in
    fewer forward passes. (Each of the three alone, on random-weight fixtures:
    tests/engines/test_decode.py; hallucination's claims, verdicts and reason the same way on every
    family's architecture: tests/families/test_decode_loop.py; the loop on every scorer's prompts:
    the shared run, tests/model/conftest.py. Hallucination's three steps here took 158 s of the CI
    run at 1f5cdcd: the check is on the scorer with the fewest decode steps.)"""
    from tests.engines.decoding import same_tokens

    loop = real_judge.variant(max_rows=2)
    plain = real_judge.variant(decoder="generate", max_rows=None, prefix_cache=False)
    runs = decoding.RUNS  # three rows, two in flight: the third joins
    calls: dict[str, list[Any]] = {"loop": [], "generate": []}
    for name, judge in (("loop", loop), ("generate", plain)):
        recorded(judge, calls[name])
        toxicity_scorer(judge).run_batch(runs)
    same_tokens(calls["loop"], calls["generate"])
    stats = loop.decode_stats
    assert stats.joins > 0 and stats.row_steps <= 2 * stats.forwards
    assert stats.forwards < stats.generate_forwards and stats.accepted > 0
    assert loop._prefix_caches and not plain._prefix_caches, "the cache was used, and only by the loop"
