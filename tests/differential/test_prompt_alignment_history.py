"""Prompt alignment with the conversation history on, beside Mastra's own scorer
(tests/differential/cases_prompt_alignment_history.py): the same outcome on the same judge
answers, under both settings, and the same transcript of the remembered messages shown to the
judge, in the analyze and the reason prompts (Mastra's ``Conversation History (prior turns, for
context only):`` text; localjudge's HISTORY block), or none on both sides."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge.scorers import build_scorer
from tests.differential.cases_prompt_alignment_history import CASES
from tests.differential.parity import (
    REFUSED,
    Case,
    mastra_outcome,
    mastra_refusal,
    node_ready,
    run_harness,
    run_local,
    scripted_judge,
)
from tests.differential.refusals import NO_ASSISTANT

MASTRA_HISTORY = "Conversation History (prior turns, for context only):\n"
REFUSALS = {"history-empty-response": ("Agent response is required for prompt alignment scoring", NO_ASSISTANT)}


@pytest.fixture(scope="module")
def mastra() -> dict[str, dict[str, Any]]:
    if not node_ready():
        pytest.skip("tests/differential/node is not set up: run scripts/setup_node.sh")
    return run_harness([case.for_mastra() for case in CASES])


def mastra_transcript(prompt: str | None) -> str | None:
    if not prompt or MASTRA_HISTORY not in prompt:
        return None
    return prompt.split(MASTRA_HISTORY, 1)[1].split("\n\n", 1)[0]


def local_transcript(prompt: str | None) -> str | None:
    if not prompt or "<<<HISTORY\n" not in prompt:
        return None
    return prompt.split("<<<HISTORY\n", 1)[1].split("\nHISTORY>>>", 1)[0]


@pytest.mark.parametrize("compat", ["localjudge", "mastra"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case, compat: str, mastra: dict[str, dict[str, Any]]) -> None:
    found = mastra[case.id]
    local = run_local(case, compat=compat)
    assert mastra_outcome(found) == local.outcome == case.expect, f"Mastra: {found}\nlocaljudge: {local}"
    assert found.get("unused", 0) == 0 and (local.outcome == REFUSED or not local.unasked), (found, local)
    if case.expect == REFUSED:
        theirs, ours = REFUSALS[case.name]
        assert theirs in mastra_refusal(found) and ours in local.detail, (found, local)


@pytest.mark.parametrize("case", [c for c in CASES if c.expect != REFUSED], ids=lambda c: c.id)
def test_the_judge_is_shown_mastras_transcript(case: Case, mastra: dict[str, dict[str, Any]]) -> None:
    prompts = mastra[case.id]["prompts"]
    result = build_scorer(case.scorer, scripted_judge(case.answers), options=case.options).run(case.run)
    theirs = mastra_transcript(prompts["analyze"])
    assert local_transcript(result.analyze_prompt) == theirs
    assert local_transcript(result.generate_reason_prompt) == mastra_transcript(prompts["generateReason"]) == theirs
    shown = case.options["include_conversation_history"] and case.name not in (
        "history-none-remembered", "history-plain-string")
    assert (theirs is not None) == bool(shown), theirs
