"""SIGTERM as a normal exit, for `LiveScorer(drain_on_sigterm=True)`.

Python's default action for SIGTERM ends the process without running `atexit`, so live runs
still queued are lost. Raising `SystemExit` instead lets the interpreter unwind and run `atexit`,
which drains every `LiveScorer`. Installed only where SIGTERM still has its default action: a
library never replaces its host application's handler.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

log = logging.getLogger(__name__)


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM as a normal exit: the interpreter unwinds and runs `atexit`, which drains every
    LiveScorer (raised in the main thread, between two bytecodes: no lock is left held)."""
    raise SystemExit(128 + signum)


def exit_on_sigterm_by_default() -> None:
    """Install `_exit_on_sigterm` where SIGTERM has its default action; leave any other handler."""
    if threading.current_thread() is not threading.main_thread():
        raise ValueError("drain_on_sigterm=True needs the LiveScorer made in the main thread "
                         "(Python runs signal handlers there)")
    current = signal.getsignal(signal.SIGTERM)
    if current is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    elif current is not _exit_on_sigterm:
        log.info("live scoring: SIGTERM already has the app's handler (%r); it is kept, and the queue drains "
                 "when the process exits normally", current)
