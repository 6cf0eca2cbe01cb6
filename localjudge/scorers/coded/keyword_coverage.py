"""Keyword coverage (Mastra's `createKeywordCoverageScorer`, no model): the share of the input's
keywords that the output uses.

Inputs: `input` and `output`. Keywords are extracted as npm `keyword-extractor` (0.0.28) does
for Mastra, in English: HTML tags removed, words split on single whitespace characters, the
punctuation `. , ; ! ? ( ) : "` and curly quotes removed (a leading or trailing `'` too; a web
address is kept whole), a word of digits alone dropped, lower-cased, and the SMART stop list
(571 words: `python-rake`'s `SmartStopList`, the list keyword-extractor ships) removed. The
score is matched input keywords / input keywords; an input with none scores 1. Higher is
better. The steps are the same as Mastra's, so the score is Mastra's exactly, before rounding.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import BOTH_JOINED, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build, code_scorer
from localjudge.scorers.coded.js_strings import JS_SPACE, js_length, js_trim
from localjudge.scoring import Results

TAGS = re.compile(r"(<([^>]+)>)", re.IGNORECASE)
ADDRESS = re.compile(r"https?://.*")
PUNCTUATION = re.compile("\\.|,|;|!|\\?|\\(|\\)|:|\"|^'|'$|\u201c|\u201d|\u2018|\u2019")


@functools.cache
def stop_words() -> frozenset[str]:
    """The SMART stop list (python-rake's copy, the same 570 words as keyword-extractor's)."""
    from RAKE import SmartStopList

    return frozenset(SmartStopList())


def without_tags(text: str) -> str:
    """`text.replace(/(<([^>]+)>)/ig, '')`, the regex given the text only up to its last `>`:
    after it no tag can end, and from each `<` there the regex would scan to the end
    (quadratic on a long text of `<` with no `>`); the result is the same."""
    end = text.rfind(">") + 1
    return TAGS.sub("", text[:end]) + text[end:]


def keywords(text: str) -> list[str]:
    """keyword-extractor's `extract(text, {language: 'english', remove_digits: true,
    return_changed_case: true, remove_duplicates: true})`."""
    text = js_trim(without_tags(text)) if text else ""
    found: list[str] = []
    for word in re.split(JS_SPACE, text) if text else []:
        address = ADDRESS.search(word) is not None
        if not address:
            word = PUNCTUATION.sub("", word)
        if js_length(word) == 1:
            word = re.sub("_|@|&|#", "", word)
        if word and all("0" <= c <= "9" for c in word):
            word = ""
        if word and word.lower() not in stop_words():
            found.append(word if address else word.lower())
    return list(dict.fromkeys(found))


def _preprocess(run: Sample, results: Results) -> dict[str, Any]:
    reference, response = keywords(run.input), keywords(run.output)
    used = set(response)
    matched = [k for k in reference if k in used]
    return {"reference_keywords": reference, "response_keywords": response, "matched_keywords": matched,
            "total_keywords_length": len(reference), "matched_keywords_length": len(matched)}


def _score(run: Sample, results: Results) -> float:
    step = results["preprocess_step_result"]
    return step["matched_keywords_length"] / step["total_keywords_length"] if step["total_keywords_length"] else 1.0


def _reason(run: Sample, results: Results) -> str:
    step = results["preprocess_step_result"]
    if not step["total_keywords_length"]:
        return "The input has no keywords, so there is nothing to cover."
    matched = set(step["matched_keywords"])
    missing = [k for k in step["reference_keywords"] if k not in matched]
    shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
    return (f"The output uses {step['matched_keywords_length']} of the input's {step['total_keywords_length']} "
            f"keywords" + (f"; not used: {shown}." if missing else "."))


def keyword_coverage_scorer(judge: Judge | None = None, *, scale: float = 1.0,
                            compat: str = "localjudge") -> CodeScorer:
    """Mastra's keyword coverage scorer (no model: `judge` is not used)."""
    return code_scorer("keyword_coverage", code_build(scale, compat), preprocess=_preprocess, score=_score,
                       reason=_reason, reads=("input", "output"),
                       mastra_reading=BOTH_JOINED, positive="covers the input's keywords",
                       description="Share of the input's keywords (stop words removed) that the output uses")


__all__ = ["keyword_coverage_scorer", "keywords", "stop_words", "without_tags"]
