"""The model tier's one shared run: the default model over every built-in scorer, in each of its
modes, on a fixed set of rows, once a session. The real-model checks of all scorers read it
(tests/model/test_scorers.py, the repetition guard's tests/model/test_repeat_guard.py) instead
of each scoring rows of its own.

The rows: the first 4 of examples/agent_runs.jsonl (agent runs carrying every field a scorer
reads: context, ground truth, system prompt, conversation, tool calls, expected trajectory,
baseline) and 2 of the quick start's (examples/example.jsonl: a chat-shaped run, an empty output).
A scorer that needs a field a row lacks
records that row unscored (`invalid_run`), never a model call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from localjudge import Columns, evaluate
from localjudge.result import ScoreResult
from localjudge.scorers import MODES, build_scorer
from localjudge.scoring import Scorer
from tests.conftest import EXAMPLES
from tests.scorer_options import JUDGED_MODES, OPTIONS

# Four agent runs (every field), and the quick start's rows no agent run resembles: a chat-shaped
# run and an empty output (decided by rule). Six rows: one batch per scorer and mode.
AGENT_ROWS, EXTRA = 4, ("chat", "empty")
ROWS: list[dict[str, Any]] = [
    *[json.loads(line) for line in (EXAMPLES / "agent_runs.jsonl").read_text(encoding="utf-8").splitlines()
      if line.strip()][:AGENT_ROWS],
    *[row for row in (json.loads(line) for line in (EXAMPLES / "example.jsonl").read_text(encoding="utf-8")
                      .splitlines() if line.strip()) if row["run_id"] in EXTRA],
]
BATCH_SIZE = 8  # all six rows in one batch


@dataclass(frozen=True)
class SharedRun:
    """Every (scorer, mode) of `JUDGED_MODES` on `ROWS`: its scorer and one result per row, in order."""

    rows: list[dict[str, Any]]
    scorers: dict[tuple[str, str], Scorer]
    results: dict[tuple[str, str], list[ScoreResult]]


def run_all(judge: Any) -> SharedRun:
    """Score `ROWS` with every built-in scorer that asks a judge, in every mode, on `judge`: one
    `evaluate` a mode. The model-free ones (Mastra's code scorers and checks) have nothing a model
    could change: the unit tier checks them."""
    scorers = {(name, mode): build_scorer(name, judge, mode=mode, options=OPTIONS.get(name))
               for name, mode in JUDGED_MODES}
    results: dict[tuple[str, str], list[ScoreResult]] = {}
    for mode in MODES:
        chosen = {name: scorer for (name, m), scorer in scorers.items() if m == mode}
        scored = evaluate(ROWS, list(chosen.values()), batch_size=BATCH_SIZE, columns=Columns(run_id="run_id")).results
        results.update({(name, mode): scored[name] for name in chosen})
    return SharedRun(ROWS, scorers, results)


@pytest.fixture(scope="session")
def shared_run(real_judge: Any) -> SharedRun:
    """The default model's shared run, made once a session by the first test that reads it."""
    return run_all(real_judge)
