"""The shell blocks of the README and `docs/` as the doc tests read them: a page's shell blocks
and file blocks, each block's commands as written (a line; `\\` continues it, `&&` splits it,
`#` ends it), the block markers, and the set-ups scripts/check.sh runs before each tier.

tests/unit/test_doc_commands.py runs the unmarked blocks (`doc_runner`), tests/unit/test_doc_classes.py
checks the marked ones' claims.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT
from tests.unit.test_docs import Block, parse, rel

SHELLS = ("bash", "sh", "shell", "console")
RUN_BY = re.compile(r"^<!--\s*run-by:\s*(.+?)\s*-->$")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->$")
FILE_MARKER = re.compile(r"^<!--\s*file:\s*[\w.-]+\s*-->$")


@dataclass(frozen=True)
class Command:
    block: Block
    text: str  # as written: its comment dropped, a continued line joined

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)

    @property
    def where(self) -> str:
        return f"{rel(self.block.page)}:{self.block.line}"


def split_line(line: str) -> list[str]:
    """A shell line's commands as written: the comment (`#` starting a word, unquoted) dropped,
    split at an unquoted `&&`."""
    parts: list[str] = []
    start, quote, i = 0, "", 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                i += 1
        elif char in "'\"":
            quote = char
        elif char == "\\":
            i += 1
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            break
        elif line.startswith("&&", i):
            parts.append(line[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(line[start:i])
    return [part.strip() for part in parts if part.strip()]


def commands(block: Block) -> list[Command]:
    joined = re.sub(r"\s*\\\n\s*", " ", block.code)
    return [Command(block, text) for line in joined.split("\n") for text in split_line(line)]


def shell_blocks(page: Path, text: str | None = None) -> list[Block]:
    """The page's shell blocks, file blocks aside (a file is saved, not run)."""
    _, blocks = parse(page.read_text(encoding="utf-8") if text is None else text, page)
    return [b for b in blocks if b.lang in SHELLS and not FILE_MARKER.match(b.marker)]


def file_blocks(page: Path, text: str | None = None) -> dict[str, str]:
    """The page's file blocks: name -> text."""
    _, blocks = parse(page.read_text(encoding="utf-8") if text is None else text, page)
    return {b.file_name: b.code + "\n" for b in blocks if b.file_name}


def normal(text: str) -> str:
    return " ".join(text.split())


def tier_set_ups() -> dict[str, set[str]]:
    """Each tier -> the set-ups scripts/check.sh runs before it (its NEEDS table), as commands."""
    script = (ROOT / "scripts" / "check.sh").read_text(encoding="utf-8")
    table = script.split("declare -A NEEDS=(", 1)[1].split("\n)", 1)[0]
    return {tier: {f"bash scripts/{name}.sh" for name in names.split()}
            for tier, names in re.findall(r"\[(\w+)\]=\"([^\"]*)\"", table)}
