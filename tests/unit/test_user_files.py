"""One rule for files a user names (issue 57 N3, N6, N12; `localjudge.user_files`): data files,
calibration files, ``@FILE`` option values and sweep configs are read only as regular files (a
FIFO no longer hangs, `/dev/zero` no longer ends in a MemoryError), up to a size cap, nested at
most `MAX_DEPTH` deep (no RecursionError) and, for YAML, at most `YAML_VALUES` values once its
aliases expand (no alias bomb); each refusal one line naming the file. A CSV cell may be as long
as its file (a 200 KB context no longer ends the run)."""

from __future__ import annotations

import csv
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from localjudge.bench.calibration_file import load_calibration
from localjudge.cli.main import main
from localjudge.cli.shared import CliError, option_value
from localjudge.cli.sweep_config import load_config
from localjudge.evaluation import read_table
from localjudge.user_files import MAX_DEPTH, UserFileError, read_user_file

DEEP = "[" * 100_000 + "]" * 100_000  # past the parser's own recursion limit
NESTED = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)  # within the parser's, past the rule's


def quickly(call: Callable[[], Any], seconds: float = 10.0) -> BaseException | None:
    """What `call` raised (None if nothing), failing the test if it does not end in `seconds`."""
    said: list[BaseException | None] = [None]

    def run() -> None:
        try:
            call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            said[0] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the read hangs"
    return said[0]


def one_line(error: BaseException | None, name: str) -> str:
    assert isinstance(error, (ValueError, CliError)), repr(error)
    text = str(error)
    assert "\n" not in text and name in text, text
    return text


READERS: dict[str, Callable[[Path], Any]] = {
    "data.jsonl": read_table, "data.json": read_table, "data.csv": read_table,
    "cal.json": load_calibration,
    "opt.json": lambda p: option_value(f"@{p}", "--scorer-option rubric.criteria"),
    "sweep.yaml": load_config, "sweep.toml": load_config,
}


@pytest.mark.parametrize("name", list(READERS))
def test_a_fifo_is_refused_at_once(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    os.mkfifo(path)
    text = one_line(quickly(lambda: READERS[name](path)), name)
    assert "not a regular file (a FIFO)" in text


@pytest.mark.parametrize("name", list(READERS))
def test_a_link_to_dev_zero_is_refused_without_reading_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.symlink_to("/dev/zero")
    text = one_line(quickly(lambda: READERS[name](path)), name)
    assert "a character device" in text


def test_a_file_over_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    path.write_bytes(b" " * 2048)
    with pytest.raises(UserFileError, match="larger than 1,024 bytes"):
        read_user_file(path, "calibration file", limit=1024)


@pytest.mark.parametrize("deep", [DEEP, NESTED], ids=["past-the-parser", "past-the-rule"])
@pytest.mark.parametrize("name", ["data.jsonl", "data.json", "cal.json", "opt.json"])
def test_json_nested_too_deep_is_one_line(tmp_path: Path, name: str, deep: str) -> None:
    path = tmp_path / name
    row = '{"input": "q", "output": "a", "context": ' + deep + "}"
    path.write_text({"data.jsonl": row + "\n", "data.json": f"[{row}]"}.get(name, deep), encoding="utf-8")
    text = one_line(quickly(lambda: READERS[name](path)), name)
    assert f"nested deeper than {MAX_DEPTH} levels" in text


def test_a_row_nested_within_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    within = "[" * (MAX_DEPTH - 10) + "]" * (MAX_DEPTH - 10)
    path.write_text('{"input": "q", "output": "a", "context": ' + within + "}\n", encoding="utf-8")
    assert len(read_table(path)) == 1


SWEEP = "models: [{path: models/m}]\nscorers: [toxicity]\ndatasets: [{path: data.jsonl}]\n"


@pytest.mark.parametrize(("name", "text", "said"), [
    ("sweep.yaml", SWEEP + "ray: " + "[" * 100_000 + "]" * 100_000 + "\n", f"nested deeper than {MAX_DEPTH}"),
    ("sweep.yaml", SWEEP + "ray: " + NESTED + "\n", f"nested deeper than {MAX_DEPTH}"),
    ("sweep.toml", 'scorers = ["toxicity"]\nray = ' + NESTED + "\n", f"nested deeper than {MAX_DEPTH}"),
    ("sweep.yaml", SWEEP + "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
     + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)),
     "aliases are expanded (an alias bomb?)"),
    ("sweep.yaml", SWEEP + "loop: &l [1, *l]\n", "a loop"),
])
def test_a_hostile_sweep_config_is_one_line(tmp_path: Path, name: str, text: str, said: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert said in one_line(quickly(lambda: load_config(path)), name)
    assert main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("localjudge: error: ") and err.count("\n") == 1 and said in err, err


def test_a_csv_cell_larger_than_csv_s_default_limit_is_read_whole(tmp_path: Path) -> None:
    context = "A long retrieved passage. " * 8_000  # 208 KB: over csv's 128 KiB field limit
    path = tmp_path / "data.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["input", "output", "context"], ["q", "a", context]])
    before = csv.field_size_limit()
    assert read_table(path)["context"] == [context]
    assert csv.field_size_limit() == before  # put back: the limit is the process's


def test_option_file_errors_name_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "opt.json"
    path.write_text(json.dumps(["Answers the question."]), encoding="utf-8")
    assert option_value(f"@{path}", "x") == ["Answers the question."]
    os.remove(path)
    os.mkfifo(path)
    error = quickly(lambda: option_value(f"@{path}", "--scorer-option rubric.criteria"))
    assert isinstance(error, CliError)
    assert str(error).startswith("--scorer-option rubric.criteria: the option file") and "FIFO" in str(error)
