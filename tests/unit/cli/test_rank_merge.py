"""Data-parallel ranks hand over to rank 0 through files, not a collective barrier: ranks can
finish hours apart, past NCCL's 10-minute barrier timeout (the merge would then be lost)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from localjudge.evaluation import done_mark, wait_for_ranks


def test_rank_zero_waits_for_every_rank_then_clears_the_marks(tmp_path: Path) -> None:
    late = threading.Timer(0.6, wait_for_ranks, (tmp_path, 2, 3))  # rank 2 finishes last
    late.start()
    wait_for_ranks(tmp_path, 1, 3)  # rank 1 marks itself and goes on
    assert done_mark(tmp_path, 1).exists()
    start = time.monotonic()
    wait_for_ranks(tmp_path, 0, 3, poll=0.05)
    assert time.monotonic() - start > 0.3, "rank 0 waited for rank 2"
    late.join()
    assert not list(tmp_path.iterdir()), "no mark left for the next run"
