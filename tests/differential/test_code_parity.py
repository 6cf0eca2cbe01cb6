"""Mastra's code scorers and checks beside localjudge's: each case gives the same score (Mastra's,
rounded to two decimals: the `unrounded` difference) with the same measures, or the pinned
outcomes of a documented difference; on a few hundred real texts the ported scorers agree on
every run, and completeness on the share docs/scorers/code-scorers.md reports."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from localjudge.samples import InvalidRunError
from localjudge.scorers import CODE_SCORERS, build_scorer
from localjudge.scoring import round_half_up
from tests.differential.agreement import AGREEMENT, SCORERS, runs
from tests.differential.cases_code import CODE_CASES, CODE_FACTORIES, SAME, CodeCase
from tests.differential.differences import DIFFERENCES
from tests.differential.parity import REFUSED, ROOT, Differs, mastra_outcome, mastra_refusal
from tests.differential.refusals import refusal_problem


def local_result(case: CodeCase, compat: str = "localjudge") -> tuple[Any, Any]:
    """(outcome, result): localjudge's score, or `REFUSED` for a run refused or left unscored."""
    try:
        result = build_scorer(case.scorer, None, options=case.options, compat=compat).run(case.run)
    except (InvalidRunError, ValueError) as error:
        return REFUSED, error
    return (REFUSED if result.score is None else result.score), result


def check_refusals(case: CodeCase, found: dict[str, Any], ours: Any, result: Any, *, strict: bool) -> None:
    """Each side that refuses says the case's pinned reason (tests/differential/refusals.py)."""
    said = None
    if ours == REFUSED:
        said = (f"{type(result).__name__}: {result}" if isinstance(result, Exception)
                else f"unscored ({result.error_kind}): {result.error}")
    problems = [refusal_problem(case.id, "mastra", mastra_refusal(found) if mastra_outcome(found) == REFUSED else None,
                                strict=strict), refusal_problem(case.id, "local", said, strict=strict)]
    assert not any(problems), "\n".join(p for p in problems if p)


@pytest.mark.parametrize("case", CODE_CASES, ids=lambda c: c.id)
def test_code_case(case: CodeCase, mastra: dict[str, dict[str, Any]]) -> None:
    found = mastra[case.id]
    theirs = mastra_outcome(found)
    ours, result = local_result(case)
    context = f"Mastra: {found}\nlocaljudge: {result}"
    check_refusals(case, found, ours, result, strict=True)
    if isinstance(case.expect, Differs):
        pinned = case.expect.mastra
        close = isinstance(theirs, float) and isinstance(pinned, float) and math.isclose(theirs, pinned)
        assert (theirs == pinned or close) and ours == case.expect.local, context
        return
    if case.expect != SAME:
        assert theirs == case.expect, context
    assert ours == (theirs if theirs == REFUSED else round_half_up(theirs)), context
    for mine, named in case.same.items():  # the measures behind the score, to the bit
        assert result.preprocess_step_result[mine] == found["preprocessStepResult"][named], (mine, context)
    if case.reason:
        assert result.reason == found["reason"], context


@pytest.mark.parametrize("case", CODE_CASES, ids=lambda c: c.id)
def test_code_case_as_mastra(case: CodeCase, mastra: dict[str, dict[str, Any]]) -> None:
    """Under compat="mastra" every code scorer and check gives Mastra's own number, unrounded,
    except on a difference the table keeps (its `compat` column says why)."""
    found = mastra[case.id]
    theirs = mastra_outcome(found)
    ours, result = local_result(case, compat="mastra")
    context = f"Mastra: {found}\nlocaljudge (compat=mastra): {result}"
    check_refusals(case, found, ours, result, strict=False)
    if isinstance(case.expect, Differs) and not DIFFERENCES[case.expect.what].switched:
        local = case.expect.local
        assert ours == local or (isinstance(local, float) and math.isclose(ours, local, abs_tol=0.005)), context
    else:
        assert ours == theirs, context


def test_every_code_scorer_has_cases() -> None:
    """Every registered code scorer and check has cases, and docs/mastra-parity.md counts them."""
    counts = {name: sum(c.scorer == name for c in CODE_CASES) for name in CODE_SCORERS}
    assert set(CODE_FACTORIES) == set(CODE_SCORERS) and min(counts.values()) >= 2, counts
    assert len({c.id for c in CODE_CASES}) == len(CODE_CASES), "case ids must be unique"
    page = (ROOT / "docs" / "mastra-parity.md").read_text()
    assert f"{len(CODE_CASES)} cases for the code scorers and checks" in page


@pytest.mark.parametrize("key", list(SCORERS))
def test_agreement_on_real_texts(key: str, mastra: dict[str, dict[str, Any]]) -> None:
    """localjudge's score equals Mastra's rounded score on `AGREEMENT[key]` of the runs; the
    docs page reports the same share."""
    scorer_name, options, _, sets = SCORERS[key]
    scorer = build_scorer(scorer_name, None, options=options)
    made = runs(sets)
    ours = [r.score for r in scorer.run_batch(made)]
    theirs = [mastra_outcome(mastra[f"agree/{key}/{n}"]) for n in range(len(made))]
    agreed = sum(t != REFUSED and o == round_half_up(t) for o, t in zip(ours, theirs, strict=True))
    close = sum(t != REFUSED and abs(o - t) <= 0.1 for o, t in zip(ours, theirs, strict=True))
    print(f"{key}: {agreed} of {len(made)} equal, {close} within 0.1")
    assert agreed == AGREEMENT[key], f"{key}: {agreed} of {len(made)} agree (pinned {AGREEMENT[key]})"
    page = (ROOT / "docs" / "scorers" / "code-scorers.md").read_text()
    if AGREEMENT[key] < len(made):
        assert re.search(rf"{AGREEMENT[key]} of {len(made)}\b", page), "docs/scorers/code-scorers.md reports it"
