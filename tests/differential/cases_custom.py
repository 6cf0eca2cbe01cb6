"""The custom-scorer cases: Mastra's docs' own custom scorers (tests/differential/node/custom_scorers.mjs)
beside their ports (tests/unit/scoring/mastra_ports.py), on the same judge answers.

Each case: the run, the judge's answers (Mastra's JSON steps in order; localjudge's by schema),
and what both must give: the score, or not scorable, with the same prompts sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from localjudge import Scorer
from localjudge.judge import Judge
from tests.unit.scoring.mastra_ports import agent_run, gluten_checker, refund_judge

NOT_SCORABLE = "not scorable"


@dataclass(frozen=True)
class CustomCase:
    """One run of a ported custom scorer, scored by both sides.

    Attributes:
        name: The case id, ``"<scorer>/<case>"``.
        custom: The original's export in custom_scorers.mjs.
        port: Its port, a function of the judge.
        run: The run both score.
        answers: Mastra's judge answers to its JSON steps, in order.
        local: localjudge's FakeJudge script, by schema family.
        expect: The score both give, or `NOT_SCORABLE`.
    """

    name: str
    custom: str
    port: Callable[[Judge], Scorer]
    run: Mapping[str, Any]
    answers: list[Any]
    local: Mapping[str, Any] = field(default_factory=dict)
    expect: float | str = 0.0

    def for_mastra(self) -> dict[str, Any]:
        return {"id": self.name, "custom": self.custom, "run": dict(self.run), "answers": list(self.answers)}


def _recipe(text: str) -> dict[str, Any]:
    """The docs' own run shape for the gluten checker: a user message, the recipe as ``{text}``."""
    return {"input": [{"role": "user", "content": text}], "output": {"text": text}}


def _gluten(name: str, text: str, answer: dict[str, Any], expect: float) -> CustomCase:
    return CustomCase(f"gluten-checker/{name}", "glutenCheckerScorer", gluten_checker, _recipe(text), [answer],
                      {"GlutenAnalysis": answer, "Reason": {"reason": "Scripted reason."}}, expect)


def _refund(name: str, tools: list[str], score: float | None, expect: float | str) -> CustomCase:
    answers = [] if score is None else [{"score": score}]
    local = {} if score is None else {"ScoreAnswer": {"score": score}}
    return CustomCase(f"refund-judge/{name}", "refundJudge", refund_judge,
                      agent_run("Your refund for A-17 is on its way.", tools, f"refund-{name}"), answers, local, expect)


CUSTOM_CASES = [
    _gluten("with-gluten", "Mix flour and water to make dough", {"isGlutenFree": False, "glutenSources": ["flour"]},
            0.0),
    _gluten("gluten-free", "Mix rice, beans, and vegetables", {"isGlutenFree": True, "glutenSources": []}, 1.0),
    _gluten("hidden-gluten", "Add soy sauce and noodles",
            {"isGlutenFree": False, "glutenSources": ["soy sauce", "noodles"]}, 0.0),
    _refund("refunded", ["lookupOrder", "refundCustomer"], 0.8, 0.8),
    _refund("refunded-low", ["refundCustomer"], 0.25, 0.25),
    _refund("no-refund", ["lookupOrder"], None, NOT_SCORABLE),
    _refund("no-tools", [], None, NOT_SCORABLE),
]
