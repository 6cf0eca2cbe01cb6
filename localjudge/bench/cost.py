"""What scoring a benchmark cost, reported beside its accuracy: the mode, the judge calls, the rows
judged and rows per second (`Cost`), so runs of the three modes (pipeline, direct, ensemble) can
be compared on the same rows. Rows resumed from the log cost nothing and are not counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from localjudge.evaluation import ScorerSummary
from localjudge.judge import ChatPrompt, Generation, Judge


@dataclass
class CountingJudge:
    """`judge`, counting the `generate` calls made to it (one per merged step of a batch, plus
    retries); same identity, so results are keyed as the judge's own."""

    judge: Judge
    calls: int = 0

    @property
    def identity(self) -> str:
        return self.judge.identity

    def generate(self, prompts: Sequence[ChatPrompt], schemas: Sequence[type[BaseModel]], *,
                 max_new_tokens: int) -> list[Generation]:
        self.calls += 1
        return self.judge.generate(prompts, schemas, max_new_tokens=max_new_tokens)


@dataclass(frozen=True)
class Cost:
    """One benchmark's scoring cost.

    Attributes:
        mode: The scorer's mode.
        rows_judged: Rows scored in this run (not resumed).
        judge_calls: `generate` calls made to the judge.
        seconds: Wall time of the scoring.
        rows_per_s: Rows judged per second (None when none were).
        new_tokens: Tokens the judge generated.
    """

    mode: str
    rows_judged: int
    judge_calls: int
    seconds: float
    rows_per_s: float | None
    new_tokens: int


def cost_of(mode: str, rows: int, summary: ScorerSummary, judge_calls: int) -> Cost:
    """The cost of scoring `rows` rows, `summary` being the scorer's figures over them."""
    judged = rows - summary.resumed
    speed = round(judged / summary.seconds, 3) if judged and summary.seconds > 0 else None
    return Cost(mode, judged, judge_calls, summary.seconds, speed, summary.new_tokens)


def cost_text(cost: Cost) -> str:
    """The cost as a sentence of the report."""
    speed = "n/a" if cost.rows_per_s is None else f"{cost.rows_per_s:g}"
    return (f"Cost ({cost.mode} mode): {cost.judge_calls} judge calls for {cost.rows_judged} rows judged (not "
            f"resumed) in {cost.seconds:.1f} s, {speed} rows/s, {cost.new_tokens} tokens generated.")


__all__ = ["Cost", "CountingJudge", "cost_of", "cost_text"]
