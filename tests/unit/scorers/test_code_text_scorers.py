"""Mastra's code scorers of texts, with no model: completeness, content similarity, keyword
coverage, textual difference and tone. Score tables worked by hand from Mastra's code (the
differential tier compares them with Mastra's own on the same runs and on real texts)."""

from __future__ import annotations

import pytest

from localjudge.scorers import build_scorer
from localjudge.scorers.coded.completeness import coverage, elements
from localjudge.scorers.coded.js_strings import dice_bigrams, js_trim, squash_spaces, utf16
from localjudge.scorers.coded.keyword_coverage import keywords, stop_words
from localjudge.scorers.coded.textual_difference import changes, ratio
from localjudge.scorers.coded.tone import comparative, lexicon, tokens


def score(name: str, given: str, made: str, **options: object) -> float | None:
    return build_scorer(name, None, options=options).run({"input": given, "output": made}).score


# --- JavaScript's string rules ---------------------------------------------------------------------

def test_js_strings() -> None:
    assert js_trim("\ufeff\u2028 a b\u3000") == "a b"  # JavaScript's trim knows these, Python's strip not all
    assert squash_spaces(" a \t\n b ") == "a b"
    assert utf16("ab") == "ab" and utf16("😀a") == [0xD83D, 0xDE00, ord("a")]


@pytest.mark.parametrize(("first", "second", "expected"), [
    ("night", "nacht", 0.25),  # ni ig gh ht / na ac ch ht: one shared pair of 8
    ("same text", "same text", 1.0), ("", "", 1.0), ("a", "ab", 0.0), ("ab", "", 0.0),
    ("a b c", "abc", 1.0),  # whitespace removed before comparing
    ("aaaa", "aa", 2 * 1 / 4),  # pairs counted with repeats: aa x3 against aa x1
    ("😀a", "😀b", 0.5),  # UTF-16 units, as JavaScript: the emoji's two halves are a shared pair
])
def test_dice_bigrams(first: str, second: str, expected: float) -> None:
    assert dice_bigrams(first, second) == expected


# --- content similarity ----------------------------------------------------------------------------

def test_content_similarity() -> None:
    assert score("content_similarity", "Night", "nacht") == 0.25
    assert score("content_similarity", "ABC", "abc") == 1.0
    assert score("content_similarity", "ABC", "abc", ignore_case=False) == 0.0
    result = build_scorer("content_similarity", None).run({"input": "  Hello\n  World ", "output": "hello world"})
    assert result.preprocess_step_result["processed_input"] == "hello world" and result.score == 1.0
    with pytest.raises(ValueError, match="ignore_case must be true or false"):
        build_scorer("content_similarity", None, options={"ignore_case": "yes"})


# --- textual difference -----------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "made", "expected"), [
    ("abc", "abc", 1.0), ("", "", 1.0), ("", "x", 0.0), ("abcd", "abed", 0.75),  # LCS 3 of 8 characters
    ("kitten", "sitting", 2 * 4 / 13),  # LCS "ittn"; difflib's SequenceMatcher says the same here, not always
    ("😀", "😀!", 2 * 2 / 5),  # UTF-16: the emoji is 2 units
])
def test_ratio(given: str, made: str, expected: float) -> None:
    assert ratio(given, made) == expected


@pytest.mark.parametrize(("given", "made", "expected"), [
    ("the cat sat", "the dog sat", 1), ("a b", "a  b", 1),  # whitespace alone is one change
    ("a b", "a b", 0), ("", "two words", 2), ("one two three", "three two one", 0),  # word order is not a change
    ("a a b", "a b b", 1), ("a b", "a b c d", 2),  # the longer text's words less those matched
])
def test_changes(given: str, made: str, expected: int) -> None:
    assert changes(given, made) == expected


def test_textual_difference_keeps_mastras_measures() -> None:
    result = build_scorer("textual_difference", None, scale=10).run({"input": "ab", "output": "abcd"})
    step = result.preprocess_step_result
    assert (step["ratio"], step["changes"], step["length_diff"], step["confidence"]) == (2 * 2 / 6, 1, 0.5, 0.5)
    assert result.score == 6.67


# --- keyword coverage -------------------------------------------------------------------------------

