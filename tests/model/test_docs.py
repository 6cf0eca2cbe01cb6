"""The docs' `<!-- needs-model -->` Python blocks, and the commands run on their `<!-- file: NAME -->`
blocks, on the default model (the unit tier runs them on the fake judge: tests/unit/test_docs.py and
tests/unit/test_doc_commands.py; the page parsing and the runner used here are theirs:
tests/unit/test_docs.py, tests/unit/doc_runner.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import make_fake_judge
from tests.unit.doc_runner import PAGES_WITH_FILES, run_commands
from tests.unit.test_docs import PAGES_WITH_MODEL_EXAMPLES, rel, run_page


@pytest.mark.parametrize("page", PAGES_WITH_MODEL_EXAMPLES, ids=rel)
def test_needs_model_examples_run_on_the_default_model(page: Path, model_dir: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "models").symlink_to(model_dir.parent, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    run_page(page, make_fake_judge(), model_blocks=True, other_blocks=False)


@pytest.mark.parametrize("page", PAGES_WITH_FILES, ids=rel)
def test_file_blocks_run_on_the_default_model(page: Path, model_dir: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The page's command, word for word, on the file it asks the reader to save: exit 0, no traceback."""
    problems = run_commands(page, page.read_text(encoding="utf-8"), tmp_path, monkeypatch, capsys, real_model=True)
    assert not problems, "\n".join(problems)
