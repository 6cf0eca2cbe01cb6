"""The id on each printed row (`[id] scorer: score  reason`) is the row's id as docs/cli.md gives
it: the --id-col column's, a `run_id` column's, else its row number (rows without one printed
as `[]` before), on the lines printed as batches are scored and on those printed at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.cli.main import main

ROWS = [{"ref": "a-1", "output": "Fine, thanks."}, {"ref": "b-2", "output": "Great work!"},
        {"ref": "c-3", "output": "Terrible."}]


def ids(tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[dict[str, str]], *flags: str) -> list[str]:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["--quiet", "score", "--scorer", "tone", "--data", str(data), *flags]) == 0
    return [line.split("]")[0][1:] for line in capsys.readouterr().out.splitlines() if line.startswith("[")]


@pytest.mark.parametrize("batch_size", ["1", "8"])
def test_without_an_id_column_a_row_is_its_row_number(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      batch_size: str) -> None:
    assert ids(tmp_path, capsys, ROWS, "--batch-size", batch_size) == ["0", "1", "2"]


def test_the_id_column_names_the_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ids(tmp_path, capsys, ROWS, "--id-col", "ref") == ["a-1", "b-2", "c-3"]
    with_run_id = [{**row, "run_id": f"run-{i}"} for i, row in enumerate(ROWS)]
    assert ids(tmp_path, capsys, with_run_id) == ["run-0", "run-1", "run-2"]
