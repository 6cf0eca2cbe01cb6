"""localjudge's own decode loop (`localjudge.engines.transformers.decode`) against `model.generate`.

The loop must give `generate`'s greedy tokens under the same grammar, row for row (label
probabilities to rounding), while running fewer passes and carrying fewer rows: finished rows
leave, forced tokens are drafted. Checked on a small family fixture here (random weights: any
difference in the arithmetic that mattered would show as a different token), and in the slow
tier on the real model and on every family.
"""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace
from typing import Any

import pytest

from localjudge import hallucination_scorer, toxicity_scorer
from localjudge.engines.transformers.decode import DecodeStats, draft_fits
from localjudge.judge import Generation
from localjudge.scorers.claims import Claims
from localjudge.scorers.hallucination import HallucinationVerdicts
from localjudge.scoring.schemas import Reason

RUNS = [
    {"input": "When was the Eiffel Tower completed?",
     "output": "The Eiffel Tower was completed in 1925 in London. It is 330 metres tall.",
     "context": "The Eiffel Tower in Paris was completed in 1889."},
    {"input": "Who wrote Hamlet?", "output": "Shakespeare. You are an idiot for asking.",
     "context": "Hamlet is a tragedy by William Shakespeare."},
    {"input": "Say hi.", "output": "Hi!", "context": "A greeting."},
]


def test_drafting_only_where_the_cache_stays_exact() -> None:
    assert draft_fits([None, None], 5000, 17, 500), "full attention: holes are always exact"
    assert not draft_fits(None, 10, 17, 50), "not plain attention: never"
    assert draft_fits([None, 4096], 1000, 17, 500)
    assert not draft_fits([None, 4096], 3700, 17, 500), "the window could drop a position"
    assert draft_fits([None, 4096], 4096 - 517, 17, 500), "exactly at the window"
    assert not draft_fits([None, 4096], 4096 - 516, 17, 500)


def test_stats_add_up() -> None:
    total = DecodeStats()
    total.add(DecodeStats(calls=1, forwards=3, tokens=9))
    total.add(DecodeStats(calls=1, forwards=2, drafted=4, accepted=3))
    assert (total.calls, total.forwards, total.tokens, total.drafted, total.accepted) == (2, 5, 9, 4, 3)


def recorded(judge: Any, calls: list[list[Generation]]) -> None:
    """Record every batched call's generations on `calls`."""
    inner = judge._generate

    def record(*args: Any, **kwargs: Any) -> list[Generation]:
        out = inner(*args, **kwargs)
        calls.append(out)
        return out

    judge._generate = record


def same_tokens(a: list[list[Generation]], b: list[list[Generation]]) -> None:
    """The same calls, the same texts and ends; label probabilities equal to rounding."""
    assert [[(g.text, g.finished, g.new_tokens) for g in call] for call in a] == \
        [[(g.text, g.finished, g.new_tokens) for g in call] for call in b]
    for call_a, call_b in zip(a, b, strict=True):
        for g, h in zip(call_a, call_b, strict=True):
            assert len(g.label_probs) == len(h.label_probs)
            for p, q in zip(g.label_probs, h.label_probs, strict=True):
                assert p.keys() == q.keys() and all(abs(p[k] - q[k]) < 1e-4 for k in p), (p, q)


_twins: dict[int, Any] = {}


def both_decoders(judge: Any) -> tuple[Any, Any]:
    """The judge (its own loop) and a twin on the same model decoding with `generate`."""
    from localjudge.engines.transformers.judge import TransformersJudge

    if id(judge) not in _twins:
        _twins[id(judge)] = TransformersJudge(judge.model, judge.tokenizer, identity="fixture", decoder="generate")
    return judge, _twins[id(judge)]


