"""`run_evals` as Mastra's `runEvals` (@mastra/core 1.71.0), run side by side on the same replies
and the same function scorers (tests/differential/cases_run_evals.py): the same means, the same
`summary` (items, not-scorable counts), the same gate, threshold and per-turn results, and the
same verdict. Where Mastra leaves a key out (a scorer with no scored run, no verdict), localjudge
gives None. Under ``compat="mastra"`` every figure is Mastra's; by default a mean differs only
where the case pins it (a custom score rounded: the `unrounded` difference)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from localjudge import run_evals
from localjudge.evaluation import RunEvalsResult
from tests.differential.cases_run_evals import RUN_EVALS_CASES, RunEvalsCase
from tests.differential.differences import DIFFERENCES


def _checks(found: list[dict[str, Any]] | None, score: str) -> dict[str, tuple[float, bool]]:
    return {r["id"]: (r[score], r["passed"]) for r in found or []}


def as_mastra(result: RunEvalsResult) -> dict[str, Any]:
    """localjudge's result in Mastra's shape, its keys left out where Mastra leaves them out."""
    shaped: dict[str, Any] = {
        "scores": {k: v for k, v in result.scores.items() if v is not None},
        "summary": {"totalItems": result.summary.total_items,
                    **({"notScorable": result.summary.not_scorable} if result.summary.not_scorable else {})},
        "gates": {k: (g.score, g.passed) for k, g in (result.gate_results or {}).items()},
        "thresholds": {k: (t.score, t.passed) for k, t in (result.threshold_results or {}).items()},
        "turns": [{"index": t.index, "gates": {k: (g.score, g.passed) for k, g in (t.gate_results or {}).items()},
                   "thresholds": {k: (r.score, r.passed) for k, r in (t.threshold_results or {}).items()},
                   "scores": t.scores or {}} for t in result.turn_results or []],
        "verdict": result.verdict,
    }
    return shaped


def mastra_shaped(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "scores": result["scores"],
        "summary": result["summary"],
        "gates": _checks(result.get("gateResults"), "score"),
        "thresholds": _checks(result.get("thresholdResults"), "averageScore"),
        "turns": [{"index": t["index"], "gates": _checks(t.get("gateResults"), "score"),
                   "thresholds": _checks(t.get("thresholdResults"), "averageScore"), "scores": t.get("scores", {})}
                  for t in result.get("turnResults", [])],
        "verdict": result.get("verdict"),
    }


def rounded(value: Any) -> Any:
    """Numbers to 12 decimals (a mean summed in another order), everywhere in `value`."""
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(rounded(v) for v in value)
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
        return round(float(value), 12)
    return value


@pytest.mark.parametrize("compat", ["localjudge", "mastra"])
@pytest.mark.parametrize("case", RUN_EVALS_CASES, ids=lambda c: c.name)
def test_run_evals_as_mastra(case: RunEvalsCase, compat: str, mastra: dict[str, dict[str, Any]]) -> None:
    found = mastra[f"run-evals/{case.name}"]
    assert "error" not in found and found["unused"] == 0, found  # every reply was asked for
    replies = list(case.replies)
    target, target_type = case.target(replies)
    local = run_evals(target=target, target_type=target_type, **case.for_local(compat))
    assert replies == []
    ours, theirs = as_mastra(local), mastra_shaped(copy.deepcopy(found["result"]))  # the session's stays as it is
    for scorer_id, pinned in case.differs.items():  # pinned means, each a difference of the closed table
        assert theirs["scores"][scorer_id] == pinned.mastra, found
        if compat == "localjudge" or not DIFFERENCES[pinned.what].switched:
            assert ours["scores"][scorer_id] == pinned.local, local
            theirs["scores"][scorer_id] = pinned.local
    assert rounded(ours) == rounded(theirs), found
