"""Reading and writing data files (`localjudge.evaluation.tables`): JSONL, Parquet, CSV and saved
datasets round trip, mixed cells included; a bad JSONL line names its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.evaluation.tables import read_table, write_table
from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "example.jsonl"


def test_bad_jsonl_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"output": "a"}\n{"output": \n')
    with pytest.raises(ValueError, match="bad.jsonl:2: not valid JSON"):
        read_table(bad)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_tables_round_trip_with_mixed_cells(tmp_path: Path, suffix: str) -> None:
    dataset = read_table(EXAMPLE)  # strings and chat-message lists in one column
    out = tmp_path / f"out{suffix}"
    write_table(dataset, out)
    again = read_table(out)
    assert again.num_rows == dataset.num_rows == 8 and again.column_names == dataset.column_names
    if suffix == ".jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert rows[4]["output"] == [
            {"role": "assistant", "content": "Water boils at 100 degrees Celsius at sea level."}
        ]
        assert rows[2]["context"] == ["Hamlet is a tragedy by William Shakespeare.", "It was written around 1600."]


def test_csv_and_saved_dataset(tmp_path: Path) -> None:
    csv_file = tmp_path / "rows.csv"
    csv_file.write_text("input,output\nq,hello\n")
    assert read_table(csv_file).to_list() == [{"input": "q", "output": "hello"}]
    read_table(csv_file).save_to_disk(str(tmp_path / "saved"))
    assert read_table(tmp_path / "saved").num_rows == 1