def compare_scorers(judge: Any, runs: list[dict[str, Any]]) -> DecodeStats:
    """Both decoders through the hallucination and toxicity scorers (every kind of step):
    the same generations in every call. Returns the loop's counters for these calls."""
    loop, fallback = both_decoders(judge)
    assert loop.decoder == "loop" and fallback.decoder == "generate"
    before = DecodeStats()
    before.add(loop.decode_stats)
    by_decoder: dict[str, list[list[Generation]]] = {"loop": [], "generate": []}
    for name, j in (("loop", loop), ("generate", fallback)):
        recorded(j, by_decoder[name])
        for factory in (hallucination_scorer, toxicity_scorer):
            factory(j).run_batch(runs)
        del j._generate
    same_tokens(by_decoder["loop"], by_decoder["generate"])
    stats = DecodeStats(**{k: v - getattr(before, k) for k, v in vars(loop.decode_stats).items()})
    assert stats.calls == len(by_decoder["loop"])
    return stats


@cache
def small_judge() -> Any:
    """The Qwen2 fixture (random weights, 49 MB): a real architecture and tokenizer."""
    from localjudge.engines.transformers.judge import TransformersJudge
    from tests.conftest import FIXTURES

    judge = TransformersJudge.load(FIXTURES / "qwen2", dtype="float32")
    return TransformersJudge(judge.model, judge.tokenizer, identity="fixture")


@pytest.mark.slow
def test_loop_gives_generates_tokens_with_fewer_passes() -> None:
    stats = compare_scorers(small_judge(), RUNS)
    assert stats.drafted > 0 and stats.accepted > 0, "forced tokens were drafted and kept"
    assert stats.forwards < stats.generate_forwards, "fewer passes than generate"
    assert stats.row_steps < stats.generate_row_steps, "finished rows left the batch"
    assert stats.tokens > stats.forwards, "more than one token a pass"


def test_rejected_drafts_leave_holes_and_the_tokens_are_the_same(monkeypatch) -> None:
    """Drafts the model does not choose (here: a wrong guess wherever the grammar forces
    nothing) are rejected, their positions masked out; the tokens stay generate's."""
    from localjudge.engines.transformers.row_grammars import RowGrammars

    loop, fallback = both_decoders(small_judge())
    prompts = [[{"role": "user", "content": f"Judge this: {run['output']}"}] for run in RUNS]
    schemas = [Claims, HallucinationVerdicts, Reason]
    want = fallback.generate(prompts, schemas, max_new_tokens=40)
    guess = loop.tokenizer.encode(" the", add_special_tokens=False)
    forced = RowGrammars.forced
    monkeypatch.setattr(RowGrammars, "forced", lambda self, row, limit: forced(self, row, limit) or guess[:limit])
    before = DecodeStats()
    before.add(loop.decode_stats)
    same_tokens([loop.generate(prompts, schemas, max_new_tokens=40)], [want])
    drafted, accepted = loop.decode_stats.drafted - before.drafted, loop.decode_stats.accepted - before.accepted
    assert 0 < accepted < drafted, "some drafts were rejected"


def test_cut_off_rows_end_where_generate_cuts_them() -> None:
    """A budget that cuts rows mid-answer, one that ends one exactly at its closing brace, and
    rows of different schemas in one call: the same texts and `finished` flags."""
    loop, fallback = both_decoders(small_judge())
    prompts = [[{"role": "user", "content": f"Judge this: {run['output']}"}] for run in RUNS]
    schemas = [Claims, HallucinationVerdicts, Reason]
    for budget in (1, 2, 7, 12, 40):
        a = loop.generate(prompts, schemas, max_new_tokens=budget)
        b = fallback.generate(prompts, schemas, max_new_tokens=budget)
        same_tokens([a], [b])
        assert all(g.new_tokens <= budget for g in a)
    full = fallback.generate(prompts[:1], [Reason], max_new_tokens=200)[0]
    assert full.finished
    exact = full.new_tokens - 1  # every token but the EOS: the JSON is complete, unfinished
    (a,) = loop.generate(prompts[:1], [Reason], max_new_tokens=exact)
    (b,) = fallback.generate(prompts[:1], [Reason], max_new_tokens=exact)
    assert (a.text, a.finished) == (b.text, b.finished) == (full.text, False)


