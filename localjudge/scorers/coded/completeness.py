"""Completeness (Mastra's `createCompletenessScorer`, no model): how much of the input's content
(its words, with verbs in their base form) the output covers.

Inputs: `input` and `output`. Steps: preprocess lists each text's elements; the score is the
share of the input's elements the output covers, as Mastra's `calculateCoverage`: an element of
3 characters or fewer must appear exactly, a longer one matches an output element that contains
it, or is contained in it, when the shorter is more than 60% of the longer. An input with no
elements scores 1 if the output has none either, else 0. Higher is better.

Mastra finds elements with the npm NLP library `compromise` (nouns, verbs turned to their
infinitive, topics and every term, after `toInfinitive` has rewritten the verbs in place). No
Python library tags the same way, so the elements here come from a rule that imitates it: the
words (diacritics removed, lower case, split on anything but a-z and 0-9), contractions opened
("doesn't": does, not), auxiliaries before a verb dropped ("was eating": eat) and every word
that `lemminflect` knows only as a verb put in its base form ("went": go). On real texts the
score equals Mastra's, to two decimals, on the share docs/scorers/code-scorers.md reports.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import BOTH_JOINED, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build, code_scorer
from localjudge.scoring import Results

AUXILIARIES = {"is": "be", "was": "be", "were": "be", "are": "be", "am": "be", "be": "be", "been": "be",
               "being": "be", "has": "have", "have": "have", "had": "have", "will": "", "would": "", "can": "",
               "could": "", "may": "", "might": "", "must": "", "shall": "", "should": ""}  # "": kept as is
CONTRACTED_PRONOUNS = {"it", "that", "what", "there", "here", "he", "she", "who", "where", "how", "let", "this"}


def normalized(text: str) -> str:
    """Mastra's `normalizeString`: NFD, combining marks U+0300-U+036F removed, lower case."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not "\u0300" <= c <= "\u036f").lower()


def _opened(text: str) -> str:
    text = re.sub(r"\b(can|won)['\u2019]t\b", lambda m: {"can": "can not", "won": "will not"}[m.group(1)], text)
    text = re.sub(r"n['\u2019]t\b", " not", text)
    text = re.sub(r"\b(\w+)['\u2019]s\b",
                  lambda m: m.group(1) if m.group(1) in CONTRACTED_PRONOUNS else f"{m.group(1)} s", text)
    return re.sub(r"['\u2019](re|ll|d)\b", "", text)


@functools.lru_cache(maxsize=65536)
def _verb_base(word: str) -> str | None:
    """The base form of a word `lemminflect` knows only as a verb (not as a noun, adjective or
    proper noun); None otherwise."""
    from lemminflect import getAllLemmas  # its tables load on first use

    lemmas = getAllLemmas(word)
    if "VERB" in lemmas and not {"NOUN", "ADJ", "PROPN"} & set(lemmas):
        return str(lemmas["VERB"][0])
    return None


def elements(text: str) -> list[str]:
    """The text's elements, each once, in order of first appearance (see the module docstring)."""
    words = [w for w in re.sub(r"[^a-z0-9]+", " ", _opened(normalized(text.strip()))).split() if w]
    found: list[str] = []
    for i, word in enumerate(words):
        if word in AUXILIARIES:
            following = [w for w in words[i + 1:i + 3] if w != "not"]
            if following and (following[0] in AUXILIARIES or _verb_base(following[0]) is not None):
                continue  # an auxiliary of the verb that follows: compromise keeps only that verb
            found.append(AUXILIARIES[word] or word)
            continue
        found.append(_verb_base(word) or word)
    return list(dict.fromkeys(found))


def coverage(original: list[str], simplified: list[str]) -> float:
    """Mastra's `calculateCoverage`: the share of `original` elements that `simplified` covers."""
    if not original:
        return 1.0 if not simplified else 0.0
    return covered(original, simplified) / len(original)


def covered(original: list[str], simplified: list[str]) -> int:
    """How many `original` elements `simplified` covers (Mastra's matching rule).

    Mastra compares every element with every other (quadratic: hours on a long context). Here
    each side is indexed by length, and a pair is only looked at where the rule can hold: an
    element of length L can contain, or be contained in, only elements of lengths within a
    factor 0.6 of L; for each such length the cheaper of two exact tests runs, the candidates
    of that length searched in the longer text, or the longer text's substrings of that length
    looked up among them. Same count as Mastra's loop, in near-linear time on real texts."""
    wanted = [normalized(element) for element in original]
    made = {normalized(other) for other in simplified}
    long_wanted = {e for e in wanted if len(e) > 3}
    found = _contained(long_wanted, made, keep_longer=True) | _contained(made, long_wanted, keep_longer=False)
    return sum(1 for e in wanted if (e in found if len(e) > 3 else e in made))


def _contained(longer: set[str], shorter: set[str], *, keep_longer: bool) -> set[str]:
    """The elements of `longer` (with `keep_longer`; else those of `shorter`) in a pair that
    matches by Mastra's rule: a `shorter` element inside a `longer` one (of its length or less)
    and more than 0.6 of its length."""
    by_length: dict[int, set[str]] = {}
    for text in shorter:
        by_length.setdefault(len(text), set()).add(text)
    lengths = sorted(by_length)
    hits: set[str] = set()
    for text in longer:
        size = len(text)
        low = bisect.bisect_left(lengths, int(size * 0.6) - 1)  # a little below 0.6: the test below decides
        for length in lengths[low:bisect.bisect_right(lengths, size)]:
            if not length / size > 0.6:
                continue
            candidates = by_length[length]
            if len(candidates) * size <= (size - length + 1) * length:  # search each candidate in the text
                inside = {c for c in candidates if c in text}
            else:  # look each substring of that length up among the candidates
                inside = candidates.intersection(text[i:i + length] for i in range(size - length + 1))
            if inside:
                if keep_longer:
                    hits.add(text)
                    break
                hits.update(inside)
    return hits


def _preprocess(run: Sample, results: Results) -> dict[str, Any]:
    found, made = elements(run.input), elements(run.output)
    present = set(made)
    return {"input_elements": found, "output_elements": made,
            "missing_elements": [e for e in found if e not in present],
            "element_counts": {"input": len(found), "output": len(made)}}


def _score(run: Sample, results: Results) -> float:
    step = results["preprocess_step_result"]
    return coverage(step["input_elements"], step["output_elements"])


def _reason(run: Sample, results: Results) -> str:
    step = results["preprocess_step_result"]
    found, missing = step["input_elements"], step["missing_elements"]
    if not found:
        return "The input has no elements; " + ("nor has the output." if not step["output_elements"]
                                               else "the output has some, so nothing it adds is covered.")
    shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
    return (f"The output covers {covered(found, step['output_elements'])} of the input's {len(found)} elements"
            + (f"; not in it as such: {shown}." if missing else "."))


def completeness_scorer(judge: Judge | None = None, *, scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's completeness scorer (no model: `judge` is not used)."""
    return code_scorer("completeness", code_build(scale, compat), preprocess=_preprocess, score=_score, reason=_reason,
                       reads=("input", "output"), mastra_reading=BOTH_JOINED, positive="complete",
                       description="Share of the input's words and verbs (elements) the output covers")


__all__ = ["completeness_scorer", "coverage", "elements"]
