"""Compat is a scorer's own facts (issue 45): a factory called directly with ``compat=`` is the
scorer `build_scorer(..., compat=)` builds, on every case of the tier's tables: the same key,
scale, result and judge calls. Both run on the cases' scripted FakeJudge answers; Mastra (Node)
is not needed, so this runs wherever the tier's folder does.

Before the factories declared their Mastra numbers, `build_scorer` patched Mastra's rounding and
scale onto the finished scorer, so ``answer_relevancy_scorer(judge, compat="mastra")`` scored
``answer_relevancy/rounding-0.225`` 0.22 where Mastra and `build_scorer` give 0.23.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from localjudge.judge import Judge
from localjudge.samples import InvalidRunError
from localjudge.scorers import build_scorer, get_scorer_factory
from localjudge.scoring import COMPATS, Scorer
from tests.differential.cases import ALL_CASES
from tests.differential.cases_code import CODE_CASES, CodeCase
from tests.differential.parity import Case
from tests.fakes import make_fake_judge


def scored(case: Case | CodeCase, make: Callable[[Judge | None], Scorer]) -> tuple[Any, ...]:
    """What a scorer made by `make` is and gives on the case: its key, scale and result (as JSON
    text, so a NaN score compares equal), or the error that refused it, and the judge calls."""
    judge = make_fake_judge(case.answers) if isinstance(case, Case) else None
    try:
        scorer = make(judge)
        result = scorer.run(case.run)
    except (InvalidRunError, ValueError, TypeError) as error:
        return "refused", f"{type(error).__name__}: {error}", judge and len(judge.calls)
    shown = json.dumps(result.to_dict(), sort_keys=True, default=str)
    return scorer.key, scorer.scale, shown, judge and [c.schema_names for c in judge.calls]


@pytest.mark.parametrize("compat", COMPATS)
@pytest.mark.parametrize("case", [*ALL_CASES, *CODE_CASES], ids=lambda c: c.id)
def test_a_factory_called_directly_is_the_scorer_build_scorer_builds(case: Case | CodeCase, compat: str) -> None:
    factory = get_scorer_factory(case.scorer)
    scale = case.scale if isinstance(case, Case) else 1.0
    direct = scored(case, lambda judge: factory(judge, scale=scale, **case.options, compat=compat))
    built = scored(case, lambda judge: build_scorer(case.scorer, judge, scale=scale, options=case.options,
                                                    compat=compat))
    assert direct == built
