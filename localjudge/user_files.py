"""One rule for the files a user names (data, calibration, ``@FILE`` option values, sweep configs).

The rule a model folder's `config.json` already gets (`localjudge.engines.small_files`), for every
file read on a user's word:

- **Regular files only**: opened without blocking (a FIFO opens at once instead of waiting for a
  writer) and checked on what was opened, so a FIFO, a device (`/dev/zero`, read without end) or
  a folder is refused before anything is read.
- **A size cap**: `SMALL_LIMIT` for a file that holds settings (a calibration file, an option
  value, a sweep config), `DATA_LIMIT` for a data file; a larger one is refused, not read into
  memory.
- **A nesting limit**: JSON, YAML or TOML nested deeper than `MAX_DEPTH` (``[[[[...`` a million
  deep) is refused where it is read, not met as a `RecursionError` wherever it is next walked;
  YAML whose aliases expand past `YAML_VALUES` values (an alias bomb) is refused before it expands.

Each refusal is one `UserFileError` (a `ValueError`) naming the file.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

SMALL_LIMIT = 16 << 20  # a calibration file, an option value, a sweep config: kilobytes in practice
DATA_LIMIT = 8 << 30  # a data file: far beyond a 3 MB row, well short of exhausting memory by accident
MAX_DEPTH = 200  # containers nested deeper are refused: beyond any real row, well inside the recursion limit


class UserFileError(ValueError):
    """A file the user named that is not read: not a regular file, too large or nested too deep."""


def open_user_file(path: str | Path, what: str, *, limit: int) -> BinaryIO:
    """`path` opened for reading in binary, once it is known to be a regular file (links
    followed) of at most `limit` bytes. `what` names the file in the error (``data file``).

    Raises:
        UserFileError: not a regular file (a FIFO, a device, a folder), or larger than `limit`.
        OSError: it cannot be opened (missing, no permission).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO opens at once instead of waiting
    try:
        info = os.fstat(fd)  # of what was opened: no swap between a check and the open
        if not stat.S_ISREG(info.st_mode):
            raise UserFileError(f"{what} {str(path)!r} is not a regular file ({kind(info.st_mode)}): give a file")
        if info.st_size > limit:
            raise UserFileError(f"{what} {str(path)!r} is larger than {limit:,} bytes ({info.st_size:,}): "
                                "not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_user_file(path: str | Path, what: str, *, limit: int = SMALL_LIMIT) -> bytes:
    """The bytes of `path` under the rule (`open_user_file`); at most `limit` of them even if the
    file grows while it is read."""
    with open_user_file(path, what, limit=limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UserFileError(f"{what} {str(path)!r} is larger than {limit:,} bytes: not read")
    return data


def check_user_file(path: str | Path, what: str, *, limit: int = DATA_LIMIT) -> None:
    """Refuse `path` unless it is a regular file of at most `limit` bytes (for a file a library
    reads itself, such as parquet)."""
    open_user_file(path, what, limit=limit).close()


def check_depth(value: Any, where: str, *, limit: int = MAX_DEPTH) -> Any:
    """`value` unchanged, or a `UserFileError` naming `where` when its lists and dicts are nested
    deeper than `limit` (walked without recursion)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > limit:
                raise UserFileError(f"{where}: nested deeper than {limit} levels: not read")
            todo.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return value


def load_json(text: str | bytes, where: str, *, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """JSON read under the nesting limit: a `UserFileError` naming `where` when it is nested
    deeper than `MAX_DEPTH` (also deeper than the parser itself can go). Invalid JSON raises
    `json.JSONDecodeError` as `json.loads` does."""
    try:
        value = json.loads(text, parse_constant=parse_constant)
    except RecursionError:
        raise UserFileError(f"{where}: nested deeper than {MAX_DEPTH} levels: not read") from None
    return check_depth(value, where)


def load_yaml(text: str, where: str) -> Any:
    """YAML read safely (PyYAML's safe loader) and bounded: nested at most `MAX_DEPTH` deep, and at
    most `YAML_VALUES` values once its aliases are expanded (an alias bomb, ``&a [x, x]``, ``&b
    [*a, *a]``... doubling each line, is refused before anything expands it); an alias inside
    what it names is refused too. A `UserFileError` naming `where`; a syntax error raises
    `yaml.YAMLError` as `yaml.safe_load` does."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise UserFileError(f"{where}: nested deeper than {MAX_DEPTH} levels: not read") from None
        if node is None:
            return None
        _check_yaml(node, where)
        return loader.construct_document(node)
    finally:
        loader.dispose()


YAML_VALUES = 100_000  # values of a YAML file once its aliases are expanded: a sweep config has tens


def _check_yaml(root: Any, where: str) -> None:
    """Depth-first over the composed nodes (each shared node once): the depth, cycles and the
    expanded size (a node's size: 1 plus its children's)."""
    sizes: dict[int, int] = {}
    walking: set[int] = set()
    todo: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while todo:
        node, depth, finished = todo.pop()
        children = [c for pair in node.value for c in pair] if node.id == "mapping" else \
            list(node.value) if node.id == "sequence" else []
        if finished:
            walking.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(node)] > YAML_VALUES:
                raise UserFileError(f"{where}: more than {YAML_VALUES:,} values once its aliases are expanded "
                                    "(an alias bomb?): not read")
            continue
        if id(node) in sizes:
            continue
        if id(node) in walking:
            raise UserFileError(f"{where}: an alias inside the value it names (a loop): not read")
        if depth > MAX_DEPTH:
            raise UserFileError(f"{where}: nested deeper than {MAX_DEPTH} levels: not read")
        walking.add(id(node))
        todo.append((node, depth, True))
        todo.extend((c, depth + 1, False) for c in children)


def kind(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


__all__ = ["DATA_LIMIT", "MAX_DEPTH", "SMALL_LIMIT", "YAML_VALUES", "UserFileError", "check_depth", "check_user_file",
           "kind", "load_json", "load_yaml", "open_user_file", "read_user_file"]
