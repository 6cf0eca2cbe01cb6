"""Custom scorers port as written: Mastra's docs' gluten checker and refund judge (the TypeScript
originals, tests/differential/node/custom_scorers.mjs) and their `create_scorer` ports
(tests/unit/scoring/mastra_ports.py) give the same score, or both declare the run not scorable
without a judge call, and send the judge the same prompts, on the same judge answers. A custom
score is kept as returned (1/3, 87.5, -1): the same as Mastra's, to the bit under
``compat="mastra"``; where the default differs (rounded, or a NaN unscored) the case pins the
difference of the closed table."""

from __future__ import annotations

import math
from typing import Any

import pytest

from localjudge import ScoreResult
from tests.differential.cases_custom import CUSTOM_CASES, NOT_SCORABLE, UNSCORED, CustomCase
from tests.differential.differences import DIFFERENCES
from tests.differential.parity import Differs, mastra_outcome, scripted_judge, unasked


def local_outcome(result: ScoreResult) -> float | str:
    if result.not_scorable:
        return NOT_SCORABLE
    return UNSCORED if result.score is None else result.score


@pytest.mark.parametrize("compat", ["localjudge", "mastra"])
@pytest.mark.parametrize("case", CUSTOM_CASES, ids=lambda c: c.name)
def test_custom_scorer(case: CustomCase, compat: str, mastra: dict[str, dict[str, Any]]) -> None:
    found = mastra[case.name]
    judge = scripted_judge(case.local)  # the case's answers only: an unscripted call raises
    result = case.port(judge, compat).run(case.run)
    context = f"Mastra: {found}\nlocaljudge (compat={compat}): {result}"
    assert "error" not in found, context
    assert found["unused"] == 0 and not unasked(judge, case.local), context  # every scripted answer was asked for
    if case.expect == NOT_SCORABLE:
        assert found["notScorable"] == {"step": "preprocess", "reason": "refundCustomer was not called"}, context
        assert result.not_scorable and result.error == "preprocess step: not scorable: refundCustomer was not called"
        assert found["calls"] == [] and judge.calls == [], context  # no judge call on either side
        return
    theirs, ours = mastra_outcome(found), local_outcome(result)
    if isinstance(case.expect, Differs):
        assert theirs == case.expect.mastra, context
        kept = not DIFFERENCES[case.expect.what].switched
        assert ours == (case.expect.local if compat == "localjudge" or kept else theirs), context
        if ours == UNSCORED:
            assert result.error_kind == "step_error", context
            if case.expect.what == "score-contract":  # read as a fraction: Mastra's number is outside [0, 1]
                assert result.error == f"score: generate_score gave int {theirs:g}, not a fraction in [0, 1]", context
                return
            shown = {"NaN": "nan", "Infinity": "inf"}[str(theirs)]  # Python's repr of the same float
            assert result.error == f"score: generate_score gave float {shown}, not a finite number (the score)"
        return
    assert theirs == ours == case.expect, context
    assert not math.isnan(ours) and found["score"] == result.score, context  # to the bit
    assert found.get("analyzeStepResult") == result.analyze_step_result, context
    sent = {call.schema_names[0]: call.prompts[0][-1]["content"] for call in judge.calls}
    prompts = found["prompts"]
    if "analyze" in prompts:
        assert prompts["analyze"] == result.analyze_prompt == sent["GlutenAnalysis"], context
    if "generateReason" in prompts:
        assert prompts["generateReason"] == result.generate_reason_prompt == sent["Reason"], context
    if "generateScore" in prompts:
        assert prompts["generateScore"] == sent["ScoreAnswer"], context