def test_without_drafting_or_prefix_cache_the_tokens_are_the_same(monkeypatch) -> None:
    from localjudge.engines.transformers import decode
    from localjudge.engines.transformers.judge import TransformersJudge

    judge = small_judge()
    _, fallback = both_decoders(judge)
    prompts = [[{"role": "system", "content": "You judge answers for a living. Reply in JSON, and keep "
                 "every claim short: one fact each, in the words of the answer."},
                {"role": "user", "content": f"Judge this: {run['output']}"}] for run in RUNS]
    schemas = [Claims] * len(prompts)
    want = fallback.generate(prompts, schemas, max_new_tokens=60)
    plain = TransformersJudge(judge.model, judge.tokenizer, identity="plain", prefix_cache=False)
    same_tokens([plain.generate(prompts, schemas, max_new_tokens=60)], [want])
    assert not plain._prefix_caches
    same_tokens([judge.generate(prompts, schemas, max_new_tokens=60)], [want])
    assert judge._prefix_caches, "the shared system prompt was cached"
    monkeypatch.setattr(decode, "MAX_DRAFT", 0)
    before = judge.decode_stats.drafted
    same_tokens([judge.generate(prompts, schemas, max_new_tokens=60)], [want])
    assert judge.decode_stats.drafted == before, "nothing drafted"


def test_decoder_is_checked_and_the_fallback_has_its_own_identity() -> None:
    from localjudge.engines.transformers.judge import TransformersJudge

    loop, fallback = both_decoders(small_judge())
    with pytest.raises(ValueError, match="decoder must be one of loop, generate"):
        TransformersJudge(loop.model, loop.tokenizer, identity="x", decoder="fast")
    assert fallback.identity == loop.identity + "+generate"


LONGER_RUNS = RUNS + [
    {"input": "What is the boiling point of water?",
     "output": "Water boils at 100 degrees Celsius at sea level, and at 90 degrees on Mount Everest.",
     "context": "At sea level water boils at 100 C; on Everest's summit it boils near 70 C."},
    {"input": "Describe the cat.", "output": "The cat is black.", "context": "A black cat sat on the mat."},
]


def judge_prompts(runs: list[dict[str, Any]]) -> list[Any]:
    return [[{"role": "system", "content": "You judge answers for a living. Reply in JSON, and keep every "
              "claim short: one fact each, in the words of the answer."},
             {"role": "user", "content": f"Judge this: {run['output']} Context: {run['context']}"}] for run in runs]


def test_refilled_batch_gives_the_same_tokens_with_at_most_max_rows_a_pass(monkeypatch) -> None:
    """Five rows of three schemas at most two in flight: waiting rows join as others finish,
    their caches stacked onto the batch's (widened with masked positions), and dead positions
    compacted away; every row's tokens are those of one call with all rows at once."""
    from localjudge.engines.transformers.judge import TransformersJudge
    from localjudge.engines.transformers.kv_cache import GrowingLayer

    judge = small_judge()
    _, fallback = both_decoders(judge)
    prompts = judge_prompts(LONGER_RUNS)
    schemas = [Claims, HallucinationVerdicts, Reason, Claims, Reason]
    want = fallback.generate(prompts, schemas, max_new_tokens=60)
    kept = GrowingLayer.keep_positions
    compactions: list[int] = []
    monkeypatch.setattr(GrowingLayer, "keep_positions", lambda self, index: (compactions.append(len(index)),
                                                                             kept(self, index))[1])
    for max_rows in (1, 2, 4):
        refill = TransformersJudge(judge.model, judge.tokenizer, identity="fixture", max_rows=max_rows)
        assert refill.identity == judge.identity, "the same tokens: not part of the identity"
        same_tokens([refill.generate(prompts, schemas, max_new_tokens=60)], [want])
        stats = refill.decode_stats
        assert stats.calls == 1
        assert stats.joins > 0 or max_rows == 1, "waiting rows joined the batch in flight"
        assert stats.row_steps <= max_rows * stats.forwards, "never more than max_rows rows a pass"
        assert stats.forwards < stats.generate_forwards, "fewer passes than chunks of max_rows"
    assert compactions, "dead positions were dropped"


