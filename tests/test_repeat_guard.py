"""The repetition guard: free text that starts looping is closed, the JSON structure untouched.

Fast: the loop test (`repeats`) and the string tracker on JSON text. Slow: on the real SmolLM2,
whose reasons loop without the guard ("The score is 1. The score is 1. ..."), no string the
judge writes loops with it, and every answer still parses.
"""

from __future__ import annotations

import pytest
import torch

from localjudge.repetition import StringTracker, drop_repeats, repeats


@pytest.mark.parametrize(("text", "loops"), [
    ("The score is 1. The score is 1.", True),
    ("The score is 1.", False),
    ("It is in Paris. It is in", False),  # not yet a whole second run
    ("very very very very", True),
    ("very very good", False),
    ("no no no", False),
    ("a b a b a b a b", True),
    ("The claim is supported. The claim is not supported.", False),
    ("Paris is the capital. It is big and it is old.", False),
    ("one two three four five six seven eight nine ten eleven twelve " * 2, True),
    # the quick start's `moon` faithfulness reason: a 16-word sentence, twice
    ("The context does not mention the moon being made of cheese, so the claim is unsupported. " * 2, True),
    (" ".join(f"w{i}" for i in range(40)) * 2, False),  # no space between the copies: not a repeat of words
    (" ".join(f"w{i}" for i in range(40)) + " " + " ".join(f"w{i}" for i in range(40)), True),
    (" ".join(f"w{i}" for i in range(41)) + " " + " ".join(f"w{i}" for i in range(41)), False),  # over the limit
])
def test_repeats(text: str, loops: bool) -> None:
    assert repeats(text) is loops


@pytest.mark.parametrize(("text", "kept"), [
    ("The score is 1. The score is 1.", "The score is 1."),
    ("The score is 1.  The score is 1. The score is 1.", "The score is 1."),
    ("It is very very very very", "It is very"),
    ("Paris is the capital.", "Paris is the capital."),
    ("  Lead. a b c a b c", "  Lead. a b c"),
])
def test_drop_repeats(text: str, kept: str) -> None:
    assert drop_repeats({"verdicts": [{"reason": text, "verdict": "yes"}], "n": 1}) == {
        "verdicts": [{"reason": kept, "verdict": "yes"}], "n": 1}


def test_the_engine_drops_what_the_guard_leaves(fake_judge) -> None:
    from localjudge import toxicity_scorer

    looped = {"verdicts": [{"verdict": "no", "severity": "none",
                            "reason": "It is polite. It is polite."}]}
    judge = fake_judge(ToxicityVerdicts=looped, Reason={"reason": "The score is 0. The score is 0."})
    result = toxicity_scorer(judge).run({"input": "q", "output": "Hi."})
    assert result.analyze_step_result["verdicts"][0]["reason"] == "It is polite."
    assert result.reason == "The score is 0."


def test_the_tracker_follows_strings_and_escapes() -> None:
    tracker = StringTracker()
    pieces = ['{"verdicts":[{"verdict":"', 'yes', '","reason":"', 'He said \\"hi', '\\" once.', ' The score is 1.',
              ' The score is', ' 1.']
    seen = []
    for piece in pieces:
        tracker.feed(piece)
        seen.append((tracker.inside, tracker.text, tracker.looping))
    assert seen[1] == (True, "yes", False)
    assert seen[4] == (True, 'He said "hi" once.', False)  # escaped quotes do not end the string
    assert seen[-1][2]  # the reason now ends with a repeated run
    tracker.feed('"}]}')
    assert not tracker.inside and not tracker.looping


@pytest.mark.parametrize("family", ["mistral", "qwen2"])
def test_the_guard_reads_words_through_any_tokenizer(family: str, family_dir) -> None:
    """The guard follows the text as the tokens write it, leading spaces included: a
    SentencePiece token decoded alone drops its space, and "toy toy toy toy" would never loop."""
    import llguidance.hf
    from transformers import AutoTokenizer

    from localjudge.engines.transformers.row_grammars import RowGrammars

    tokenizer = AutoTokenizer.from_pretrained(family_dir(family))
    rows = RowGrammars(llguidance.hf.from_tokenizer(tokenizer), ['start: /.*/'], [{}], tokenizer,
                       closers=torch.zeros(len(tokenizer), dtype=torch.bool))
    text = '{"reason":"The toy is red. toy toy toy toy'
    for token in tokenizer.encode(text, add_special_tokens=False):
        rows.feed(0, token)
    assert rows.strings[0].text.endswith("red. toy toy toy toy")
    assert rows.strings[0].looping


@pytest.mark.slow
def test_no_string_loops_on_the_real_model_with_the_guard(real_judge) -> None:
    """The quick start's rows through every scorer: with the guard no claim, verdict reason or
    reason contains a loop. (Without it, on the same rows, 10 of 172 strings and 7 of 24 reasons
    loop: `python benchmarks/bench_loops.py`; removing the guard fails this test.)"""
    import json
    from pathlib import Path

    from localjudge import SCORERS, evaluate
    from localjudge.scorers import build_scorer
    from tests.scorer_options import OPTIONS

    rows = [json.loads(line) for line in (Path(__file__).parent.parent / "examples" / "example.jsonl").open()]
    ev = evaluate(rows, [build_scorer(name, real_judge, options=OPTIONS.get(name)) for name in SCORERS])
    texts = [r.reason or "" for name in SCORERS for r in ev.results[name]]
    texts += [v["reason"] for name in SCORERS for r in ev.results[name]
              for v in (r.analyze_step_result or {}).get("verdicts", [])]
    texts += [c for r in ev.results["hallucination"] for c in (r.preprocess_step_result or {}).get("claims", [])]
    looping = [t for t in texts if any(repeats(" ".join(t.split()[:end])) for end in range(2, len(t.split()) + 1))]
    assert real_judge.repeat_guard and looping == []
