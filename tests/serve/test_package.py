"""@localjudge/mastra (clients/mastra): Mastra scorers whose judge is `localjudge serve`'s
/v1/score, under the pinned @mastra/core 1.71.0 — run alone, inside Mastra's runEvals on an Agent,
and against a server that is down; their numbers equal `localjudge score`'s on the same runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import HARNESS, NODE, ROOT, SCRIPTS, example_rows, need
from tests.serve.serve_process import MODEL, ServeProcess

SCORERS = ["hallucination", "faithfulness", "toxicity"]


def install_package() -> None:
    """The package as npm would install it: a copy in the harness's node_modules."""
    target = HARNESS / "node_modules" / "@localjudge" / "mastra"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(ROOT / "clients" / "mastra", target)


def run_script(request: pytest.FixtureRequest, spec: dict[str, Any]) -> dict[str, Any]:
    need(request, NODE, "no tests/differential/node (scripts/setup_node.sh sets it up)")
    install_package()
    done = subprocess.run([str(NODE), str(SCRIPTS / "package_scorers.mjs")], input=json.dumps(spec),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout))


def cli_scores(rows: list[dict[str, Any]], tmp_path: Path) -> dict[tuple[str, str], Any]:
    data, out = tmp_path / "rows.jsonl", tmp_path / "scored.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "localjudge.cli", "--quiet", "score", "--model", str(MODEL),
                    "--scorer", ",".join(SCORERS), "--data", str(data), "--out", str(out), "--no-resume"],
                   check=True, capture_output=True, timeout=900, cwd=ROOT)
    scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {(row["run_id"], name): (row[f"{name}_score"], row[f"{name}_prob_score"])
            for row in scored for name in SCORERS}


def test_the_packages_scorers_judge_on_serve_as_localjudge_score_does(request: pytest.FixtureRequest,
                                                                      serve: ServeProcess, tmp_path: Path) -> None:
    rows = example_rows(1)
    replies = [r["output"] for r in rows]
    out = run_script(request, {"url": serve.url, "rows": rows, "scorers": SCORERS, "replies": replies})
    failed = [r for r in out["direct"] if "error" in r]
    assert not failed, failed
    for result in out["direct"]:
        assert isinstance(result["score"], (int, float)) and result["reason"]
        assert "localjudge" in result["preprocess"]  # Mastra's step fields, and localjudge's whole result
    expected = cli_scores(rows, tmp_path)
    got = {(r["run_id"], r["scorer"]): (r["score"], r["probScore"]) for r in out["direct"]}
    assert got == expected  # number for number, label probabilities too

    evals = out["runEvals"]
    assert "error" not in evals, evals
    (name,) = evals["scores"]
    assert name.startswith("localjudge-toxicity") and isinstance(evals["scores"][name], (int, float))
    assert evals["summary"]["totalItems"] == len(rows)

    assert out["down"] is not None and "did not answer" in out["down"] and "\n" not in out["down"]

    answers = out["classifier"]
    assert "error" not in answers, answers
    tone, quality, correct = answers["tone"], answers["quality"], answers["correct"]
    assert tone["choice"] in ("polite", "rude") and sum(tone["probabilities"].values()) == pytest.approx(1)
    assert tone["probabilities"][tone["choice"]] == max(tone["probabilities"].values())
    levels = quality["probabilities"]
    assert set(levels) == {"0", "1", "2"}
    assert quality["score"] == pytest.approx(sum(int(k) * p for k, p in levels.items()))
    assert 0 <= correct["probability"] <= 1
    assert 0 <= out["classifierScorer"]["score"] <= 1
    assert out["classifierScorer"]["answer"]["choice"] in ("polite", "rude")


def test_the_typescript_example_runs_as_written(request: pytest.FixtureRequest, serve: ServeProcess) -> None:
    """examples/mastra_scorers.mjs, word for word, in a project holding Mastra and the package (the
    harness's node_modules, the package copied in as npm installs it)."""
    need(request, NODE, "no tests/differential/node (scripts/setup_node.sh sets it up)")
    install_package()
    copy = HARNESS / "example_mastra_scorers.mjs"  # beside node_modules, as a file of the user's project
    shutil.copyfile(ROOT / "examples" / "mastra_scorers.mjs", copy)
    try:
        done = subprocess.run([str(NODE), str(copy)], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "LOCALJUDGE_URL": serve.url})
    finally:
        copy.unlink()
    assert done.returncode == 0, done.stderr[-3000:]
    scores = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(scores) == {"localjudge-hallucination-scorer", "localjudge-toxicity-scorer"}
    assert all(isinstance(v, (int, float)) for v in scores.values())
