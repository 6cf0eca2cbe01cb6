"""The code scorers give the scores they gave before they were made near-linear (issue 44), and
stay near-linear: each is checked on varied texts against a fingerprint taken with the earlier,
quadratic code and against that code's plain rules (kept here as references), and its work is
counted (Python lines run, passes over a list, the text a regex is given), never timed."""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from localjudge.scorers import build_scorer
from localjudge.scorers.coded import completeness, keyword_coverage, tone
from localjudge.scorers.coded.completeness import covered, normalized
from localjudge.scorers.coded.js_strings import JS_SPACE, js_split_spaces, js_trim, squash_spaces
from localjudge.scorers.coded.keyword_coverage import keywords
from localjudge.scorers.coded.textual_difference import changes, common_subsequence

WORDS = ["the", "cat", "sat", "doesn't", "can't", "won't", "it's", "John's", "they're", "we'll", "I'd", "was",
         "eating", "has", "gone", "will", "be", "is", "went", "ran", "running", "runner", "run", "runs",
         "international", "internationalization", "nation", "nations", "apples", "apple", "café", "naïve", "<b>",
         "</b>", "a", "<", "b", ">", "https://example.com/a.b", "1234", "42nd", "😀", "love", "hate", "good", "not",
         "bad", "great", "awful", "Paris", "capital", "France", "'quoted'", "“curly”", "(please)", "x_y", "@", "#",
         "&", "don't", "abcdefghij", "abcdefgh", "bcdefghi", "cdefghijklmn"]
SEPS = [" ", " ", " ", " ", "  ", "\n", "\t", "\u3000", ". ", "! ", "? ", "... ", ", ", "\n\n", "\ufeff", " \u00a0 "]
DATA = Path(__file__).resolve().parents[3] / "localjudge" / "bench" / "bench_data"


def words(rng: random.Random, count: int, vocabulary: list[str] = WORDS) -> str:
    return "".join(rng.choice(vocabulary) + rng.choice(SEPS) for _ in range(count))


