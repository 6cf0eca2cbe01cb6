"""Several batches' steps as one batch's steps: each round, the judge calls every part is waiting
for are yielded as one call (`Ask`) per judge, and its answers split back to the parts.

A scorer made of other scorers (the ensemble of a pipeline and its direct mode:
`localjudge.scorers.ensemble`) runs its parts with `in_lockstep`, so the direct verdict rides in
the same judge call as the pipeline's first step, and the ensemble is still one `batch_steps`
generator that `localjudge.scoring.run_together` merges with other scorers' calls
(`localjudge.scoring.answered_alone` runs it alone, each call made as it comes).

A merged call is exact: its calls are `localjudge.scoring.schedule.merged`'s, the ones
`run_together` makes (a row that may have depended on the larger token budget asked again at its
own), so each part's answer is the one its own call would give.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Generator, Sequence
from typing import Any

from localjudge.judge import Generation
from localjudge.scoring import Ask, BatchSteps, merged

Lockstep = Generator[Ask, list[Generation], list[Any]]  # yields merged calls, returns each part's results


def in_lockstep(parts: Sequence[BatchSteps]) -> Lockstep:
    """Run `parts` (`batch_steps` generators) together, as one generator of judge calls.

    Returns:
        Each part's results, in order. A part that raises ends them all (the others closed), as
        one batch's error ends that batch.
    """
    results: list[Any] = [None] * len(parts)
    waiting: dict[int, Ask] = {}
    try:
        for k in range(len(parts)):
            _advance(parts, k, None, waiting, results)
        while waiting:
            round_ = dict(waiting)
            waiting.clear()
            by_judge: dict[int, list[int]] = defaultdict(list)
            for k, ask in round_.items():
                by_judge[id(ask.judge)].append(k)
            for ks in by_judge.values():
                answers = yield from merged([round_[k] for k in ks])
                for k, answered in zip(ks, answers, strict=True):
                    _advance(parts, k, answered, waiting, results)
    finally:
        for part in parts:
            part.close()  # (a no-op for a finished part)
    return results


def _advance(parts: Sequence[BatchSteps], k: int, answers: list[Generation] | None, waiting: dict[int, Ask],
             results: list[Any]) -> None:
    try:
        waiting[k] = parts[k].send(answers)  # type: ignore[arg-type]  # None starts it
    except StopIteration as end:
        results[k] = end.value


__all__ = ["Lockstep", "in_lockstep"]
