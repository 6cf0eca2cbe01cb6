"""localjudge's own decode loop (`localjudge.engines.transformers.decode`) against `model.generate`.

The loop must give `generate`'s greedy tokens under the same grammar, row for row (label
probabilities to rounding), while running fewer passes and carrying fewer rows: finished rows
leave, forced tokens are drafted. Checked on a small family fixture here (random weights: any
difference in the arithmetic that mattered would show as a different token), on the real model
(tests/model/test_transformers_judge.py) and on every family (tests/families/). The comparison
itself is tests/engines/decoding.py; the KV cache's own operations, tests/engines/test_kv_cache.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import hallucination_scorer
from localjudge.engines.transformers.decode import DecodeStats, draft_fits
from localjudge.scorers.judged.claims import Claims
from localjudge.scorers.judged.hallucination import HallucinationVerdicts
from localjudge.scoring.schemas import Reason
from tests.conftest import FIXTURES
from tests.engines.decoding import (
    LONGER_RUNS,
    RUNS,
    both_decoders,
    compare_scorers,
    judge_prompts,
    same_tokens,
    small_judge,
)


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


def test_refilled_batch_gives_the_same_tokens_with_at_most_max_rows_a_pass(monkeypatch) -> None:
    """Five rows of three schemas at most two in flight: waiting rows join as others finish,
    their caches stacked onto the batch's (widened with masked positions), and dead positions
    compacted away; every row's tokens are those of one call with all rows at once."""
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
        refill = judge.variant(max_rows=max_rows)
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

    judge = small_judge()
    _, fallback = both_decoders(judge)
    prompts = judge_prompts(LONGER_RUNS)
    schemas = [Claims, HallucinationVerdicts, Reason, Claims, Reason]
    want = fallback.generate(prompts, schemas, max_new_tokens=30)
    chunked = judge.variant(decoder="generate", max_rows=2)
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


def test_label_probabilities_are_read_once_per_verdict_on_a_qwen_tokenizer() -> None:
    """Qwen's `"s` token (quote and a label's start) is a candidate where the verdict's quote is
    still to come: when the judge writes the quote alone, the label is read at the next position
    only, so every verdict has one reading and every scored row its probability score."""
    results = hallucination_scorer(small_judge()).run_batch(RUNS)
    scored = [r for r in results if r.score is not None and r.analyze_step_result]
    assert scored and all(r.prob_score is not None for r in scored), [r.prob_score for r in results]


def test_only_the_last_used_grammars_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's clients may send any number of distinct schemas: the judge keeps the
    `GRAMMARS_KEPT` last used, a grammar used again counting as new."""
    from pydantic import create_model

    from localjudge.engines.transformers import judge as judge_module

    monkeypatch.setattr(judge_module, "GRAMMARS_KEPT", 2)
    judge = small_judge()
    first, second, third = (create_model(f"Schema{i}", **{f"field{i}": (str, ...)}) for i in range(3))
    kept = judge._grammar(first)
    judge._grammar(second)
    assert judge._grammar(first) is kept  # used again: the last used now, not compiled again
    judge._grammar(third)
    assert list(judge._grammars) == [first, third]


def test_a_variant_shares_the_vocabulary_index_and_follows_its_options() -> None:
    """`variant`: the same model with other decoding options, built without re-indexing the
    vocabulary; its identity is a new judge's with those options, the original is unchanged."""
    judge = small_judge()
    twin = judge.variant(decoder="generate", max_rows=2)
    assert twin._llg_tokenizer is judge._llg_tokenizer and twin._grammars is judge._grammars
    assert twin.model is judge.model and twin.tokenizer is judge.tokenizer
    assert twin.decoder == "generate" and twin.max_rows == 2 and judge.decoder == "loop" and judge.max_rows is None
    assert twin.identity == judge.identity + "+generate"
    with pytest.raises(TypeError, match="variant"):
        judge.variant(dtype="bfloat16")
