"""The `run_evals` cases: Mastra's `runEvals` (an Agent whose mock model gives scripted replies) and
localjudge's (a target giving the same replies in the same order) with the same function scorers
and gates (`evalScorers` in tests/differential/node/custom_scorers.mjs, and their twins here).

Each case names scorers as the harness does: a name, or ``{"scorer": name, "threshold": t}``;
items are Mastra's (`input`, `inputs`, or `turns` naming their gates and scorers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from localjudge import Scorer, create_scorer, not_scorable

# The twins of custom_scorers.mjs's evalScorers: a run's output is the last assistant message with
# text, as Mastra's getAssistantMessageFromRunOutput reads it.
SCORERS: dict[str, Scorer] = {
    "hasX": create_scorer("has_x").generate_score(lambda run, results: 1 if "x" in run.output else 0),
    "polite": create_scorer("polite").generate_score(lambda run, results: 1 if "please" in run.output else 0),
    "long": (create_scorer("long")
             .preprocess(lambda run, results: not_scorable("too short") if len(run.output) < 6 else {})
             .generate_score(lambda run, results: min(1, len(run.output) / 20))),
    "broken": create_scorer("broken").generate_score(lambda run, results: 1 / 0),
}


@dataclass(frozen=True)
class RunEvalsCase:
    """One `runEvals` run on both sides: the replies, in order, the items, scorers and gates."""

    name: str
    replies: list[str]
    data: list[dict[str, Any]]
    scorers: list[Any]
    gates: list[str]

    def for_mastra(self) -> dict[str, Any]:
        return {"id": f"run-evals/{self.name}", "runEvals": {"replies": self.replies, "data": self.data,
                                                              "scorers": self.scorers, "gates": self.gates}}

    def for_local(self) -> dict[str, Any]:
        """`run_evals`' arguments: the names made scorers."""
        def entry(e: Any) -> Any:
            return SCORERS[e] if isinstance(e, str) else {"scorer": SCORERS[e["scorer"]], "threshold": e["threshold"]}

        def item(it: Mapping[str, Any]) -> dict[str, Any]:
            if "turns" not in it:
                return dict(it)
            return {**it, "turns": [{"input": t["input"], "gates": [SCORERS[g] for g in t.get("gates", [])],
                                     "scorers": [entry(s) for s in t.get("scorers", [])]} for t in it["turns"]]}

        return {"data": [item(it) for it in self.data], "scorers": [entry(e) for e in self.scorers],
                "gates": [SCORERS[g] for g in self.gates]}


RUN_EVALS_CASES = [
    RunEvalsCase("gates-thresholds", ["hello x", "ok", "please x indeed", "tiny"],
                 [{"input": "a"}, {"inputs": ["b", "c"]}, {"turns": [{"input": "d", "gates": ["hasX"]}]}],
                 ["long", {"scorer": "polite", "threshold": 0.5}], ["hasX", "broken"]),
    RunEvalsCase("turns", ["x please, welcome", "x", "no", "please and thank you"],
                 [{"turns": [{"input": "hi", "gates": ["hasX"], "scorers": ["long"]},
                             {"input": "more", "scorers": [{"scorer": "polite", "threshold": 0.5}, "hasX"]}]},
                  {"turns": [{"input": "hi", "gates": ["hasX"]},
                             {"input": "more", "scorers": [{"scorer": "polite", "threshold": 0.5}]}]}],
                 [{"scorer": "long", "threshold": {"min": 0.2, "max": 0.9}}], []),
    RunEvalsCase("all-not-scorable", ["a", "b"], [{"input": "q1"}, {"input": "q2"}],
                 [{"scorer": "long", "threshold": 0.5}], ["long"]),
    RunEvalsCase("passed", ["x, please", "please x, thanks"], [{"input": "q1"}, {"input": "q2"}],
                 [{"scorer": "polite", "threshold": {"min": 0.5}}, "long"], ["hasX"]),
]