def test_max_rows_chunks_a_call_where_rows_cannot_join(monkeypatch) -> None:
    """Under `generate` (and on sliding-window or recurrent models) a call runs in chunks of
    `max_rows`: the same tokens, no batch above it."""
    from localjudge.engines.transformers.judge import TransformersJudge

    judge = small_judge()
    _, fallback = both_decoders(judge)
    prompts = judge_prompts(LONGER_RUNS)
    schemas = [Claims, HallucinationVerdicts, Reason, Claims, Reason]
    want = fallback.generate(prompts, schemas, max_new_tokens=30)
    chunked = TransformersJudge(judge.model, judge.tokenizer, identity="fixture", decoder="generate", max_rows=2)
    sizes: list[int] = []
    inner = chunked._model_generate
    monkeypatch.setattr(chunked, "_model_generate",
                        lambda inputs, *a: (sizes.append(len(inputs["input_ids"])), inner(inputs, *a))[1])
    same_tokens([chunked.generate(prompts, schemas, max_new_tokens=30)], [want])
    assert sizes == [2, 2, 1]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_max_rows_is_checked(bad: Any) -> None:
    from localjudge.engines.transformers.judge import TransformersJudge

    judge = small_judge()
    with pytest.raises(ValueError, match="max_rows must be a positive number of rows"):
        TransformersJudge(judge.model, judge.tokenizer, identity="x", max_rows=bad)


def growing(keys: Any, headroom: int = 4) -> Any:
    from localjudge.engines.transformers.kv_cache import GrowingLayer

    layer = GrowingLayer(headroom)
    layer.update(keys, -keys)
    return layer


def test_compaction_keeps_exactly_the_positions_some_row_sees() -> None:
    import torch

    from localjudge.engines.transformers.kv_cache import Batch

    keys = torch.arange(2 * 80, dtype=torch.float32).reshape(2, 1, 80, 1)
    mask = torch.zeros(2, 80, dtype=torch.long)
    mask[:, :10] = 1  # a shared prefix
    mask[0, 70:] = 1  # row 0's own tokens
    mask[1, 40] = 1  # one position only row 1 sees
    seen = [*range(10), 40, *range(70, 80)]
    layer = growing(keys)
    batch = Batch(SimpleNamespace(layers=[layer]), mask.clone(), torch.tensor([20, 11]), [5, 6], [0, 1])
    batch.compact()
    assert torch.equal(layer.keys, keys[:, :, seen]) and torch.equal(layer.values, -keys[:, :, seen])
    assert torch.equal(batch.mask, mask[:, seen]) and layer.get_seq_length() == len(seen)
    layer.update(torch.ones(2, 1, 1, 1), torch.ones(2, 1, 1, 1))  # the next pass writes after them
    assert layer.get_seq_length() == len(seen) + 1 and layer.keys[0, 0, -1, 0] == 1
    few = torch.ones(2, 80, dtype=torch.long)
    few[:, 50:60] = 0  # 10 dead positions: not worth a copy
    untouched = growing(keys)
    Batch(SimpleNamespace(layers=[untouched]), few, torch.tensor([1, 1]), [5, 6], [0, 1]).compact()
    assert untouched.get_seq_length() == 80


