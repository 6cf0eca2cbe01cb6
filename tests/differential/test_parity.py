"""Each case: Mastra's scorer and localjudge's give the same outcome on the same judge answers,
or the pinned outcomes of a documented difference; the differences are one closed table. A
side that refuses says the case's pinned reason (tests/differential/refusals.py); a side that
scores asked for every answer the case scripts for it, and no side was answered anything the
case does not script."""

from __future__ import annotations

import re
from typing import Any

import pytest

from localjudge.scoring import js_round, round_half_up
from tests.differential.cases import ALL_CASES, ROUNDING
from tests.differential.cases_code import CODE_CASES
from tests.differential.cases_custom import CUSTOM_CASES
from tests.differential.cases_run_evals import RUN_EVALS_CASES
from tests.differential.differences import DIFFERENCES
from tests.differential.parity import (
    FACTORIES,
    REFUSED,
    ROOT,
    Case,
    Differs,
    LocalOutcome,
    mastra_outcome,
    mastra_refusal,
    run_local,
)
from tests.differential.refusals import REFUSALS, refusal_problem


def check_sides(case: Case, found: dict[str, Any], local: LocalOutcome, *, strict: bool) -> None:
    """Each side's refusal says the case's pinned reason; every answer scripted for Mastra was
    asked for; localjudge, where it scored, asked for every answer scripted for it (a run it
    refuses may leave the answers the other compat setting's run asks for)."""
    theirs = mastra_outcome(found)
    problems = [refusal_problem(case.id, "mastra", mastra_refusal(found) if theirs == REFUSED else None,
                                strict=strict),
                refusal_problem(case.id, "local", local.detail if local.outcome == REFUSED else None, strict=strict)]
    assert not any(problems), "\n".join(p for p in problems if p)
    assert found.get("unused", 0) == 0, f"{case.id}: Mastra's judge left scripted answers unasked: {found}"
    if local.outcome != REFUSED:
        assert not local.unasked, f"{case.id}: localjudge scored without asking for {dict(local.unasked)}: {local}"


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_case(case: Case, mastra: dict[str, dict[str, Any]]) -> None:
    found = mastra[case.id]
    theirs = mastra_outcome(found)
    local = run_local(case)
    context = f"Mastra: {found}\nlocaljudge: {local}"
    if isinstance(case.expect, Differs):
        assert (theirs, local.outcome) == (case.expect.mastra, case.expect.local), context
    else:
        assert theirs == local.outcome == case.expect, context
    check_sides(case, found, local, strict=True)
    if case.local_calls is not None:
        assert local.calls == case.local_calls, context


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_case_as_mastra(case: Case, mastra: dict[str, dict[str, Any]]) -> None:
    """Under compat="mastra" localjudge gives Mastra's outcome on every case, except on a
    difference the table keeps (its `compat` column says why), where it gives its own."""
    found = mastra[case.id]
    theirs = mastra_outcome(found)
    local = run_local(case, compat="mastra")
    kept = isinstance(case.expect, Differs) and not DIFFERENCES[case.expect.what].switched
    expected = case.expect.local if kept else theirs  # type: ignore[union-attr]
    assert local.outcome == expected, f"Mastra: {found}\nlocaljudge (compat=mastra): {local}"
    check_sides(case, found, local, strict=False)


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_every_scripted_answer_is_asked(case: Case) -> None:
    """No answer is scripted for localjudge that neither setting's run asks for (a run refused
    under both, or decided by rule, scripts none)."""
    default, as_mastra = run_local(case), run_local(case, compat="mastra")
    never = set(default.unasked) & set(as_mastra.unasked)
    assert not never, f"{case.id}: scripted for localjudge but asked under neither setting: {sorted(never)}"


def test_refusals_are_one_closed_table() -> None:
    """Every pinned refusal is a case's (a refusing side with no entry fails its case)."""
    known = {c.id for c in [*ALL_CASES, *CODE_CASES]}
    assert set(REFUSALS) <= known, sorted(set(REFUSALS) - known)


def test_rounding(mastra: dict[str, dict[str, Any]]) -> None:
    """Mastra's roundToTwoDecimals and localjudge's round_half_up agree on every value but the
    pinned ones (the `rounding` difference)."""
    rounded = dict(zip(ROUNDING, mastra["rounding"]["rounded"], strict=True))
    for value, pinned in ROUNDING.items():
        theirs, ours = rounded[value], round_half_up(value)
        assert (theirs, ours) == (pinned if pinned else (theirs, theirs)), value
        assert js_round(value) == theirs, value  # compat="mastra" rounds as Mastra does


def test_every_scorer_has_cases() -> None:
    """Every LLM scorer has its table of cases, and docs/mastra-parity.md counts them right."""
    counts = {name: sum(c.scorer == name for c in ALL_CASES) for name in FACTORIES}
    assert min(counts.values()) >= 7, counts
    assert len({c.id for c in ALL_CASES}) == len(ALL_CASES), "case ids must be unique"
    page = (ROOT / "docs" / "mastra-parity.md").read_text()
    listed = {name.replace(" ", "_").replace("-", "_"): int(n)
              for name, n in re.findall(r"\| ([a-z][a-z -]+) \| (\d+) (?=\|)", page)}
    assert listed == counts
    assert f"{len(ALL_CASES)} in all" in page


def test_differences_are_one_closed_table() -> None:
    """Every difference a case pins is in the table, every entry is pinned by a case, and the
    docs page lists exactly the table's entries."""
    pinned = {c.expect.what for c in [*ALL_CASES, *CODE_CASES, *CUSTOM_CASES] if isinstance(c.expect, Differs)}
    pinned |= {d.what for c in RUN_EVALS_CASES for d in c.differs.values()}
    assert pinned == set(DIFFERENCES)
    page = (ROOT / "docs" / "mastra-parity.md").read_text()
    rows = dict(re.findall(r"^\| `([a-z0-9-]+)` \|.*\| ([^|]+) \|$", page, flags=re.MULTILINE))
    assert set(rows) == set(DIFFERENCES)
    # The docs' compat column says the same as the table: Mastra's outcome, or kept (and why).
    said = {what: cell.strip().startswith("Mastra's") for what, cell in rows.items()}
    assert said == {what: d.switched for what, d in DIFFERENCES.items()}
    assert all(cell.strip().startswith(("Mastra's", "kept:")) for cell in rows.values()), rows


def differs_bullets(page: str) -> list[str]:
    """The bullets of a docs/scorers page's "Where it differs from Mastra" section."""
    path = ROOT / "docs" / "scorers" / page
    assert path.exists(), f"no page docs/scorers/{page}"
    found = re.search(r"^## .*differs? from Mastra\n(.*?)(?=^## |\Z)", path.read_text(), re.MULTILINE | re.DOTALL)
    assert found, f"docs/scorers/{page} has no 'differs from Mastra' section"
    return re.split(r"\n(?=- )", found.group(1))


def test_every_difference_is_on_its_scorers_pages() -> None:
    """Each page of a scorer a difference shows in has a bullet naming it, linked to
    docs/mastra-parity.md, that says what compat="mastra" does about it."""
    def link(page: str) -> str:  # docs/mastra-parity.md from the page's folder
        return "mastra-parity.md" if page.startswith("../") else "../mastra-parity.md"

    missing = [f"docs/scorers/{page}: {what}" for what, difference in DIFFERENCES.items() for page in difference.pages
               if not any(f"[`{what}`]({link(page)}" in bullet and 'compat="mastra"' in bullet
                          for bullet in differs_bullets(page))]
    assert not missing, missing
