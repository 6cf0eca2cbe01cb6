"""Which mode ranked best on a benchmark run in ensemble mode, and whether that is clear.

An ensemble run measures three prob scores on the same rows: the pipeline's, the direct mode's
and their mean (`localjudge.bench.run`: the table's ``pipeline prob score``, ``direct prob score``
and ``judge prob score`` rows). The mode advice in the docs rests on one or two sets per scorer;
this says what the user's own labels say: the mode with the highest prob-score ROC AUC, with its
bootstrap interval, and "no clear winner" unless that interval lies wholly above every other
mode's. Pure: it reads a `BenchResult`, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from localjudge.bench.types import JUDGE_PROB, BenchResult, Estimate

# Each mode's row in an ensemble run's table.
MODE_ROWS = {"ensemble": JUDGE_PROB, "pipeline": "pipeline prob score", "direct": "direct prob score"}


@dataclass(frozen=True)
class ModeRanking:
    """The modes of one benchmark by prob-score AUC, best first; `clear`: the best's interval lies
    above every other's (overlapping intervals: no clear winner)."""

    benchmark: str
    scorer: str
    ranked: list[tuple[str, Estimate]]
    clear: bool

    @property
    def best(self) -> str:
        return self.ranked[0][0]

    def line(self) -> str:
        """One line: the best mode with its interval, then the verdict and the others."""
        def shown(mode: str, auc: Estimate) -> str:
            interval = "" if auc.low is None else f" [{auc.low:.2f}, {auc.high:.2f}]"
            return f"{mode} {auc.value:.2f}{interval}"

        best, others = shown(*self.ranked[0]), ", ".join(shown(*item) for item in self.ranked[1:])
        verdict = ("its interval above the others'" if self.clear else
                   "no clear winner: the intervals overlap, so another set of rows may rank them otherwise")
        return (f"{self.benchmark} ({self.scorer}): {self.best} ranked best by prob AUC, {best}; {verdict} "
                f"({others})")


def rank_modes(result: BenchResult) -> ModeRanking | None:
    """The modes of an ensemble run's `result` ranked by prob-score AUC; None when fewer than two
    modes have a figure (a run in one mode, a judge without label probabilities, one class only)."""
    rows = {row.name: row.auc for row in result.table if row.kind == "judge"}
    found = [(mode, rows[name]) for mode, name in MODE_ROWS.items()
             if name in rows and rows[name].value is not None]
    if len(found) < 2:
        return None
    ranked = sorted(found, key=lambda item: -(item[1].value or 0.0))  # stable: the ensemble first on a tie
    (_, top), rest = ranked[0], ranked[1:]
    clear = all(top.low is not None and other.high is not None and top.low > other.high
                and (top.value or 0.0) > (other.value or 0.0) for _, other in rest)
    return ModeRanking(result.benchmark, result.scorer, ranked, clear)
