"""The progress a command draws while it scores: one bar per scorer (or benchmark) on stderr, its
clock redrawn every second so that a long judge call does not look like a hang, and lines printed
above the bars as rows are scored."""

from __future__ import annotations

import sys
import threading
from typing import Any

TICK = 1.0  # seconds between redraws of the bars' clocks


class Bars:
    """One tqdm bar per scorer on stderr: rows done, rows/s and ETA.

    Called as `evaluate`'s `progress` (scorer name, rows just finished): a bar opens at its scorer's
    first call (its clock starts) and closes when its rows are all counted. While any bar is open,
    a thread redraws them every `TICK` seconds (the elapsed time moves between a batch's steps).
    `write` prints a line on stdout above the bars.
    """

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled
        self.bars: dict[str, Any] = {}
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, scorer: str, rows: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if scorer not in self.bars:
            self.bars[scorer] = tqdm(total=self.total, desc=scorer, unit="row", file=sys.stderr, dynamic_ncols=True)
            self._tick()
        self.bars[scorer].update(rows)
        if self.bars[scorer].n >= self.total:  # stop its clock: the next scorer starts now
            self.bars[scorer].close()

    def write(self, line: str) -> None:
        """`line` on stdout, now (flushed), above the bars when they are drawn."""
        if self.enabled and self.bars:
            from tqdm import tqdm

            tqdm.write(line, file=sys.stdout)
            sys.stdout.flush()
        else:
            print(line, flush=True)

    def close(self) -> None:
        self._stop.set()
        for bar in self.bars.values():
            bar.close()
        if self._ticker is not None:
            self._ticker.join()

    def _tick(self) -> None:
        """Start the thread redrawing the open bars every `TICK` seconds (once)."""
        if self._ticker is not None:
            return

        def redraw() -> None:
            while not self._stop.wait(TICK):
                for bar in list(self.bars.values()):
                    bar.refresh()  # a closed bar draws nothing

        self._ticker = threading.Thread(target=redraw, name="localjudge-bars", daemon=True)
        self._ticker.start()
