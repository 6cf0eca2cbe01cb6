"""Custom scorers ported from Mastra on the real judge: the prompt-object `generate_score` (the
judge writes ``{"score": x}`` under `ScoreAnswer`) always parses within its token budget, and a
not-scorable run costs no judge call."""

from __future__ import annotations

from typing import Any

from tests.unit.scoring.mastra_ports import agent_run, gluten_checker, refund_judge


class Counting:
    """The real judge, counting the prompts it is sent."""

    def __init__(self, judge: Any) -> None:
        self.judge, self.identity, self.prompts = judge, judge.identity, 0

    def generate(self, prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        self.prompts += len(prompts)
        return self.judge.generate(prompts, schemas, max_new_tokens=max_new_tokens)


def test_a_prompt_object_score_parses_on_the_real_model(real_judge: Any) -> None:
    judge = Counting(real_judge)
    runs = [agent_run("Your refund for A-17 is on its way.", ["lookupOrder", "refundCustomer"], "r1"),
            agent_run("I refunded A-17; it may take five days.", ["refundCustomer"], "r2"),
            agent_run("Here is the status of your order.", ["lookupOrder"], "r3")]
    first, second, skipped = refund_judge(judge).run_batch(runs)  # type: ignore[arg-type]
    for result in (first, second):
        assert result.score is not None and 0 <= result.score <= 1, result
        assert round(result.score, 2) == result.score  # two decimals at most: ScoreAnswer's grammar
    assert skipped.not_scorable and judge.prompts == 2  # the third never reached the judge


def test_the_gluten_checker_parses_on_the_real_model(real_judge: Any) -> None:
    recipes = ["Mix flour and water to make dough", "Mix rice, beans, and vegetables"]
    results = gluten_checker(real_judge).run_batch([{"input": r, "output": {"text": r}} for r in recipes])
    for result in results:
        assert result.score in (0.0, 1.0), result
        assert isinstance(result.analyze_step_result["isGlutenFree"], bool) and result.reason
