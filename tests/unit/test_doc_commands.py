"""Every shell block of the README and `docs/` is run by the tests word for word, or names the test
that runs it, or says why nothing here can (issue 61).

A ```bash (`sh`, `shell`, `console`) block's class is the `<!-- ... -->` line right before it:

- none: run here, by `test_the_pages_commands_run`, in a scratch folder laid out as a checkout
  (`examples/` and `models/` linked), the page's unmarked blocks in order. Each command (a line;
  `\\` continues it, `&&` splits it, `#` ends it) is a `localjudge` command (`localjudge`,
  `.venv/bin/localjudge`, `.venv-vllm/bin/localjudge`), run in-process word for word on the
  scripted fake judge (`--quiet` added: no progress bars): exit 0, no traceback, no unscored row;
  an `echo` line (`echo '[...]' > rubric.json`), run by bash; or a set-up scripts/check.sh has run
  before the unit tier starts (`bash scripts/setup.sh`). A `localjudge` command the fake judge
  cannot stand behind (`--engine vllm`, `--ray`, `serve`) needs another class. A block after
  `<!-- file: NAME -->` is a file the page asks the reader to save: written under NAME first, and
  some command of the page names it. The names pages use for "your model, your file" (`M`,
  `rows.jsonl`, ...) are bound in one table, `PLACEHOLDERS` (tests/unit/doc_runner.py, which runs
  the blocks; tests/unit/doc_blocks.py reads them). `bench`'s bootstrap resamples are cut to 20 and
  its PNG plots left out (tests/unit/bench checks both): the rest as documented.
- `<!-- run-by: FILE[, FILE...] -->`: those tests (or CI's scripts) run it
  (tests/unit/test_doc_classes.py checks the claim). Each command of the block
  is in one of the files word for word (whitespace aside), or the file reads it from the page
  (it holds the page's name as a string, `"mastra-storage.md"`), or it is a set-up scripts/check.sh
  runs before that file's tier (`bash scripts/setup_node.sh` before tests/storage).
- `<!-- not-run: WHY -->`: nothing here can run it (a GPU, a cluster, an old commit's worktree, a
  benchmark of many minutes whose figures are on the page). docs/development.md lists each such
  block, with the same WHY, under "Documented commands the tests do not run".

Any other marker before a shell block is an error. A broken command fails the run (a test
misspells a flag), as does a broken file block (a test drops an import). The model tier runs the
commands on the file blocks again on the default model (tests/model/test_docs.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.unit.doc_blocks import file_blocks, shell_blocks
from tests.unit.doc_runner import PAGES_WITH_COMMANDS, PAGES_WITH_FILES, PLACEHOLDERS, run_commands, runnable, used
from tests.unit.test_docs import rel


@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS, ids=rel)
def test_the_pages_commands_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    text = page.read_text(encoding="utf-8")
    problems = run_commands(page, text, tmp_path, monkeypatch, capsys)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES_WITH_FILES, ids=rel)
def test_a_command_of_the_page_runs_on_each_file_block(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for name in file_blocks(page, text):
        assert any(used(name, c.words) for c in runnable(page, text)), \
            f"{rel(page)}: the file block {name}, and no command of the page runs on it"


def test_every_placeholder_is_used() -> None:
    """`PLACEHOLDERS` holds no name that no page uses."""
    words = [c.words for p in PAGES_WITH_COMMANDS for c in runnable(p, p.read_text(encoding="utf-8"))]
    assert [name for name in PLACEHOLDERS if not any(used(name, w) for w in words)] == []


def test_a_broken_command_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """docs/scorers/rubric.md's command with a misspelt flag fails the check, in the CLI's one line."""
    page = ROOT / "docs" / "scorers" / "rubric.md"
    text = page.read_text(encoding="utf-8")
    broken = text.replace("--scorer-option rubric.criteria=@rubric.json", "--scorer-opton rubric.criteria=@rubric.json")
    assert broken != text
    problems = run_commands(page, broken, tmp_path, monkeypatch, capsys)
    assert len(problems) == 1 and "--scorer-opton rubric.criteria=@rubric.json` exited 2" in problems[0]
    assert "unrecognized arguments: --scorer-opton" in problems[0] and "Traceback" not in problems[0]


def test_a_broken_file_block_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The scorer file of docs/writing-scorers.md without its `create_scorer` import (as the page
    once had it) fails the check, in the one line the CLI gives for it."""
    page = ROOT / "docs" / "writing-scorers.md"
    assert page in PAGES_WITH_FILES
    text = page.read_text(encoding="utf-8")
    broken = text.replace("from localjudge import JudgeStep, create_scorer\n", "from localjudge import JudgeStep\n", 1)
    assert broken != text
    problems = run_commands(page, broken, tmp_path, monkeypatch, capsys)
    assert problems and "NameError: name 'create_scorer' is not defined" in problems[0]
    assert "Traceback" not in problems[0]


def test_a_command_the_fake_judge_cannot_stand_behind_needs_a_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """docs/serve.md's start command, unmarked, is refused before it starts a server."""
    page = ROOT / "docs" / "serve.md"
    text = page.read_text(encoding="utf-8")
    (block,) = [b for b in shell_blocks(page) if "localjudge serve --model" in b.code]
    unmarked = text.replace(block.marker + "\n", "", 1)
    assert unmarked != text
    problems = run_commands(page, unmarked, tmp_path, monkeypatch, capsys)
    assert problems == [f"docs/serve.md:{block.line - 1}: `.venv/bin/localjudge serve --model "
                        "models/smollm2-135m-instruct --served-model-name judge`: `serve` starts a server: not on "
                        "the fake judge here; mark the block <!-- run-by: TEST --> or <!-- not-run: WHY -->"]
