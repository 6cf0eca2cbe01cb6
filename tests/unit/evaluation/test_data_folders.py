"""A folder of data files as `--data` (`read_table`): its JSONL, JSON, CSV and parquet files in name
order, one table; each row's id is its file's name and its row number there, so adding a file
rescores no other file's rows; a single file reads as before; a folder that does not join is one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge.cli.main import main
from localjudge.evaluation import FOLDER_ROW, Columns, ResultStore, evaluate, read_table, rows_to_runs, write_table
from localjudge.evaluation.tables import dataset_from_rows, decode_cell
from localjudge.scorers import build_scorer
from tests.fakes import FakeJudgeFactory


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def rows_of(tag: str, n: int) -> list[dict[str, Any]]:
    return [{"input": f"q {tag}{i}", "output": f"answer {tag}{i}"} for i in range(n)]


def test_a_folder_is_its_data_files_in_name_order_with_each_row_s_file_and_number(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "b.jsonl", rows_of("b", 2))
    (tmp_path / "a.csv").write_text("input,output\nq a0,answer a0\n", encoding="utf-8")
    write_table(dataset_from_rows(rows_of("c", 1)), tmp_path / "c.parquet")
    (tmp_path / "d.json").write_text(json.dumps(rows_of("d", 1)), encoding="utf-8")
    (tmp_path / "empty.jsonl").write_text("")  # no rows, so no columns: adds nothing
    (tmp_path / "notes.txt").write_text("not data")
    write_jsonl(tmp_path / ".hidden.jsonl", [{"other": 1}])
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "x.jsonl", [{"other": 1}])
    table = read_table(tmp_path)
    assert table.column_names == ["input", "output", FOLDER_ROW]
    assert table[FOLDER_ROW] == ["a.csv#0", "b.jsonl#0", "b.jsonl#1", "c.parquet#0", "d.json#0"]
    assert table["output"] == ["answer a0", "answer b0", "answer b1", "answer c0", "answer d0"]
    assert [run["run_id"] for run in rows_to_runs(table, Columns())] == table[FOLDER_ROW]
    assert [run["run_id"] for run in rows_to_runs(table, Columns(run_id="input"))] == table["input"]
    write_table(table, tmp_path / "sub" / "scored.jsonl")  # a folder run's output keeps its ids when read again
    assert [run["run_id"] for run in rows_to_runs(read_table(tmp_path / "sub" / "scored.jsonl"), Columns())] == \
        table[FOLDER_ROW]


def test_a_single_file_reads_as_before_its_row_numbers_its_run_ids(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "rows.jsonl", rows_of("a", 3))
    table = read_table(tmp_path / "rows.jsonl")
    assert table.column_names == ["input", "output"]
    assert [run["run_id"] for run in rows_to_runs(table, Columns())] == ["0", "1", "2"]


def test_adding_a_file_rescores_only_its_own_rows(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "b.jsonl", rows_of("b", 2))
    write_jsonl(data / "c.jsonl", rows_of("c", 2))
    store = ResultStore(tmp_path / "log")
    evaluate(read_table(data), [build_scorer("toxicity", fake_judge())], store=store)
    write_jsonl(data / "a.jsonl", rows_of("a", 3))  # sorts first: every other row moves down three
    again = evaluate(read_table(data), [build_scorer("toxicity", fake_judge())], store=ResultStore(tmp_path / "log"))
    assert again.summary["toxicity"].resumed == 4
    assert len(ResultStore(tmp_path / "log").load()) == 7


def test_a_column_typed_apart_in_two_files_joins_as_in_one_jsonl(tmp_path: Path) -> None:
    chat = [{"role": "assistant", "content": "Paris."}]
    write_jsonl(tmp_path / "a.jsonl", [{"output": "Lyon."}])
    write_jsonl(tmp_path / "b.jsonl", [{"output": chat}])
    table = read_table(tmp_path)
    assert [decode_cell(cell) for cell in table["output"]] == ["Lyon.", chat]
    assert table[FOLDER_ROW] == ["a.jsonl#0", "b.jsonl#0"]


@pytest.mark.parametrize(("files", "message"), [
    ({"notes.txt": "x"}, "is a folder with no data files (.jsonl, .json, .csv, .parquet) and not a saved"),
    ({"a.jsonl": '{"output": "x"}\n', "b.jsonl": '{"answer": "x"}\n'},
     "b.jsonl has the columns answer but a.jsonl has output: the files of a data folder need the same columns"),
    ({"a.jsonl": json.dumps({"output": "x", FOLDER_ROW: "a.jsonl#0"}) + "\n"},
     f"a data folder's file has a column '{FOLDER_ROW}'"),
])
def test_a_folder_that_does_not_read_as_one_table_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ValueError) as caught:
        read_table(tmp_path)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    code = main(["score", "--model", ".", "--scorer", "toxicity", "--data", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
