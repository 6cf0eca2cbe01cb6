"""The label-choice arithmetic every engine shares (`localjudge.engines.grammar`): a label's
probability renormalised over the labels the grammar allows at its position, and the one reader
that finds the label choices in an answer (the transformers engine's use of it, on real
tokenizers: the engines tier)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from localjudge.engines.grammar import LabelReader, label_mass, read_labels


@pytest.mark.parametrize(("candidates", "quote", "expected"), [
    ([("un", 0.6), ("s", 0.2), ("supp", 0.1)], "", {"supported": 0.3 / 0.9, "unsupported": 0.6 / 0.9}),
    ([('"un', 0.5), ('"supported', 0.5)], '"', {"supported": 0.5, "unsupported": 0.5}),
    ([('"', 0.9), ("un", 0.1)], '"', None),  # no allowed token starts a label after the quote
])
def test_label_mass_renormalises_over_the_labels(candidates: list[tuple[str, float]], quote: str,
                                                 expected: dict[str, float] | None) -> None:
    got = label_mass(candidates, ("supported", "unsupported"), quote)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("bad", [float("inf"), 148.4, -0.5, float("nan")])
def test_a_probability_that_is_no_probability_makes_the_choice_unreadable(bad: float) -> None:
    """An engine's (or a server's) broken number never becomes a label probability: no reading."""
    candidates = [("supported", bad), ("unsupported", 0.25), ("un", 0.5)]
    assert label_mass(candidates, ("supported", "unsupported"), "") is None


@pytest.mark.parametrize("candidates", [
    [("supported", 1.0), ("unsupported", 1.0), ("un", 1.0)],  # a hostile server's: total 3 (read as 0.67)
    [("supported", 0.6), ("unsupported", 0.5)],  # total 1.1
])
def test_candidates_that_are_no_distribution_are_never_renormalised(candidates: list[tuple[str, float]]) -> None:
    """Issue 57 N8: probabilities totalling 3 were renormalised into a reading (prob_score 0.6667)."""
    assert label_mass(candidates, ("supported", "unsupported"), "") is None
    reader = read_labels([('{"verdict":"', []), ("unsupported", candidates), ('"}', [])], VERDICT)
    assert reader.broken and reader.readings == []
    rounded = [("supported", 0.7004), ("unsupported", 0.3)]  # a server's rounding: still read
    read = label_mass(rounded, ("supported", "unsupported"), "")
    assert read == pytest.approx({"supported": 0.7, "unsupported": 0.3}, abs=1e-3)


# --- the one label reader (`LabelReader`, `read_labels`): every engine reads labels through it ---

VERDICT = {"verdict": ("supported", "unsupported")}


def untouched() -> Iterator[tuple[str, float]]:
    """Candidates that fail the test if read: a position where no label is chosen."""
    raise AssertionError("candidates read where no label is chosen")
    yield ("", 0.0)  # a generator: nothing runs until it is read


def test_the_reader_reads_each_label_choice_and_nothing_elsewhere() -> None:
    positions = [('{"verdicts":[{"verdict":"', untouched()), ("un", [("un", 0.7), ("supported", 0.3)]),
                 ("supported", untouched()), ('"},{"verdict":"', untouched()),
                 ("supported", [("un", 0.2), ("supp", 0.8)]), ('"}]}', untouched())]
    reader = read_labels(positions, VERDICT)
    assert reader.readings == [{"supported": 0.3, "unsupported": 0.7}, {"supported": 0.8, "unsupported": 0.2}]
    assert not reader.broken
    assert read_labels([(piece, untouched()) for piece, _ in positions], {}).readings == []  # no label fields


@pytest.mark.parametrize(("chosen", "then", "readings"), [
    ('"', [("un", 0.6), ("sup", 0.4)], [{"supported": 0.4, "unsupported": 0.6}]),  # the quote alone: read next
    ('"un', untouched(), [{"supported": 0.1, "unsupported": 0.9}]),  # the quote and the label's start: read here
])
def test_a_label_is_read_once_where_it_is_chosen(chosen: str, then: Any, readings: list[dict[str, float]]) -> None:
    """Where the grammar has not written the quote, tokens carrying it and a label's start (Qwen's
    `"s`) are candidates; when the judge writes the quote alone, the label is chosen (and read) at
    the next position only."""
    at_quote = [('"', 0.5), ('"un', 0.45), ('"s', 0.05)]
    rest = "unsupported" if chosen == '"' else "supported"  # the label's text after the chosen token
    positions = [('{"verdict":', untouched()), (chosen, at_quote), (rest, then), ('"}', untouched())]
    assert read_labels(positions, VERDICT).readings == readings


def test_the_reader_step_by_step_reads_as_a_finished_answer_does() -> None:
    """The transformers engine reads as it decodes: the candidates before the token is chosen."""
    positions = [('{"verdict":', []), ('"', [('"', 0.5), ('"s', 0.5)]), ("un", [("un", 0.25), ("s", 0.75)]),
                 ("supported", []), ('"}', [])]
    reader = LabelReader(VERDICT)
    for piece, candidates in positions:
        reader.read(iter(candidates))
        reader.feed(piece)
    assert reader.readings == read_labels(positions, VERDICT).readings == [{"supported": 0.75, "unsupported": 0.25}]


@pytest.mark.parametrize("bad", [1.5, float("nan")])
def test_a_broken_number_at_a_choice_is_flagged_and_read_from_nowhere(bad: float) -> None:
    positions = [('{"verdict":"', []), ("unsupported", [("un", bad)]), ('","verdict":"', []),
                 ("supported", [("un", 0.5), ("supported", 0.5)]), ('"}', [("x", bad)])]  # no choice at the end
    reader = read_labels(positions, VERDICT)
    assert reader.broken and reader.readings == [{"supported": 0.5, "unsupported": 0.5}]
    positions[1] = ("unsupported", [("un", 1.0)])
    reader = read_labels(positions, VERDICT)  # a broken number where no label is chosen: not read
    assert not reader.broken and reader.readings == [{"supported": 0.0, "unsupported": 1.0},
                                                     {"supported": 0.5, "unsupported": 0.5}]


class PieceTokenizer:
    """A tokenizer whose tokens are whole pieces of text (`decode` joins them)."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces

    def decode(self, ids: list[int]) -> str:
        return "".join(self.pieces[i] for i in ids)


