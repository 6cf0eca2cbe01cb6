"""Every output schema any registered scorer sends, on every family, in one judge call per family.

The schemas are gathered once a session without a model (`tests.families.by_schema`); each
family's judge then answers all of them in one batched call: every answer validates against its
row's schema or is cut off at the token limit, with no crash and no hang. The family tier's
cost grows with distinct schemas (rows of that call), never with scorers (calls): the guards
below count the calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import pytest

from localjudge.judge import Judge
from localjudge.scorers import SCORERS, register_scorer
from localjudge.scoring import JudgeStep, Scorer, Strict, create_scorer
from localjudge.scoring.schemas import token_budget
from tests.families.by_schema import CountingJudge, check_by_schema, gather, gathered, judge_steps
from tests.families.catalog import FAMILIES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("family", FAMILIES)
def test_every_schema_in_one_call(family: str, family_judge) -> None:
    rows = gathered()
    counted = CountingJudge(family_judge(family))
    check_by_schema(counted, rows)
    assert counted.calls == [len(rows)], "one judge call a family, one row a distinct schema"


def test_every_registered_judge_step_is_in_the_batch() -> None:
    """Each judge step of each registered scorer, in each of its modes, asked for its schema on
    `FULL_RUN` (none refused the run, decided it by rule or failed first), so its schema is a row
    of the family call. Scorers with no judge step are not required."""
    asked = {step for row in gathered() for step in row.asked_by}
    assert asked == judge_steps()


class Mood(Strict):
    """An extra scorer's answer: a schema no built-in scorer sends."""

    mood: Literal["calm", "tense"]


def mood_scorer(judge: Judge | None, *, scale: float = 1.0) -> Scorer:
    step = JudgeStep("Say the mood of the response.", lambda run, results: run.output, Mood)
    return (create_scorer("family_tier_mood", judge=judge, scale=scale).analyze(step)
            .generate_score(lambda run, results: float(results["analyze_step_result"]["mood"] == "tense")))


def length_scorer(judge: Judge | None, *, scale: float = 1.0) -> Scorer:
    """Model-free: no judge step, so nothing to ask a family."""
    return create_scorer("family_tier_length", judge=judge, scale=scale).generate_score(
        lambda run, results: min(len(run.output) / 100, 1.0))


@pytest.fixture
def extra_scorers() -> Iterator[None]:
    gathered()  # the session's rows are gathered from the built-in registry, before it grows
    register_scorer("family_tier_mood", mood_scorer)
    register_scorer("family_tier_length", length_scorer)
    try:
        yield
    finally:
        SCORERS.pop("family_tier_mood", None)
        SCORERS.pop("family_tier_length", None)


def test_an_extra_scorer_adds_rows_to_the_one_call_not_calls(extra_scorers: None, family_judge) -> None:
    base, more = gathered(), gather()
    assert [r.schema for r in more[: len(base)]] == [r.schema for r in base]
    (extra,) = more[len(base):]
    assert extra.schema is Mood and extra.asked_by == (("family_tier_mood", "pipeline", "analyze"),)
    assert extra.budget == token_budget(Mood)
    assert not any(name == "family_tier_length" for row in more for name, _, _ in row.asked_by)
    assert {step for row in more for step in row.asked_by} == judge_steps()  # the model-free one needs none
    counted = CountingJudge(family_judge("mistral"))
    check_by_schema(counted, more)
    assert counted.calls == [len(base) + 1]
