"""`localjudge score` without a model: each bad input is one clear line and exit code 2 (a bad model
path checked by a stand-in engine, as the real engines' `load` does first); the data-parallel
merge with --no-resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.cli.main import main
from tests.conftest import EXAMPLES
from tests.fakes import FakeJudgeFactory, path_check_only, stand_in_engine

EXAMPLE = EXAMPLES / "example.jsonl"


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
        *((["--model", ".", "--scorer", "toxicity", "--data", str(EXAMPLE), "--threads", n],
          f"--threads must be a whole number of at least 1, got {n}") for n in ("-1", "0")),  # issue 34, item 7
    ],
)
def test_score_errors_are_one_line(capsys, monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str) -> None:
    stand_in_engine(monkeypatch, path_check_only)
    code, err = run_cli(capsys, "score", *argv)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_empty_data_file(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, err = run_cli(capsys, "score", "--model", ".", "--scorer", "toxicity", "--data", str(empty))
    assert code == 2 and "no rows" in err


def test_help_reads_well(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    out = capsys.readouterr().out
    for flag in ("--model", "--scorer", "--data", "--out", "--batch-size", "--context-col", "--no-resume"):
        assert flag in out


def test_no_resume_data_parallel_merge_scores_each_row_once(tmp_path: Path, monkeypatch,
                                                            fake_judge: FakeJudgeFactory) -> None:
    """Two ranks with --no-resume, simulated in one process (rank 1, then rank 0, which merges):
    rank 0 judges only its own shard and takes rank 1's rows from the scratch folder, whose stale
    logs (its own, a rank beyond the world) are never read; nothing is left behind."""
    from localjudge.cli import model_flags, score

    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    rows = [{"run_id": str(i), "input": "q", "output": f"answer {i}"} for i in range(5)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["--quiet", "score", "--model", "m", "--scorer", "toxicity", "--data", str(data), "--out", str(out)]
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge())
    assert main([*argv[:-2], "--out", str(tmp_path / "single.jsonl")]) == 0
    every_row = (tmp_path / "single.jsonl.progress" / "rank-0.jsonl").read_text()  # valid logs of all rows

    scratch = tmp_path / "out.jsonl.ranks"
    scratch.mkdir()
    (scratch / "rank-7.jsonl").write_text(every_row.replace('"reason": "ok"', '"reason": "stale"'))  # 8 ranks then
    monkeypatch.setattr(score, "wait_for_everyone", lambda: None)
    monkeypatch.setattr(score, "distributed_device", lambda: "cpu")
    judges: list = []
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: judges.append(fake_judge()) or judges[-1])
    for rank in (1, 0):
        monkeypatch.setattr(score, "distributed_rank", lambda rank=rank: (rank, 2))
        if rank == 0:
            (scratch / "rank-0.jsonl").write_text(every_row)  # rank 0's own log from an earlier run
        assert main([*argv, "--no-resume"]) == 0
    judged = [sum(len(c.prompts) for c in j.calls if c.schema_names[0] == "ToxicityVerdicts") for j in judges]
    assert judged == [2, 3]  # rank 1 judges rows 1 and 3, rank 0 rows 0, 2 and 4: no stale log read
    assert out.read_bytes() == (tmp_path / "single.jsonl").read_bytes()
    assert not scratch.exists() and not Path(f"{out}.progress").exists()
