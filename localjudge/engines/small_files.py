"""Reading a model folder's small files (config, tokenizer config) without trusting what they are.

A `config.json` can be a link to `/dev/zero` (read without end), a FIFO (the read waits for a
writer forever) or a huge file. `read_small_file` opens it without blocking, reads only a
regular file, and at most `limit` bytes; anything else is a one-line `SmallFileError`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from localjudge.user_files import kind

CONFIG_LIMIT = 16 * 1024 * 1024  # a model config is kilobytes; 16 MiB leaves room for any real one


class SmallFileError(ValueError):
    """A file that should be small and regular is not: a device, a FIFO, a folder, or too large."""


def read_small_file(path: Path, *, limit: int = CONFIG_LIMIT) -> bytes:
    """The bytes of `path`, a regular file (links followed: Hugging Face snapshots are links) of
    at most `limit` bytes.

    Raises:
        SmallFileError: `path` is not a regular file, or is larger than `limit`.
        OSError: it cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO opens at once instead of waiting
    try:
        mode = os.fstat(fd).st_mode  # of what was opened: no swap between a check and the open
        if not stat.S_ISREG(mode):
            raise SmallFileError(f"{path} is not a regular file ({kind(mode)})")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SmallFileError(f"{path} is larger than {limit:,} bytes: not a config file")
    return data
