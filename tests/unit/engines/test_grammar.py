"""The label-choice arithmetic both engines share (`localjudge.engines.grammar`): a label's
probability renormalised over the labels the grammar allows at its position."""

from __future__ import annotations

import pytest

from localjudge.engines.grammar import label_mass


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
