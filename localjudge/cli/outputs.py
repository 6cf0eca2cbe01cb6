"""Every path a command will write, checked before any model loads; and the run's lock on them.

A run that can only fail at its end (an ``--out`` with a suffix nothing writes, a folder where a
file goes, a read-only place) is refused at its start instead, before hours of scoring are
spent and before its resume log is kept under a name the corrected command would not find.
`hold_run` then takes the output's `RunLock`, so a second run on the same output is refused
before it loads a model or opens a log.
"""

from __future__ import annotations

import os
import platform
import uuid
from collections.abc import Sequence
from pathlib import Path

from localjudge.cli.shared import CliError
from localjudge.evaluation import RunLock

LOCK_NAME = ".lock"  # in the folder a run writes its resume logs to


def check_output_file(path: str | Path, suffixes: Sequence[str], flag: str) -> Path:
    """`path` can be written as a file of one of `suffixes`: the suffix fits, it is not a folder,
    and the nearest folder that exists above it is a writable folder. Raises `CliError`."""
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise CliError(f"{flag} {str(path)!r}: name a {' or '.join(suffixes)} file (what can be written)")
    if p.is_dir():
        raise CliError(f"{flag} {str(path)!r} is a folder: name a file ({' or '.join(suffixes)})")
    if p.exists() and not p.is_file():
        raise CliError(f"{flag} {str(path)!r} is not a regular file")
    _check_writable(p.parent, flag, path)
    return p


def check_output_dir(path: str | Path, flag: str) -> Path:
    """`path` can be written as a folder: it is one, or can be made as one in a writable folder."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CliError(f"{flag} {str(path)!r} exists and is not a folder")
    _check_writable(p, flag, path)
    return p


def _check_writable(folder: Path, flag: str, given: str | Path) -> None:
    """The nearest existing folder at or above `folder` is a folder this process may write in."""
    nearest = folder.absolute()
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise CliError(f"{flag} {str(given)!r}: {nearest} is not a folder")
    if not os.access(nearest, os.W_OK | os.X_OK):
        raise CliError(f"{flag} {str(given)!r}: cannot write in {nearest} (permission denied or read-only)")


def run_name(world: int) -> str:
    """This run's name for its lock: shared by the ranks of one data-parallel run (the launcher's
    rendezvous: its address, port and run id; else the ranks' common parent process), unique to
    this process otherwise."""
    if world > 1:
        keys = ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")
        if any(os.environ.get(key) for key in keys):
            return "ranks@" + "/".join(os.environ.get(key, "") for key in keys)
        return f"ranks@{platform.node()}/{os.getppid()}"
    return f"{platform.node()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def hold_run(folder: str | Path, what: str, world: int = 1) -> RunLock:
    """Take the run lock of the output whose logs live in `folder` (`RunLockedError`, one line
    naming the holder, when another run has it); released when the process ends."""
    return RunLock(Path(folder) / LOCK_NAME, run_name(world), what=what).acquire()
