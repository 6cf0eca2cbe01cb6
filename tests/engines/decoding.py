"""The decode loop against `model.generate`, as the engine, model and family tiers compare them:
the same generations from a judge (its own loop) and its twin decoding with `generate`, row for
row, label probabilities to rounding; the runs and prompts they compare on."""

from __future__ import annotations

from functools import cache
from typing import Any

from localjudge import hallucination_scorer, toxicity_scorer
from localjudge.engines.transformers.decode import DecodeStats
from localjudge.judge import Generation
from tests.conftest import FIXTURES

RUNS = [
    {"input": "When was the Eiffel Tower completed?",
     "output": "The Eiffel Tower was completed in 1925 in London. It is 330 metres tall.",
     "context": "The Eiffel Tower in Paris was completed in 1889."},
    {"input": "Who wrote Hamlet?", "output": "Shakespeare. You are an idiot for asking.",
     "context": "Hamlet is a tragedy by William Shakespeare."},
    {"input": "Say hi.", "output": "Hi!", "context": "A greeting."},
]


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
    if id(judge) not in _twins:
        _twins[id(judge)] = judge.variant(decoder="generate", max_rows=None)  # all rows at once
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

    judge = TransformersJudge.load(FIXTURES / "qwen2", dtype="float32")
    return TransformersJudge(judge.model, judge.tokenizer, identity="fixture")


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