def corpus() -> list[tuple[str, str]]:
    """Pairs of (input, output): real rows of the bench data, made-up texts of every shape the
    scorers' rules care about, and edge cases."""
    rows = [json.loads(line) for name in ("begin/begin.jsonl", "halueval_qa/halueval_qa.jsonl")
            for line in (DATA / name).read_text(encoding="utf-8").splitlines()[:12]]
    pairs = [(row["input"], row["output"]) for row in rows] + [(row["context"], row["output"]) for row in rows]
    rng = random.Random(44)
    for count in (3, 10, 40, 200):
        given = words(rng, count)
        pairs += [(given, words(rng, count)), (given, given.upper()), (given, given[: len(given) // 2])]
    pairs += [("", ""), ("", "x"), ("x", ""), ("a", "a"), ("The cat sat.", "The cat sat."),
              ("no sentence punctuation here at all " * 20, "good words but no end " * 20),
              ("Good. Bad. Trailing words", "Fine! Fine? and then a tail without an end" * 5),
              ("a" + " " * 300 + "b", "\u3000" * 50 + "a b" + "\ufeff" * 50), (" \t\n ", "\n"),
              ("a < b < c < d " * 30, "x <i> y </i> z > w <"), ("<>" * 20 + "text", "<<<>>>"),
              ("abc" * 500, "abc" * 499 + "abd"), ("word" * 300, "wordword words"),
              ("😀 love 😀. hate!", "😀😀 good? not good."), ("He went home. She was eating.", "He goes home.")]
    return pairs


SCORERS: list[tuple[str, dict[str, Any]]] = [
    ("completeness", {}), ("tone", {}), ("tone", {"reference_tone": "I am happy and it is great"}),
    ("textual_difference", {}), ("keyword_coverage", {}), ("content_similarity", {}),
    ("content_similarity", {"ignore_case": False}), ("check_similarity", {"expected": "the cat sat on the mat"}),
    ("check_similarity", {"expected": "good words", "threshold": 0.3}), ("check_includes", {"expected": "cat"}),
    ("check_matches", {"pattern": "\\bcat\\b", "flags": "i"}), ("check_matches", {"pattern": "a.*b", "exact": True}),
]
# sha256 of every scorer's results on the corpus, taken with the code before issue 44's change (3466f71)
FINGERPRINT = "4f97688a39913b681f880d8bb2a5fbc33a3d6b44eb9e5d0f4f7332c2dda5c4da"


def results(name: str, options: dict[str, Any], pairs: list[tuple[str, str]]) -> list[Any]:
    scorer = build_scorer(name, None, options=options)
    out = []
    for given, made in pairs:
        result = scorer.run({"input": given, "output": made})
        out.append([result.score, result.preprocess_step_result, result.reason, result.error])
    return out


def test_the_scores_are_todays() -> None:
    """Every scorer's score, measures and reason on the corpus are what they were before."""
    pairs = corpus()
    found = [[name, options, results(name, options, pairs)] for name, options in SCORERS]
    text = json.dumps(found, sort_keys=True, ensure_ascii=False, default=repr)
    assert hashlib.sha256(text.encode()).hexdigest() == FINGERPRINT


# --- the earlier code's rules, as references ---------------------------------------------------------

def covered_reference(original: list[str], simplified: list[str]) -> int:
    """Mastra's `calculateCoverage` loop, every element against every other."""
    count = 0
    for element in original:
        elem = normalized(element)
        for other in simplified:
            simp = normalized(other)
            if len(elem) <= 3:
                if elem == simp:
                    break
                continue
            longer, shorter = (elem, simp) if len(elem) > len(simp) else (simp, elem)
            if shorter in longer and len(shorter) / len(longer) > 0.6:
                break
        else:
            continue
        count += 1
    return count


def common_words_reference(first: list[str], second: list[str]) -> int:
    """Mastra's `findCommonWords`: each word takes the first unused equal word."""
    used: set[int] = set()
    matched = 0
    for word in first:
        for j, other in enumerate(second):
            if j not in used and word == other:
                matched += 1
                used.add(j)
                break
    return matched


def pieces(rng: random.Random, count: int) -> list[str]:
    """Made-up elements: short words, and longer ones that contain one another."""
    stems = ["inter", "nation", "al", "ization", "run", "ning", "ab", "cdefg", "hij", "x", "yz", "q", "olo"]
    return list(dict.fromkeys("".join(rng.choice(stems) for _ in range(rng.randint(1, 6))) for _ in range(count)))


@pytest.mark.parametrize("seed", range(6))
def test_coverage_as_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    original, simplified = pieces(rng, 400), pieces(rng, 300 + 50 * seed)
    simplified += ["a" * n for n in range(1, 40)] + ["ab" * 60, "abcd" * 40]
    original += ["a" * n for n in range(2, 60, 3)] + ["ab" * 50, "abcd" * 33, "bcd" * 2]
    assert covered(original, simplified) == covered_reference(original, simplified)


@pytest.mark.parametrize("seed", range(4))
def test_changes_as_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    vocabulary = WORDS[: 10 + 10 * seed]
    given, made = words(rng, 600, vocabulary), words(rng, 500, vocabulary)
    first, second = [w for w in js_split_spaces(squash_spaces(given)) if w], [w for w in js_split_spaces(made) if w]
    assert changes(given, made) == max(len(first), len(second)) - common_words_reference(first, second)


@pytest.mark.parametrize("text", ["", " ", "a", " a ", "\ufeff\u2028 a b\u3000", "\x1c a \x1f", " " * 500 + "x",
                                  "x" + "\t" * 500 + "y" + " " * 2, "\u00a0\u1680\u2000\u200a\u202f\u205f x \u3000"])
def test_js_trim_as_the_regex(text: str) -> None:
    assert js_trim(text) == re.sub(f"^{JS_SPACE}+|{JS_SPACE}+$", "", text)


# --- the work grows with the text, not with its square: counted, not timed --------------------------

SCORERS_DIR = str(Path(build_scorer.__code__.co_filename).parent)


def lines_run(call: Callable[[], object]) -> int:
    """How many lines of localjudge's scorers `call` runs (a measure of Python work)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if not frame.f_code.co_filename.startswith(SCORERS_DIR):
            return None
        count += event == "line"
        return tracer

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def made_up(rng: random.Random, count: int) -> list[str]:
    """Distinct made-up words, so that the vocabulary grows with the text as on a long context."""
    return ["".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 5)))
            for _ in range(count)]


@pytest.mark.parametrize(("name", "options"), [(n, o) for n, o in SCORERS if not n.startswith("check_")])
def test_doubling_the_text_doubles_the_work(name: str, options: dict[str, Any]) -> None:
    """Twice the text, about twice the Python lines: a loop over pairs of words (Mastra's) makes it 4x."""
    scorer = build_scorer(name, None, options=options)
    runs = []
    for count in (300, 600):
        rng = random.Random(count)
        given, made = made_up(rng, count), made_up(rng, count // 2)
        made += given[: count // 2]  # half the input's words in the output, in another order
        rng.shuffle(made)
        runs.append({"input": ". ".join(given), "output": " ".join(made) + "."})
    small, large = (lines_run(lambda run=run: scorer.run(run)) for run in runs)
    assert large < 3 * small, (small, large)


def test_normalized_once_per_element(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def counted(text: str) -> str:
        calls.append(text)
        return normalized(text)

    monkeypatch.setattr(completeness, "normalized", counted)
    rng = random.Random(1)
    original, simplified = made_up(rng, 200), made_up(rng, 300)
    covered(original, simplified)
    assert len(calls) == len(original) + len(simplified)


class Recorder:
    """A compiled regex that records the length of each text it is given."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.lengths = pattern, []  # type: list[int]

    def findall(self, text: str) -> list[Any]:
        self.lengths.append(len(text))
        return self.pattern.findall(text)

    def sub(self, repl: str, text: str) -> str:
        self.lengths.append(len(text))
        return self.pattern.sub(repl, text)


def test_tone_gives_the_sentence_regex_no_unpunctuated_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a run with no `.!?` the sentence regex tries every start to the end: it never sees one."""
    recorder = Recorder(tone.SENTENCES)
    monkeypatch.setattr(tone, "SENTENCES", recorder)
    scorer = build_scorer("tone", None)
    head = "I love it. It is bad!"
    for output in (head + " and then words without an end" * 50, "no end at all " * 100, head):
        scorer.run({"output": output})
    assert recorder.lengths == [len(head), 0, len(head)]


def test_keywords_give_the_tag_regex_nothing_after_the_last_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """From each `<` with no `>` after it the tag regex scans to the end: it never sees that part."""
    texts = ["x <b>bold</b> y" + " a < b" * 100, "a < b " * 100]
    expected = [keywords(text) for text in texts]
    recorder = Recorder(keyword_coverage.TAGS)
    monkeypatch.setattr(keyword_coverage, "TAGS", recorder)
    assert [keywords(text) for text in texts] == expected
    assert recorder.lengths == [len("x <b>bold</b>"), 0]


class CountedList(list):  # type: ignore[type-arg]
    """A list that counts the passes made over it."""

    passes = 0

    def __iter__(self) -> Any:
        CountedList.passes += 1
        return super().__iter__()

    def __contains__(self, item: object) -> bool:
        CountedList.passes += 1
        return super().__contains__(item)


def test_keyword_matching_reads_each_list_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching builds one set of the output's keywords, not one per input keyword."""
    found = {text: CountedList(made_up(random.Random(len(text)), 300)) for text in ("input", "output text")}
    monkeypatch.setattr(keyword_coverage, "keywords", lambda text: found[text])
    CountedList.passes = 0
    build_scorer("keyword_coverage", None).run({"input": "input", "output": "output text"})
    assert CountedList.passes <= 8


def test_close_texts_take_the_banded_subsequence(monkeypatch: pytest.MonkeyPatch) -> None:
    """An output that is an edit of its input never takes the full n x m computation; the length
    is the full computation's."""
    from rapidfuzz.distance import LCSseq

    rng = random.Random(3)
    given = " ".join(made_up(rng, 6000))
    edited = list(given)
    for _ in range(300):
        edited[rng.randrange(len(edited))] = rng.choice("xyz ")
    made, other = "".join(edited), " ".join(made_up(rng, 5000))
    expected = [LCSseq.similarity(given, made), LCSseq.similarity(given, other)]
    assert common_subsequence(given, other) == expected[1]

    def refused(*args: Any, **kwargs: Any) -> int:
        raise AssertionError("the full computation")

    monkeypatch.setattr(LCSseq, "similarity", refused)
    assert common_subsequence(given, made) == expected[0]
