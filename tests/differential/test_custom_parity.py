"""Custom scorers port as written: Mastra's docs' gluten checker and refund judge (the TypeScript
originals, tests/differential/node/custom_scorers.mjs) and their `create_scorer` ports
(tests/unit/scoring/mastra_ports.py) give the same score, or both declare the run not scorable
without a judge call, and send the judge the same prompts, on the same judge answers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.differential.cases_custom import CUSTOM_CASES, NOT_SCORABLE, CustomCase
from tests.fakes import make_fake_judge


@pytest.mark.parametrize("case", CUSTOM_CASES, ids=lambda c: c.name)
def test_custom_scorer(case: CustomCase, mastra: dict[str, dict[str, Any]]) -> None:
    found = mastra[case.name]
    judge = make_fake_judge(case.local)
    result = case.port(judge).run(case.run)
    context = f"Mastra: {found}\nlocaljudge: {result}"
    assert "error" not in found, context
    if case.expect == NOT_SCORABLE:
        assert found["notScorable"] == {"step": "preprocess", "reason": "refundCustomer was not called"}, context
        assert result.not_scorable and result.error == "preprocess step: not scorable: refundCustomer was not called"
        assert found["calls"] == [] and judge.calls == [], context  # no judge call on either side
        return
    assert found["score"] == result.score == case.expect, context
    assert found["unused"] == 0, context  # every scripted answer was asked for: the same steps ran
    assert found.get("analyzeStepResult") == result.analyze_step_result, context
    sent = {call.schema_names[0]: call.prompts[0][-1]["content"] for call in judge.calls}
    prompts = found["prompts"]
    if "analyze" in prompts:
        assert prompts["analyze"] == result.analyze_prompt == sent["GlutenAnalysis"], context
    if "generateReason" in prompts:
        assert prompts["generateReason"] == result.generate_reason_prompt == sent["Reason"], context
    if "generateScore" in prompts:
        assert prompts["generateScore"] == sent["ScoreAnswer"], context
