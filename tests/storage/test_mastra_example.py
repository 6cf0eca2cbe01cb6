"""The runnable Mastra example (examples/mastra/), run as docs/mastra-storage.md's "Try it" section
tells a reader to: its three commands word for word, each output held to what the page shows.

The commands run in a scratch folder laid out as the repository (examples/mastra's files, `models`,
`.venv` and tests/differential/node linked), so the example's store is written there. The page's
set-up block runs too, but for its `scripts/setup_node.sh`, the tier's own set-up: its `export
PATH=...` (the pinned Node.js 22: checked) and its `npm install --prefix examples/mastra`, from the
npm registry (~20 s with npm's cache warm from setup_node.sh; the example's package.json pins the
harness's versions, checked here). This is the tier's one pass on the default model: each score
the judge wrote is read back through Mastra's API with localjudge's score, reason and judge.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.storage.conftest import HARNESS, ROOT

DOC = ROOT / "docs" / "mastra-storage.md"
EXAMPLE = ROOT / "examples" / "mastra"
SECTION = "## Try it: three commands"
NODE_BIN = "tests/differential/node/node_modules/node/bin"  # setup_node.sh's pinned Node.js, as the page exports it
SET_UP = ("bash scripts/setup_node.sh\n"
          f'export PATH="$PWD/{NODE_BIN}:$PATH"\n'
          "npm install --prefix examples/mastra")
JUDGED = ("localjudge:hallucination",)  # the example's scorers that a model answers: their reasons vary
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SCORE_LINE = re.compile(r'^(localjudge:\S+)  (\S+)  "(.*)"  \(run (\S+)\)$')
VARYING_CELLS = (2, 3, 8, 9, 10)  # the summary's mean_score, mean_prob_score, seconds, rows_per_s, tokens_per_s


def walkthrough() -> tuple[list[str], list[tuple[str, str]]]:
    """The section's set-up commands (a bash block with no output shown after it) and its
    (command, shown output) pairs, in the page's order."""
    text = DOC.read_text(encoding="utf-8")
    assert SECTION + "\n" in text, f"{DOC.name} has no section {SECTION!r}"
    section = text.split(SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    set_up: list[str] = []
    pairs: list[tuple[str, str]] = []
    for i, (lang, code) in enumerate(blocks):
        if lang != "bash":
            continue
        shown = blocks[i + 1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else None
        if shown is None:
            set_up.append(code.strip())
        else:
            pairs.append((code.strip(), shown[1]))
    return set_up, pairs


def masked(line: str) -> str:
    """A line with what differs between runs and machines masked: run ids, the model's hash, the
    judge's numbers in the summary and its scores, the run's time."""
    line = UUID.sub("<id>", line)
    line = re.sub(r"^scored and written back in \d+\.\d s ", "scored and written back in <n> s ", line)
    line = re.sub(r"@[0-9a-f]{12}:", "@<hash>:", line)
    if line.startswith("| ") and not line.startswith("| scorer "):
        cells = line.strip("|").split("|")
        line = "|" + "|".join(" <n> " if i in VARYING_CELLS and c.strip() else c for i, c in enumerate(cells)) + "|"
    found = SCORE_LINE.match(line)
    if found and found.group(1) in JUDGED:
        line = f'{found.group(1)}  <score>  "{found.group(3)}"  (run {found.group(4)})'
    return line


def read_back(output: str) -> list[dict[str, str]]:
    """read_scores.mjs's scores: scorer, score, question, run id and reason."""
    lines = output.splitlines()
    found = []
    for line, reason in zip(lines, lines[1:], strict=False):
        match = SCORE_LINE.match(line)
        if match:
            found.append({"scorer": match.group(1), "score": match.group(2), "question": match.group(3),
                          "run": match.group(4), "reason": reason.strip()})
    return found


def test_the_example_pins_the_harness_versions() -> None:
    """The page's set-up installs examples/mastra/package.json; the tier runs the harness's install,
    so each package the example names must be pinned to the harness's version."""
    example = json.loads((EXAMPLE / "package.json").read_text())
    harness = json.loads((HARNESS / "package.json").read_text())
    assert example["dependencies"], "the example names no package"
    for name, version in example["dependencies"].items():
        assert harness["dependencies"].get(name) == version, f"{name} {version}: the harness pins " \
            f"{harness['dependencies'].get(name)}"
    assert example["engines"] == harness["engines"]
    set_up, pairs = walkthrough()
    assert set_up == [SET_UP] and len(pairs) == 3


def test_the_documented_commands_run_as_shown(storage_ready: None, tmp_path: Path) -> None:
    set_up, pairs = walkthrough()
    assert set_up == [SET_UP]
    model = ROOT / "models" / "smollm2-135m-instruct"
    if not (model / "model.safetensors").exists():
        pytest.fail(f"{model} is missing: run `python scripts/get_default_model.py` first")
    folder = tmp_path / "examples" / "mastra"
    folder.mkdir(parents=True)
    for name in ("app.mjs", "read_scores.mjs", "package.json"):
        shutil.copy(EXAMPLE / name, folder / name)
    (tmp_path / "models").symlink_to(ROOT / "models")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))  # .venv/bin/localjudge: the Python running this tier
    (tmp_path / "tests" / "differential").mkdir(parents=True)
    (tmp_path / "tests" / "differential" / "node").symlink_to(HARNESS)  # setup_node.sh's Node, which PATH names
    node_bin = ROOT / NODE_BIN  # the page's `export PATH=...`
    version = subprocess.run([str(node_bin / "node"), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("v22."), version.stdout  # Mastra asks for >= 22.13
    env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ['PATH']}"}

    def run(command: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
        return done

    run(SET_UP.split("\n", 1)[1])  # export PATH=...; npm install --prefix examples/mastra
    (app, app_shown), (scoring, score_shown), (reading, read_shown) = pairs
    assert run(app).stdout == app_shown  # the mock model answers the same every time
    done = run(scoring)
    score_err = done.stderr
    printed = {masked(line) for line in re.split(r"[\r\n]", done.stdout + score_err)}
    missing = [line for line in score_shown.splitlines() if masked(line) not in printed]
    assert not missing, f"lines the page shows that the command did not print: {missing}\n{score_err[-3000:]}"
    read_out = run(reading).stdout
    assert [masked(line) for line in read_out.splitlines()] == [masked(line) for line in read_shown.splitlines()]

    # what Mastra's API read back is what localjudge wrote: each score, its reason and its judge
    with closing(sqlite3.connect(folder / "mastra.db")) as db:
        rows = {(scorer, run_id): (score, reason, json.loads(metadata)) for scorer, run_id, score, reason, metadata in
                db.execute('SELECT "scorerId", "runId", "score", "reason", "metadata" FROM "mastra_scorers"')}
    back = read_back(read_out)
    assert len(back) == len(rows) == 5
    for score in back:
        value, reason, metadata = rows[(score["scorer"], score["run"])]
        assert float(score["score"]) == value and score["reason"] == " ".join(reason.split())
        if score["scorer"] in JUDGED:
            assert metadata["localjudge"]["judge"].startswith("smollm2")
    joke = {s["run"] for s in back if s["question"] == "Tell me a joke."}
    unscored = re.findall(r"unscored \[(\S+)\] hallucination", score_err)
    assert len(joke) == 1 and unscored == list(joke)  # the run without a tool call, left unscored
