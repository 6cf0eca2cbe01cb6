"""The custom-scorer cases: Mastra's docs' own custom scorers (tests/differential/node/custom_scorers.mjs)
beside their ports (tests/unit/scoring/mastra_ports.py), on the same judge answers; and custom
scorers whose `generateScore` returns one number (1/3, 87.5, -1, NaN, Infinity) beside
``create_scorer(..., score_returns="score")``: Mastra keeps the number as it is.

Each case: the run, the judge's answers (Mastra's JSON steps in order; localjudge's by schema),
and what both must give: the score, or not scorable, with the same prompts sent; or a `Differs`
naming the difference of the closed table (tests/differential/differences.py) that it pins.
Every case runs under both settings: ``compat="mastra"`` gives Mastra's outcome unless the
table keeps the difference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from localjudge import Scorer, create_scorer
from localjudge.judge import Judge
from tests.differential.parity import Differs
from tests.unit.scoring.mastra_ports import agent_run, gluten_checker, refund_judge

NOT_SCORABLE = "not scorable"
UNSCORED = "unscored"  # localjudge's: the run failed (a step_error), saying why


@dataclass(frozen=True)
class CustomCase:
    """One run of a ported custom scorer, scored by both sides.

    Attributes:
        name: The case id, ``"<scorer>/<case>"``.
        custom: The original's export in custom_scorers.mjs.
        port: Its port, a function of the judge and the compat setting.
        run: The run both score.
        answers: Mastra's judge answers to its JSON steps, in order.
        local: localjudge's FakeJudge script, by schema family.
        expect: The score both give, or `NOT_SCORABLE`; or a `Differs` (localjudge's outcome a
            score or `UNSCORED`, Mastra's a score or ``"NaN"``).
    """

    name: str
    custom: str
    port: Callable[[Judge, str], Scorer]
    run: Mapping[str, Any]
    answers: list[Any]
    local: Mapping[str, Any] = field(default_factory=dict)
    expect: float | str | Differs = 0.0

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


def _constant(value: float) -> Callable[[Judge, str], Scorer]:
    """The twin of custom_scorers.mjs's `constant`: ``generateScore(() => value)``."""
    def port(judge: Judge, compat: str) -> Scorer:
        return create_scorer("constant", score_returns="score", compat=compat).generate_score(
            lambda run, results: value)

    return port


def _literal(judge: Judge, compat: str) -> Scorer:
    """``createScorer(...).generateScore(() => 4)`` ported as written: no `score_returns`."""
    return create_scorer("rating", compat=compat).generate_score(lambda run, results: 4)


def _raw(name: str, custom: str, value: float, expect: float | Differs) -> CustomCase:
    return CustomCase(f"raw-score/{name}", custom, _constant(value), _recipe("Any recipe."), [], {}, expect)


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
    _raw("one-third", "oneThird", 1 / 3, Differs("unrounded", 1 / 3, 0.33)),
    _raw("eighty-seven-and-a-half", "eightySevenAndAHalf", 87.5, 87.5),
    _raw("minus-one", "minusOne", -1, -1.0),
    _raw("nan", "notANumber", float("nan"), Differs("non-finite-score", "NaN", UNSCORED)),
    _raw("infinity", "infinity", float("inf"), Differs("non-finite-score", "Infinity", UNSCORED)),
    CustomCase("raw-score/rating-ported-literally", "rating", _literal, _recipe("Any recipe."), [], {},
               Differs("score-contract", 4, UNSCORED)),
]
