"""What a run tells its caller while it goes: rows done (`Progress`), counted out as each judge step
of a batch ends, and each batch's results as soon as they are known (`OnResults`).

A batch of `rows` rows through a scorer with `j` judge steps is `rows * j` row-steps of work; as
each judge step ends for the batch (`BatchProgress.step`), the rows done so far are that share of
the batch's rows, rounded down, and at most `rows - 1`: the last row is counted when the batch's
results are stored (`BatchProgress.end`). A 3-step scorer's batch of 8 moves its bar 2, 5, 7, then
8: the bar moves within a batch, and every caller's count still adds up to the rows. A step that
ran again (an out-of-memory retry of half the batch) adds no more than the batch holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from localjudge.result import ScoreResult
from localjudge.scoring import JudgeStep, Scorer

Progress = Callable[[str, int], None]  # (scorer name, rows just finished)
OnResults = Callable[[str, Sequence[tuple[int, ScoreResult]]], None]  # (scorer name, (row index, result) pairs)
STEP_NAMES = ("preprocess", "analyze", "score", "reason")


class BatchProgress:
    """One batch's rows counted out to `progress` as its judge steps end (see the module).

    An exception `progress` raises is kept and raised by `end`, once the batch is stored: raised
    inside the batch's scoring, it would cost the batch (recorded as the judge's failure)."""

    def __init__(self, progress: Progress | None, scorer: Scorer, rows: int) -> None:
        self.progress, self.name, self.rows = progress, scorer.name, rows
        self.judged = {name for name in STEP_NAMES if isinstance(getattr(scorer, f"{name}_step", None), JudgeStep)}
        self.total = rows * len(self.judged)  # row-steps
        self.units = self.shown = 0
        self.error: Exception | None = None

    def step(self, name: str, rows: int) -> None:
        """Step `name` has run for `rows` rows of the batch."""
        if name in self.judged and self.total:
            self.units = min(self.units + rows, self.total)
            self._show(min(self.units * self.rows // self.total, self.rows - 1))

    def end(self) -> None:
        """The batch is scored and stored: its last rows counted; a kept exception raised."""
        self._show(self.rows)
        if self.error is not None:
            raise self.error

    def _show(self, rows: int) -> None:
        if self.progress is None or self.error is not None or rows <= self.shown:
            return
        try:
            self.progress(self.name, rows - self.shown)
        except Exception as error:  # noqa: BLE001 - raised by `end`, after the batch is stored
            self.error = error
        self.shown = rows
