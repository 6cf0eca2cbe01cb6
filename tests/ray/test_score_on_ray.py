"""`localjudge score --ray` on the default model (SmolLM2-135M) against plain `localjudge score`:
the three default scorers over the example rows give the same file, and the same result keys
(the judge identity among them) in the resume log. A bad model path is one line, before any actor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from localjudge.cli.main import main
from tests.conftest import EXAMPLES

SCORERS = "hallucination,faithfulness,toxicity"
ROWS = 2  # the first two example rows (one batch): every scorer's claims and verdicts, in the tier's budget


def score(out: Path, model: Path, *extra: str) -> None:
    code = main(["--quiet", "score", "--model", str(model), "--scorer", SCORERS, "--data",
                 str(EXAMPLES / "example.jsonl"), "--limit", str(ROWS), "--batch-size", "2", "--out", str(out),
                 *extra])
    assert code == 0


def keys(out: Path) -> set[str]:
    return {json.loads(line)["key"] for line in Path(f"{out}.progress/rank-0.jsonl").read_text().splitlines()}


def test_the_same_file_as_without_ray(cluster: Any, model_dir: Path, tmp_path: Path) -> None:
    score(tmp_path / "ray.jsonl", model_dir, "--ray", "--judges", "1")
    score(tmp_path / "local.jsonl", model_dir)
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert keys(tmp_path / "ray.jsonl") == keys(tmp_path / "local.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    assert len(rows) == ROWS and any(row["hallucination_score"] is not None for row in rows)


def test_a_bad_model_path_is_one_line_before_any_actor(cluster: Any, tmp_path: Path, capsys: Any) -> None:
    code = main(["score", "--ray", "--model", str(tmp_path / "nope"), "--scorer", "toxicity", "--data",
                 str(EXAMPLES / "example.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "does not exist" in err and err.count("\n") == 1
