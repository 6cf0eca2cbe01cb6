"""The class of each shell block of the README and `docs/` (issue 61; tests/unit/test_doc_commands.py
says what each class means and runs the unmarked ones): a marker no class knows is an error; a
`<!-- run-by: FILE -->` claim must be borne out by FILE; every `<!-- not-run: WHY -->` block is
listed, with its why, in one place, docs/development.md's "Documented commands the tests do not
run"."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.unit.doc_blocks import NOT_RUN, RUN_BY, commands, normal, shell_blocks, tier_set_ups
from tests.unit.test_docs import Block, example_pages, rel

NOT_RUN_SECTION = "## Documented commands the tests do not run"
DEVELOPMENT = ROOT / "docs" / "development.md"


def class_problems(block: Block) -> list[str]:
    """What is wrong with a shell block's marker: one no class knows."""
    if block.marker and not (RUN_BY.match(block.marker) or NOT_RUN.match(block.marker)):
        return [f"{rel(block.page)}:{block.line}: {block.marker} is no class of shell block: none (run here), "
                "<!-- run-by: FILE --> or <!-- not-run: WHY -->"]
    return []


def tier_of(path: str) -> str | None:
    """The tier a test file runs in (tests/storage/... -> storage), or None."""
    parts = Path(path).parts
    return {"llama_server": "llama"}.get(parts[1], parts[1]) if parts[0] == "tests" and len(parts) > 2 else None


def run_by_problems(block: Block) -> list[str]:
    """A `run-by` claim that the named files do not bear out."""
    match = RUN_BY.match(block.marker)
    assert match
    where = f"{rel(block.page)}:{block.line}"
    names = [name.strip() for name in match.group(1).split(",")]
    problems = [f"{where}: run-by names {name}, which does not exist" for name in names if not (ROOT / name).is_file()]
    if problems:
        return problems
    set_ups = tier_set_ups()
    texts = {name: (ROOT / name).read_text(encoding="utf-8") for name in names}
    done_before = set().union(*(set_ups.get(tier_of(name) or "", set()) for name in names))
    if ".ci/run" in names:
        done_before |= set().union(*set_ups.values())
    reads_page = [name for name, text in texts.items() if f'"{block.page.name}"' in text]  # ROOT / "docs" / "x.md"
    for command in commands(block):
        if reads_page or normal(command.text) in done_before:
            continue
        if not any(normal(command.text) in normal(text) for text in texts.values()):
            problems.append(f"{where}: `{command.text}` is in none of {', '.join(names)} (word for word), which "
                            "do not read the page either")
    return problems


def not_run_markers(pages: list[Path]) -> list[tuple[str, str, str]]:
    """(page, first command, why) of every `not-run` block."""
    found = []
    for page in pages:
        for block in shell_blocks(page):
            match = NOT_RUN.match(block.marker)
            if match:
                first = commands(block)[0].text if commands(block) else ""
                found.append((rel(page), first, match.group(1)))
    return found


def not_run_table(text: str) -> list[tuple[str, str, str]]:
    """The rows of docs/development.md's table of the blocks the tests do not run: (page, the
    block's first command or its first words then "...", why), backticks stripped."""
    assert NOT_RUN_SECTION + "\n" in text, f"docs/development.md has no section {NOT_RUN_SECTION!r}"
    section = text.split(NOT_RUN_SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.split("\n"):
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if line.startswith("| `") and len(cells) == 3:
            rows.append((cells[0].strip("`"), cells[1].strip("`"), cells[2]))
    return rows


def names(row: tuple[str, str, str], marker: tuple[str, str, str]) -> bool:
    """A table row names a not-run block: its page and why, and its first command (whole, or
    its first words then "...")."""
    (page, first, why), (block_page, command, block_why) = row, marker
    if (page, why) != (block_page, block_why):
        return False
    return first == command or (first.endswith(" ...") and (command + " ").startswith(first[:-3]))


def table_differences(pages: list[Path], table: str) -> list[str]:
    markers, rows = not_run_markers(pages), not_run_table(table)
    problems = []
    for page, command, why in markers:
        found = [row for row in rows if names(row, (page, command, why))]
        if len(found) != 1:
            problems.append(f"{page}: the not-run block `{command}` ({why}) is named by {len(found)} rows of "
                            "docs/development.md's table, not 1")
    problems += [f"docs/development.md's table names no not-run block: | `{page}` | `{first}` | {why} |"
                 for page, first, why in rows if not any(names((page, first, why), m) for m in markers)]
    return problems


def test_every_shell_block_has_a_known_class() -> None:
    problems = [p for page in example_pages() for block in shell_blocks(page) for p in class_problems(block)]
    assert not problems, "\n".join(problems)


def test_the_run_by_claims_hold() -> None:
    problems = [p for page in example_pages() for block in shell_blocks(page) if RUN_BY.match(block.marker)
                for p in run_by_problems(block)]
    assert not problems, "\n".join(problems)


def test_a_run_by_claim_the_file_does_not_bear_out_fails() -> None:
    """docs/mastra-storage.md's app command, claimed by a test that neither holds it nor reads the page."""
    page = ROOT / "docs" / "mastra-storage.md"
    (block,) = [b for b in shell_blocks(page) if b.code == "node examples/mastra/app.mjs"]
    assert not run_by_problems(block)
    claimed = Block(page, block.line, block.lang, block.code, "<!-- run-by: tests/ray/test_score_on_ray.py -->")
    assert run_by_problems(claimed) == [f"docs/mastra-storage.md:{block.line}: `node examples/mastra/app.mjs` is in "
                                        "none of tests/ray/test_score_on_ray.py (word for word), which do not read "
                                        "the page either"]


def test_the_not_run_blocks_are_listed_in_one_place() -> None:
    problems = table_differences(example_pages(), DEVELOPMENT.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_a_not_run_block_missing_from_the_list_fails() -> None:
    text = DEVELOPMENT.read_text(encoding="utf-8")
    rows = not_run_table(text)
    assert len(rows) >= 10
    page, first, why = rows[-1]
    dropped = "\n".join(line for line in text.split("\n") if not line.startswith(f"| `{page}` | `{first}` |"))
    (problem,) = table_differences(example_pages(), dropped)
    assert problem.startswith(f"{page}: the not-run block `{first.removesuffix(' ...')}") and problem.endswith(
        f"({why}) is named by 0 rows of docs/development.md's table, not 1")
