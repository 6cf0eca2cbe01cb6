"""One run at a time on an output: a second run refuses, naming the first (process id, host).

Two runs appending to the same resume log would both score every row, and the second one's
opening of a log (it cuts a partial last line, left by a crash) can cut the first one's line
being written. A `RunLock` is held for a whole run on a file in the folder the run writes to.
It is per run, not per process: the ranks of one data-parallel run pass the same `run` and
share it (they write one output by design); another run is refused.

How: POSIX record locks (`fcntl.lockf`) on two bytes of the lock file. Byte 0 is a gate, held
only while a process checks and takes the lock; byte 1 is held shared by every process of the
holding run for as long as it runs. The file holds the holder's run, process id and host, for
the message. The kernel drops a dead process's locks, so a lock left by a crash (SIGKILL, power
loss) never blocks: its file is found unheld and taken over. Where the file system has no locks
(some network or FUSE mounts) the run goes on unlocked, with a warning.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import platform
import time
from pathlib import Path
from types import TracebackType
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no POSIX locks
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

GATE, HELD = 0, 1  # the lock file's bytes: checking and taking; held by the run
_BUSY = (errno.EACCES, errno.EAGAIN)


class RunLockedError(ValueError):
    """Another run holds the output."""


class RunLock:
    """Held by one run (every process passing the same `run`) on `path`, a file created if missing.

    Args:
        path: The lock file, in the folder the run writes (``OUT.progress/.lock``).
        run: This run's name; processes of one run (data-parallel ranks) pass the same one.
        what: How the error names the output (``--out res.jsonl``).
    """

    def __init__(self, path: str | Path, run: str, *, what: str | None = None) -> None:
        self.path, self.run = Path(path), run
        self.what = what or str(self.path.parent)
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock, or join this run's; raise `RunLockedError` if another live run holds it."""
        if fcntl is None:
            log.warning("%s: this system has no file locks; a second run on it would not be refused", self.what)
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while self._fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX, 1, GATE)
            except OSError as error:  # ENOLCK, EOPNOTSUPP...: a file system without locks
                os.close(fd)
                log.warning("%s: cannot lock %s (%s); a second run on it would not be refused", self.what,
                            self.path, error.strerror or error)
                return self
            try:
                if not _still_at(fd, self.path):  # replaced while we waited: lock the file that is there
                    continue
                self._take(fd)
                self._fd = fd
            finally:
                if self._fd is None:
                    os.close(fd)  # drops every lock this process holds on the file
                else:
                    fcntl.lockf(fd, fcntl.LOCK_UN, 1, GATE)
        return self

    def _take(self, fd: int) -> None:
        """Under the gate: join this run's lock, take a free (or abandoned) one, or refuse."""
        assert fcntl is not None
        holder = _holder(fd)
        if holder.get("run") != self.run:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, HELD)
            except OSError as error:
                if error.errno not in _BUSY:
                    raise
                raise RunLockedError(
                    f"{self.what} is in use by another run (process {holder.get('pid', '?')} on "
                    f"{holder.get('host', '?')}, since {holder.get('since', '?')}): wait for it to end, or write "
                    "to another output") from None
            if holder:
                log.info("%s: taking over the lock of run %s, which ended without releasing it", self.what,
                         holder.get("run"))
            record = json.dumps({"run": self.run, "pid": os.getpid(), "host": platform.node(),
                                 "since": time.strftime("%Y-%m-%d %H:%M:%S")}).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, record, 0)
        fcntl.lockf(fd, fcntl.LOCK_SH, 1, HELD)  # ours turns shared: the run's other processes join

    def release(self) -> None:
        """Let go (closing the file drops this process's locks); the file stays for the next run."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.release()


def _holder(fd: int) -> dict[str, Any]:
    """The holder record in the lock file ({} when empty or unreadable)."""
    try:
        record = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _still_at(fd: int, path: Path) -> bool:
    """Whether `path` still names the file `fd` has open (not removed or replaced since)."""
    try:
        now, opened = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)