def test_the_vllm_engine_reads_its_logprobs_through_the_reader() -> None:
    """vLLM's top logprobs per position (-inf: a masked token; None: none given), on a stand-in
    tokenizer: no vLLM, no torch."""
    from localjudge.engines.vllm.judge import VLLMJudge

    pieces = ['{"verdicts":[{"verdict":', '"', "un", "supported", '"},{"verdict":"', '"}]}', '"s', "sup"]
    judge = VLLMJudge.__new__(VLLMJudge)
    judge.tokenizer, judge._token_text = PieceTokenizer(pieces), {}
    ids = [0, 1, 2, 3, 4, 3, 5]
    lp = {t: SimpleNamespace(logprob=0.0) for t in range(len(pieces))}
    logprobs: list[Any] = [{t: lp[t]} for t in ids]
    logprobs[1] = {1: SimpleNamespace(logprob=math.log(0.9)), 6: SimpleNamespace(logprob=math.log(0.1))}  # the quote
    logprobs[2] = {2: SimpleNamespace(logprob=math.log(0.6)), 7: SimpleNamespace(logprob=math.log(0.4)),
                   5: SimpleNamespace(logprob=-math.inf)}
    logprobs[5] = {3: SimpleNamespace(logprob=math.log(0.8)), 2: SimpleNamespace(logprob=math.log(0.2))}
    fields = {"verdict": ("supported", "unsupported")}
    assert judge._label_probs(ids, logprobs, fields) == ({"supported": 0.4, "unsupported": 0.6},
                                                         {"supported": 0.8, "unsupported": 0.2})
    logprobs[5] = None  # no logprobs at the second choice: nothing read there
    assert judge._label_probs(ids, logprobs, fields) == ({"supported": 0.4, "unsupported": 0.6},)
    assert judge._label_probs(ids, [], fields) == ()
