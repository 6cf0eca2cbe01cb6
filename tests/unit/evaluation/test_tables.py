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


# --- Hostile files (issue 34, items 4 and 10): one odd row never rejects a file; errors name the line.

def test_a_lone_surrogate_in_one_row_becomes_fffd(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"  # "\ud83d" as JSON writes it: a lone surrogate once parsed
    data.write_text('{"input": "q", "output": "fine"}\n{"input": "q\\ud83d", "output": "a \\ud83d b"}\n')
    rows = read_table(data).to_list()
    assert rows == [{"input": "q", "output": "fine"}, {"input": "q\ufffd", "output": "a \ufffd b"}]
    write_table(read_table(data), tmp_path / "out.jsonl")  # UTF-8 all the way
    json_file = tmp_path / "rows.json"
    json_file.write_text('[{"output": "x \\udfff"}]')
    assert read_table(json_file).to_list() == [{"output": "x \ufffd"}]


def test_jsonl_with_a_byte_order_mark(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_bytes('\ufeff{"input": "q", "output": "a"}\n'.encode())
    assert read_table(data).to_list() == [{"input": "q", "output": "a"}]


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.json", "rows.csv"])
def test_a_file_that_is_not_utf8_names_its_line(tmp_path: Path, name: str) -> None:
    data = tmp_path / name
    body = {"rows.jsonl": b'{"output": "a"}\n{"output": "caf\xe9"}\n',
            "rows.json": b'[{"output": "a"},\n{"output": "\xe9"}]',
            "rows.csv": b"output\na\ncaf\xe9\n"}[name]
    data.write_bytes(body)
    line = 3 if name == "rows.csv" else 2
    with pytest.raises(ValueError, match=f"{name}:{line}: not UTF-8 text \\(byte 0xe9\\); save the file as UTF-8$"):
        read_table(data)


def test_bad_json_names_its_line_and_column(tmp_path: Path) -> None:
    data = tmp_path / "rows.json"
    data.write_text('[{"output": "a"},\n {"output": }]')
    with pytest.raises(ValueError, match=r"rows.json:2:13: not valid JSON \(Expecting value\)"):
        read_table(data)


def test_a_cell_that_looks_like_a_json_cell_stays_text(tmp_path: Path) -> None:
    """localjudge stores a mixed-type column as JSON text behind a NUL marker; a user's cell that
    starts the same way is read under the storing rule (NUL dropped), so it is never re-typed.
    Parquet files `datasets` wrote (localjudge's own output) keep their marked cells."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from localjudge.evaluation import decode_cell
    from localjudge.evaluation.tables import dataset_from_rows

    (tmp_path / "rows.csv").write_text('output,n\n"\x00json:[1, 2]",\x00json:5\n')
    pq.write_table(pa.table({"output": ["\x00json:[1, 2]"], "n": ["\x00json:5"]}), tmp_path / "rows.parquet")
    (tmp_path / "rows.jsonl").write_text(json.dumps({"output": "\x00json:[1, 2]", "n": "\x00json:5"}) + "\n")
    for name in ("rows.csv", "rows.parquet", "rows.jsonl"):
        (row,) = read_table(tmp_path / name).to_list()
        assert {k: decode_cell(v) for k, v in row.items()} == {"output": "json:[1, 2]", "n": "json:5"}, name
    mixed = dataset_from_rows([{"output": "a"}, {"output": [{"role": "assistant", "content": "b"}]}])
    write_table(mixed, tmp_path / "ours.parquet")
    assert decode_cell(read_table(tmp_path / "ours.parquet")[1]["output"]) == [{"role": "assistant", "content": "b"}]
