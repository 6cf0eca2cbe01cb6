"""The repetition guard (`localjudge.repetition`): free text that starts looping is closed, the JSON
structure untouched.

Here the loop test (`repeats`), what the engine drops and the string tracker on JSON text; the
guard reading words through real tokenizers is tests/engines/test_repeat_guard.py's, and on the
real SmolLM2, whose reasons loop without the guard ("The score is 1. The score is 1. ..."), no
string the judge writes loops with it: tests/model/test_repeat_guard.py.
"""

from __future__ import annotations

import pytest

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
