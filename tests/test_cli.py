"""CLI errors and file I/O, without a model: each bad input is one clear line and exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.cli import main
from localjudge.engines.model_files import ModelPathError, check_model_dir
from localjudge.evaluation.tables import read_table, write_table
from tests.fakes import FakeJudgeFactory

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "example.jsonl"


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "models/nope", "--scorer", "toxicity", "--data", str(EXAMPLE)], "does not exist"),
        (["--model", "Qwen/Qwen2.5-7B-Instruct", "--scorer", "toxicity", "--data", str(EXAMPLE)],
         "hub id: localjudge never downloads"),
        (["--model", ".", "--scorer", "toxicity", "--data", str(EXAMPLE)], "not a model directory"),
        (["--model", ".", "--scorer", "toxicity,bogus", "--data", str(EXAMPLE)], "unknown scorer 'bogus'"),
        (["--model", ".", "--scorer", "toxicity", "--data", "missing.jsonl"],
         "data file 'missing.jsonl' does not exist"),
        (["--model", ".", "--scorer", "toxicity", "--data", str(EXAMPLE), "--output-col", "answer"],
         "unknown column 'answer'"),
        (["--model", ".", "--scorer", "hallucination", "--data", str(EXAMPLE), "--context-col", "docs"],
         "unknown column 'docs'"),
    ],
)
def test_score_errors_are_one_line(capsys, argv: list[str], message: str) -> None:
    code, err = run_cli(capsys, "score", *argv)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_empty_data_file(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, err = run_cli(capsys, "score", "--model", ".", "--scorer", "toxicity", "--data", str(empty))
    assert code == 2 and "no rows" in err


def test_bad_jsonl_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"output": "a"}\n{"output": \n')
    with pytest.raises(ValueError, match="bad.jsonl:2: not valid JSON"):
        read_table(bad)


def test_help_reads_well(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    out = capsys.readouterr().out
    for flag in ("--model", "--scorer", "--data", "--out", "--batch-size", "--context-col", "--no-resume"):
        assert flag in out


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


def test_model_files_refuse_pickle(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "pytorch_model.bin").write_bytes(b"pickle")
    with pytest.raises(ModelPathError, match="pickle"):
        check_model_dir(tmp_path)
    assert check_model_dir(tmp_path, allow_pickle=True).weights[0].name == "pytorch_model.bin"
    (tmp_path / "model.safetensors").write_bytes(b"x")
    assert check_model_dir(tmp_path).weights[0].name == "model.safetensors"


def test_toml_sweep_without_tomllib_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    """Python 3.10 has no tomllib: a TOML sweep says what to do instead of a traceback."""
    import sys

    from localjudge.cli.sweep import load_config

    config = tmp_path / "sweep.toml"
    config.write_text('out_dir = "x"\n')
    monkeypatch.setitem(sys.modules, "tomllib", None)  # import tomllib now raises ImportError
    monkeypatch.setitem(sys.modules, "tomli", None)
    with pytest.raises(ValueError, match="needs Python 3.11\\+ or `pip install tomli`"):
        load_config(config)


def test_no_resume_data_parallel_merge_scores_each_row_once(tmp_path: Path, monkeypatch,
                                                            fake_judge: FakeJudgeFactory) -> None:
    """Two ranks with --no-resume, simulated in one process (rank 1, then rank 0, which merges):
    rank 0 judges only its own shard and takes rank 1's rows from the scratch folder, whose stale
    logs (its own, a rank beyond the world) are never read; nothing is left behind."""
    from localjudge.cli import score, shared

    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    rows = [{"run_id": str(i), "input": "q", "output": f"answer {i}"} for i in range(5)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["--quiet", "score", "--model", "m", "--scorer", "toxicity", "--data", str(data), "--out", str(out)]
    monkeypatch.setattr(shared, "build_judge", lambda args, device=None: fake_judge())
    assert main([*argv[:-2], "--out", str(tmp_path / "single.jsonl")]) == 0
    every_row = (tmp_path / "single.jsonl.progress" / "rank-0.jsonl").read_text()  # valid logs of all rows

    scratch = tmp_path / "out.jsonl.ranks"
    scratch.mkdir()
    (scratch / "rank-7.jsonl").write_text(every_row.replace('"reason": "ok"', '"reason": "stale"'))  # 8 ranks then
    monkeypatch.setattr(score, "wait_for_everyone", lambda: None)
    monkeypatch.setattr(score, "distributed_device", lambda: "cpu")
    judges: list = []
    monkeypatch.setattr(shared, "build_judge", lambda args, device=None: judges.append(fake_judge()) or judges[-1])
    for rank in (1, 0):
        monkeypatch.setattr(score, "distributed_rank", lambda rank=rank: (rank, 2))
        if rank == 0:
            (scratch / "rank-0.jsonl").write_text(every_row)  # rank 0's own log from an earlier run
        assert main([*argv, "--no-resume"]) == 0
    judged = [sum(len(c.prompts) for c in j.calls if c.schema_names[0] == "ToxicityVerdicts") for j in judges]
    assert judged == [2, 3]  # rank 1 judges rows 1 and 3, rank 0 rows 0, 2 and 4: no stale log read
    assert out.read_bytes() == (tmp_path / "single.jsonl").read_bytes()
    assert not scratch.exists() and not Path(f"{out}.progress").exists()