def test_keywords() -> None:
    assert len(stop_words()) == 570 and {"the", "a's", "zero"} <= stop_words()
    assert keywords("What is the capital of France?") == ["capital", "france"]
    assert keywords("Refund order 1234, (please) refund!") == ["refund", "order"]  # digits alone, repeats dropped
    assert keywords("See <b>https://Example.com/A.</b> now") == ["https://Example.com/A."]  # tags go; an address stays
    assert keywords("HTTPS://x.org") == ["https//xorg"]  # as in keyword-extractor: its address test is lower-case
    assert keywords("'quoted' “curly”") == ["quoted", "curly"]
    assert keywords("") == [] and keywords("the of and") == []


def test_keyword_coverage() -> None:
    assert score("keyword_coverage", "What is the capital of France?", "Paris is the capital.") == 0.5
    assert score("keyword_coverage", "the of and", "Anything at all.") == 1.0  # no input keywords
    assert score("keyword_coverage", "Name three fruits", "Apples, pears.") == 0.0


# --- completeness -----------------------------------------------------------------------------------

def test_elements_imitate_compromise() -> None:
    assert elements("He went home.") == ["he", "go", "home"]  # verbs in their base form
    assert elements("She was eating apples") == ["she", "eat", "apples"]  # the auxiliary of a verb goes
    assert elements("Paris is the capital") == ["paris", "be", "the", "capital"]  # a main "is" is "be"
    assert elements("It doesn't work") == ["it", "does", "not", "work"]  # contractions opened
    assert elements("Café AU lait!") == ["cafe", "au", "lait"]  # diacritics and case dropped


@pytest.mark.parametrize(("original", "simplified", "expected"), [
    ([], [], 1.0), ([], ["x"], 0.0),
    (["cat"], ["cats"], 0.0),  # 3 characters or fewer: exactly
    (["apples"], ["apple"], 1.0),  # longer: contained, and the shorter more than 60% of the longer
    (["running"], ["run"], 0.0), (["cat", "apples", "pear"], ["cat", "pears"], 2 / 3),
])
def test_coverage(original: list[str], simplified: list[str], expected: float) -> None:
    assert coverage(original, simplified) == expected


def test_completeness() -> None:
    assert score("completeness", "The cat sat.", "The cat sat.") == 1.0
    assert score("completeness", "", "") == 1.0 and score("completeness", "", "Something.") == 0.0
    result = build_scorer("completeness", None).run({"input": "Name two apples.", "output": "Two pears."})
    assert result.preprocess_step_result["missing_elements"] == ["name", "apples"] and result.score == 0.33


# --- tone -------------------------------------------------------------------------------------------

def test_sentiment_as_npm_sentiment() -> None:
    assert len(lexicon()) > 3382 and lexicon()["love"] == 3 and lexicon()["😂"] == 1
    assert tokens("Hello, World!\nBye") == ["hello", "world", "bye"]
    assert tokens("a\tb") == ["a\tb"]  # one tab is no separator: only runs of whitespace become a space
    assert comparative("This is great.") == 1.0 and comparative("not good") == -1.5  # a negator flips
    assert comparative("") == 0.0


def test_tone_stability_and_reference() -> None:
    assert score("tone", "", "I love it. I hate it.") == 0.0  # comparatives 1 and -1: variance 1
    assert score("tone", "", "Fine. Fine.") == 1.0
    step = build_scorer("tone", None).run({"output": "Good. Bad. Trailing words"}).preprocess_step_result
    assert step["sentiment_variance"] == 9.0  # good 3 and bad -3 per word; the unpunctuated end is not read
    assert score("tone", "", "This is great.", reference_tone="I am happy") == 1.0
    assert score("tone", "", "This is awful.", reference_tone="I am happy") == 0.0  # 1 - |(-1) - 1|, at least 0
    with pytest.raises(ValueError, match="reference_tone must be text"):
        build_scorer("tone", None, options={"reference_tone": 3})


def test_options_change_the_result_key() -> None:
    """A code scorer's options are part of its prompt hash: results of one are never resumed as another's."""
    plain, referenced = build_scorer("tone", None), build_scorer("tone", None, options={"reference_tone": "x"})
    assert plain.prompt_hash != referenced.prompt_hash and plain.key != referenced.key
    # the same results on the probe runs (no runs of whitespace there): only the options tell them apart
    kept = build_scorer("content_similarity", None, options={"ignore_whitespace": False})
    assert kept._probe == build_scorer("content_similarity", None)._probe
    assert kept.prompt_hash != build_scorer("content_similarity", None).prompt_hash
