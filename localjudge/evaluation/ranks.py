"""Data-parallel ranks (`accelerate launch`, torchrun) on one results folder: each rank scores its
share of the rows into its own log, marks itself done, and rank 0 merges every rank's rows.

The ranks hand over through files, not a collective barrier: ranks may finish hours apart, and
NCCL's barrier times out after 10 minutes (the merge would be lost). The only collective is the
one the caller passes to `start_ranks` (accelerate's `wait_for_everyone`), at the start, so that
every old mark is gone before any new one. If a rank dies, `accelerate launch` stops the others.

    start_ranks(store.folder, rank, barrier)      # before the model loads
    result = evaluate_ranked(rows, scorers, rank=rank, world=world, store=store)   # None off rank 0
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from localjudge.evaluation.dataset_runs import Columns, Evaluation, evaluate
from localjudge.evaluation.progress import OnResults, Progress
from localjudge.evaluation.store import ResultStore
from localjudge.scoring import Scorer


def done_mark(folder: Path, rank: int) -> Path:
    """The file that says a rank has written all its rows."""
    return folder / f"rank-{rank}.done"


def start_ranks(folder: Path, rank: int, barrier: Callable[[], Any]) -> None:
    """This rank's mark from an earlier run removed, then `barrier` (every rank's done so too)."""
    done_mark(folder, rank).unlink(missing_ok=True)
    barrier()


def wait_for_ranks(folder: Path, rank: int, world: int, poll: float = 0.5) -> None:
    """Mark this rank's rows as all written; rank 0 waits for every rank's mark, then removes them."""
    marks = [done_mark(folder, r) for r in range(world)]
    marks[rank].touch()
    if rank != 0:
        return
    while not all(mark.exists() for mark in marks):
        time.sleep(poll)
    for mark in marks:
        mark.unlink()


def evaluate_ranked(data: Any, scorers: Sequence[Scorer], *, rank: int, world: int, store: ResultStore,
                    batch_size: int = 8, columns: Columns = Columns(), progress: Progress | None = None,
                    on_results: OnResults | None = None, scratch: bool = False,
                    poll: float = 0.5) -> Evaluation | None:
    """`evaluate` as one of `world` ranks: this rank's share of the rows (``index % world ==
    rank``) scored into `store`'s folder, then handed to rank 0 (`wait_for_ranks`), which merges
    every rank's rows (the whole data evaluated on the folder: every row resumed) and returns them;
    the other ranks return None once their rows are written.

    Args:
        store: This rank's log (writer ``rank-N``) in the folder every rank shares.
        progress, on_results: As `evaluate`'s, for this rank's share.
        scratch: The folder is this run's only (``--no-resume``): rank 0 drops any log a crashed run
            with more ranks left before the merge, and removes the folder after it.
    """
    evaluate(data, scorers, batch_size=batch_size, columns=columns, store=store, shard=(rank, world),
             progress=progress, on_results=on_results)
    wait_for_ranks(store.folder, rank, world, poll)
    if rank != 0:
        return None
    merged = store
    if scratch:  # this run's ranks' logs only
        ranks = {f"rank-{r}" for r in range(world)}
        for log_file in store.folder.glob("*.jsonl"):
            if log_file.stem not in ranks:
                log_file.unlink()
        merged = ResultStore(store.folder, writer="rank-0")
    result = evaluate(data, scorers, batch_size=batch_size, columns=columns, store=merged)
    if scratch:
        shutil.rmtree(store.folder, ignore_errors=True)
    return result


__all__ = ["done_mark", "evaluate_ranked", "start_ranks", "wait_for_ranks"]
