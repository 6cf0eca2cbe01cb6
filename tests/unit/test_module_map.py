"""docs/how-it-works.md's module map names every module of the package, each in its own folder's entry.

A scorer's own file (``judged/hallucination.py`` defines ``hallucination_scorer``) and a quick
check's (``coded/checks/includes.py`` defines ``check_includes_scorer``) are covered by the map's "one file per
scorer" and "one file each"; every other module is named where its folder is.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "localjudge"
PAGE = ROOT / "docs" / "how-it-works.md"
ENTRY = re.compile(r"^( {2}| {4})([\w.]+/?)\s")  # `  scoring/   ...`, `    transformers/   ...`


def module_map(text: str) -> str:
    """The text block under the page's "The module map" heading."""
    section = text.split("## The module map", 1)[1]
    return section.split("```text\n", 1)[1].split("```", 1)[0]


def entries(block: str) -> dict[str, str]:
    """Folder (``scoring/``, ``engines/vllm/``) or top-level file (``judge.py``) -> its entry's text."""
    found: dict[str, str] = {}
    parent = ""
    key = ""
    for line in block.splitlines()[1:]:  # the first line is `localjudge/`
        match = ENTRY.match(line)
        if match:
            name = match.group(2)
            if len(match.group(1)) == 2:
                parent = name if name.endswith("/") else ""
                key = name
            else:
                key = parent + name
            found[key] = line[match.end() :]
        elif key:
            found[key] += "\n" + line
    return found


def covered_by_rule(path: Path) -> bool:
    """A scorer's own file or a quick check's own file: the map says "one file per scorer/each"."""
    source = path.read_text(encoding="utf-8")
    if path.parent.name == "checks":
        return f"def check_{path.stem}_scorer(" in source
    return path.parent.name in ("judged", "coded") and f"def {path.stem}_scorer(" in source


def missing_modules(block: str) -> list[str]:
    """Modules of the package the map does not name (or does not name in their folder's entry)."""
    found = entries(block)
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        parts = relative.parts
        if len(parts) == 1:
            if parts[0] not in found:
                missing.append(str(relative))
            continue
        # a nested folder with its own entry (engines/vllm/) holds its modules; else the top folder
        folder = f"{parts[0]}/"
        if len(parts) > 2 and f"{parts[0]}/{parts[1]}/" in found:
            folder = f"{parts[0]}/{parts[1]}/"
        if folder not in found:
            missing.append(str(relative))
            continue
        if path.name == "__init__.py" or covered_by_rule(path):
            continue
        if not re.search(rf"(?<![\w.]){re.escape(path.name)}(?!\w)", found[folder]):
            missing.append(str(relative))
    return missing


def test_every_module_is_in_the_map() -> None:
    assert missing_modules(module_map(PAGE.read_text(encoding="utf-8"))) == []


def test_the_map_check_sees_a_module_left_out() -> None:
    block = module_map(PAGE.read_text(encoding="utf-8"))
    before = set(missing_modules(block))
    renamed = block.replace("planner.py", "planned.py")
    assert set(missing_modules(renamed)) - before == {"evaluation/planner.py"}
    no_judge = "\n".join(line for line in block.splitlines() if not line.startswith("  judge.py"))
    assert set(missing_modules(no_judge)) - before == {"judge.py"}
