"""One scorer end to end on every family: the step runner and the engine on the family's model.

Hallucination (claims, one verdict per claim, reason: three judge steps) on a batch of a judged
row beside a row its rule decides. What every other scorer sends is covered by schema in
`test_schemas.py`; what the scorers compute from the answers, by the fast tier.
"""

from __future__ import annotations

import pytest

from localjudge import hallucination_scorer
from tests.families.catalog import FAMILIES
from tests.families.runs import RUNS, check

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("family", FAMILIES)
def test_hallucination_end_to_end(family: str, family_judge) -> None:
    results = hallucination_scorer(family_judge(family)).run_batch(RUNS)
    for result in results:
        check(result, "hallucination")
    assert results[1].scored, "a rule-decided row is scored whatever the judge does"
