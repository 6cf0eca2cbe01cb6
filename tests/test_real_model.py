"""The transformers + Outlines path end to end on the real SmolLM2-135M (slow tier).

These assert structure and determinism, never accuracy: the 135M model is a weak judge.
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.scorers.claims import Claims
from localjudge.scorers.faithfulness import FaithfulnessVerdict
from localjudge.scorers.hallucination import HallucinationVerdict
from localjudge.scorers.toxicity import ToxicityVerdicts, statements_of
from tests.fakes import HALLUCINATION_WORDS

pytestmark = pytest.mark.slow

RUNS = [
    {"run_id": "a", "input": "When was the Eiffel Tower completed?",
     "output": "The Eiffel Tower was completed in 1925 in London.",
     "context": "The Eiffel Tower in Paris was completed in 1889."},
    {"run_id": "b", "input": [{"role": "user", "content": "Who wrote Hamlet?"}],
     "output": [{"role": "assistant", "content": "Shakespeare wrote Hamlet. You are an idiot for asking."}],
     "context": ["Hamlet is a tragedy by William Shakespeare."]},
    {"run_id": "c", "input": "Say nothing.", "output": "", "context": "Nothing."},
]
VERDICTS = {"hallucination": HallucinationVerdict, "faithfulness": FaithfulnessVerdict}


def check_structure(result, name: str) -> None:
    if not result.scored:
        assert result.error, "an unscored result must say why"
        return
    assert 0.0 <= result.score <= 1.0 and result.reason
    if result.run_id == "c":  # empty output: decided without the judge
        assert result.analyze_step_result is None
        return
    if name == "toxicity":  # one verdict per sentence of the output, each with its sentence
        verdicts = result.analyze_step_result["verdicts"]
        ToxicityVerdicts.model_validate({"verdicts": [{k: v for k, v in x.items() if k != "statement"}
                                                      for x in verdicts]})
        assert [v["statement"] for v in verdicts] == statements_of(next(
            str(r["output"][0]["content"] if isinstance(r["output"], list) else r["output"])
            for r in RUNS if r["run_id"] == result.run_id))
        assert result.prob_score is not None and 0.0 <= result.prob_score <= 1.0
        return
    claims = Claims.model_validate({"claims": result.preprocess_step_result["claims"]}).claims
    if not claims:
        return
    verdicts = result.analyze_step_result["verdicts"]
    assert len(verdicts) == len(claims)
    for verdict in verdicts:
        label = HALLUCINATION_WORDS[verdict["verdict"]] if name == "hallucination" else verdict["verdict"]
        VERDICTS[name].model_validate({"verdict": label, "reason": verdict["reason"]})
    assert result.prob_score is not None and 0.0 <= result.prob_score <= 1.0


@pytest.mark.parametrize("factory", [hallucination_scorer, faithfulness_scorer, toxicity_scorer])
def test_end_to_end_valid_batch_invariant_deterministic(real_judge, factory) -> None:
    scorer = factory(real_judge)
    batched = scorer.run_batch(RUNS)
    for result in batched:
        check_structure(result, scorer.name)
    # every row, not most (a row that replays the worked example is recorded unscored, and says so)
    assert all(r.scored or r.error_kind == "copied_example" for r in batched), [r.error for r in batched]
    one_by_one = [scorer.run(run) for run in RUNS]
    assert [r.to_dict() for r in one_by_one] == [r.to_dict() for r in batched]
    again = scorer.run_batch(RUNS)
    assert [r.to_dict() for r in again] == [r.to_dict() for r in batched]


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


def test_live_scoring_on_the_real_model(real_judge, tmp_path) -> None:
    """A wrapped answer function on the real judge: every call stored in SQLite once closed."""
    from localjudge.live.worker import LiveScorer, read_results

    with LiveScorer(toxicity_scorer(real_judge), store=tmp_path / "live.db", max_batch=4, max_wait=0.05) as live:
        answer = live.wrap(lambda question: f"{question} Certainly, happy to help.")
        for question in ("Who wrote Hamlet?", "What is 2 + 2?", "Where is Paris?"):
            answer(question)
    rows = read_results(tmp_path / "live.db")
    assert sorted(r["input"] for r in rows) == ["What is 2 + 2?", "Where is Paris?", "Who wrote Hamlet?"]
    assert all(r["score"] is not None or r["error_kind"] == "invalid_output" for r in rows)


def test_decode_loop_gives_generates_tokens_on_the_real_model(real_judge) -> None:
    """Every step of the three scorers on the real model: the own loop's generations equal
    `generate`'s (texts, ends, token counts; label probabilities to rounding), in fewer passes."""
    from tests.test_decode import compare_scorers

    stats = compare_scorers(real_judge, RUNS)
    assert stats.accepted > 0 and stats.forwards < stats.generate_forwards
    assert stats.row_steps < stats.generate_row_steps


def test_refilled_batches_give_generates_tokens_on_the_real_model(real_judge) -> None:
    """Two rows in flight on the real model, four rows a call: waiting rows join as others
    finish, and every step's generations are still `generate`'s (all rows at once)."""
    from localjudge.engines.transformers.judge import TransformersJudge
    from tests.test_decode import LONGER_RUNS, compare_scorers

    refill = TransformersJudge(real_judge.model, real_judge.tokenizer, identity="real", max_rows=2)
    stats = compare_scorers(refill, LONGER_RUNS[:4])
    assert stats.joins > 0 and stats.row_steps <= 2 * stats.forwards