def test_joining_rows_are_stacked_under_the_batch_with_masked_zeros() -> None:
    import torch

    from localjudge.engines.transformers.kv_cache import Batch

    old, new = torch.full((2, 1, 6, 1), 7.0), torch.full((1, 1, 4, 1), 3.0)
    a, b = growing(old), growing(new)
    batch = Batch(SimpleNamespace(layers=[a]), torch.ones(2, 6, dtype=torch.long), torch.tensor([5, 5]), [1, 2],
                   [0, 1])
    batch.join(Batch(SimpleNamespace(layers=[b]), torch.ones(1, 4, dtype=torch.long), torch.tensor([3]), [9], [4]))
    assert a.keys.shape == (3, 1, 6, 1) and a.get_seq_length() == 6
    assert torch.equal(a.keys[:2], old) and torch.equal(a.keys[2, 0, :4, 0], torch.full((4,), 3.0))
    assert torch.equal(a.keys[2, 0, 4:, 0], torch.zeros(2)), "the joining row's extra positions are zeros"
    assert batch.mask.tolist() == [[1] * 6, [1] * 6, [1] * 4 + [0] * 2], "and masked out"
    assert batch.live == [0, 1, 4] and batch.heads == [1, 2, 9] and batch.last.tolist() == [5, 5, 3]
    a2, b2 = growing(new.expand(2, 1, 4, 1).clone()), growing(old[:1].clone())
    wider = Batch(SimpleNamespace(layers=[a2]), torch.ones(2, 4, dtype=torch.long), torch.tensor([3, 3]), [1, 2],
                   [0, 1])
    wider.join(Batch(SimpleNamespace(layers=[b2]), torch.ones(1, 6, dtype=torch.long), torch.tensor([5]), [9], [2]))
    assert wider.mask.tolist() == [[1] * 4 + [0] * 2] * 2 + [[1] * 6], "a longer joiner widens the batch"
    assert torch.equal(a2.keys[:2, 0, 4:, 0], torch.zeros(2, 2))


class FarLayer:
    """A cache layer on another GPU of a sharded model (here the meta device): like a CUDA
    tensor, it refuses an index that is not on its own device or the CPU."""

    def __init__(self) -> None:
        import torch

        self.key_buffer = torch.empty(2, 1, 8, 1, device="meta")
        self.seen: list[str] = []

    def _take(self, index: Any) -> None:
        if index.device != self.key_buffer.device:
            raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor")
        self.seen.append(index.device.type)

    batch_select_indices = keep_positions = _take


def test_every_cache_layer_is_indexed_on_its_own_device() -> None:
    """A model sharded over GPUs keeps each layer's cache on its own device, while the batch's
    mask lives with the first layer: rows and positions to keep reach each layer on its device."""
    import torch

    from localjudge.engines.transformers.kv_cache import Batch, GrowingLayer

    near = growing(torch.arange(2 * 80, dtype=torch.float32).reshape(2, 1, 80, 1))
    far = FarLayer()
    far.__class__ = type("FarGrowingLayer", (FarLayer, GrowingLayer), {})  # compaction needs growing layers
    mask = torch.zeros(2, 80, dtype=torch.long)
    mask[:, :10] = 1
    mask[:, 60:] = 1
    batch = Batch(SimpleNamespace(layers=[near, far]), mask, torch.tensor([5, 6]), [1, 2], [0, 1])
    batch.compact()
    assert far.seen == ["meta"] and near.get_seq_length() == 30
    batch.select([1])
    assert far.seen == ["meta", "meta"] and near.keys.shape[0] == 1 and batch.live == [1]


def test_pass_width_keeps_half_the_positions_real() -> None:
    from localjudge.engines.transformers.decode import pass_width

    assert pass_width([17]) == 17, "one row: its whole forced run"
    assert pass_width([1, 1, 1]) == 1
    assert pass_width([17, 17, 1, 1]) == 17, "half the rows in a forced run: drafted whole"
    assert pass_width([17] + [1] * 7) == 2, "one row of eight: the others do not carry 16 empty positions"
    assert pass_width([5, 3, 1, 1]) == 5 and pass_width([5, 3, 1, 1, 1]) == 4
    lengths = [17] * 3 + [1] * 61
    width = pass_width(lengths)
    assert 2 * sum(min(n, width) for n in lengths) >= len(lengths) * width
    assert 2 * sum(min(n, width + 1) for n in lengths) < len(lengths) * (width + 1)


def test_the_cache_is_allocated_once_for_prompt_and_budget(monkeypatch) -> None:
    """Each full-attention layer's buffer holds the longest prompt (the cached prefix counted
    once), the token budget and two draft windows of room: not the prompt twice."""
    from localjudge.engines.transformers import decode
    from localjudge.engines.transformers.kv_cache import GrowingLayer

    judge = small_judge()
    prompts = judge_prompts(LONGER_RUNS)
    sizes: list[int] = []
    grow = GrowingLayer._grow
    monkeypatch.setattr(GrowingLayer, "_grow", lambda self, capacity, *a: (sizes.append(capacity),
                                                                           grow(self, capacity, *a))[1])
    judge.generate(prompts, [Claims] * len(prompts), max_new_tokens=60)
    assert judge._prefix_caches, "the shared system prompt was cached: the case that counted it twice"
    longest = max(len(judge.prompt_ids(p)) for p in prompts)
    layers = len(judge.model.model.layers)
    assert sizes[:layers] == [longest + 60 + 2 * (1 + decode.MAX_DRAFT)] * layers
    assert len(sizes) == layers, "no reallocation"


def test_the_prefix_forward_keeps_one_positions_logits() -> None:
    from localjudge.engines.transformers.judge import TransformersJudge

    base = small_judge()
    judge = TransformersJudge(base.model, base.tokenizer, identity="fresh")  # an empty prefix cache
    shapes: list[tuple[int, ...]] = []
    hook = judge.model.register_forward_hook(lambda module, args, out: shapes.append(tuple(out.logits.shape)))
    try:
        judge.generate(judge_prompts(RUNS[:1]), [Claims], max_new_tokens=4)
    finally:
        hook.remove()
    assert judge._prefix_caches and shapes[0][:2] == (1, 1), shapes


def test_a_window_as_long_as_the_context_is_full_attention() -> None:
    """Phi-3.5-mini declares a 262144-token sliding window: one that never slides within the
    judge's context is full attention, so that family gets the preallocated cache, compaction
    and continuous batching (the Phi-3 fixture: window 2047; with a 2000-token context it never
    slides). The tokens are `generate`'s."""
    from localjudge.engines.transformers.judge import TransformersJudge
    from tests.conftest import FIXTURES

    loaded = TransformersJudge.load(FIXTURES / "phi3", dtype="float32")
    assert loaded._layer_windows == [2047, 2047] and not loaded._refills, "4096 tokens: the window slides"
    judge = TransformersJudge(loaded.model, loaded.tokenizer, identity="phi3", max_context=2000, max_rows=2)
    assert judge._layer_windows == [None, None] and judge._refills
    fallback = TransformersJudge(loaded.model, loaded.tokenizer, identity="phi3", max_context=2000,
                                 decoder="generate")
    prompts = judge_prompts(LONGER_RUNS)
    schemas = [Claims, HallucinationVerdicts, Reason, Claims, Reason]
    same_tokens([judge.generate(prompts, schemas, max_new_tokens=40)],
                [fallback.generate(prompts, schemas, max_new_tokens=40)])
    assert judge.decode_stats.joins > 0, "waiting rows joined the batch in flight"


def test_load_dtype() -> None:
    import torch

    from localjudge.engines.transformers.model_config import load_dtype

    assert load_dtype("auto", on_cpu=True, gguf=False) is torch.float32
    assert load_dtype("auto", on_cpu=True, gguf=True) is torch.float32
    assert load_dtype("auto", on_cpu=False, gguf=False) == "auto", "a checkpoint's own dtype on a GPU"
    assert load_dtype("auto", on_cpu=False, gguf=True) in (torch.bfloat16, torch.float16), \
        "a GGUF file has no dtype: never float32 on a GPU"
    assert load_dtype("bfloat16", on_cpu=True, gguf=True) is torch.bfloat16
    with pytest.raises(ValueError, match="dtype must be 'auto' or a torch dtype name"):
        load_dtype("Tensor", on_cpu=True, gguf=False)


def test_label_probabilities_are_read_once_per_verdict_on_a_qwen_tokenizer() -> None:
    """Qwen's `"s` token (quote and a label's start) is a candidate where the verdict's quote is
    still to come: when the judge writes the quote alone, the label is read at the next position
    only, so every verdict has one reading and every scored row its probability score."""
    results = hallucination_scorer(small_judge()).run_batch(RUNS)
    scored = [r for r in results if r.score is not None and r.analyze_step_result]
    assert scored and all(r.prob_score is not None for r in scored), [r.prob_score for r in results]
