"""`run_evals`' scores saved into a Mastra store (``mastra_store=``), as Mastra's `runEvals` saves
each item's scores when the target's Mastra instance has storage (its `saveScoresToStorage`).

The store is a sink (`EvalScoreSink`): the live sink's writer, ``localjudge.live.MastraScores(URL)``,
made (and so checked: a store that cannot be written is refused) before `run_evals` runs any
target. After each batch is scored, every (item, scorer) result goes to it at once (one
transaction), so a crash loses no batch already written. Each run handed over names what Mastra's
`saveSingleScore` writes of it (the sink shapes the row: `source` ``TEST``, `scorerId` the scorer's id):

- the target (``target_id``, ``entity_name``: `run_evals`' `target_id`, default the target's `id`
  attribute or its name), the row's `entity`;
- ``entity_type`` and ``entity_id``: ``AGENT`` (``WORKFLOW`` for a workflow target) and the target's
  id for a list of scorers; ``AGENT``, ``TRAJECTORY`` or ``WORKFLOW`` and the target's id for a
  config's group; ``STEP`` and the step's id for `steps` scorers;
- ``run_id`` a fresh id per (item, scorer), as each Mastra scorer run gets a random one;
- `input` and `output` what the scorer judged, and the item's ground truth;
- a ``turns`` item's turn scorers (not its gates): ``AGENT`` runs with ``turn_index``.

Gates are not saved (Mastra saves none). Results without a score (declared not scorable, a target
or scorer failure) are not written: Mastra saves only results with a score, and a failure aborts
its run. Mastra's trace and span ids come from an item's tracing context: none here. A batch the
store refuses is logged and the run goes on, as Mastra logs a score it fails to save.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from localjudge.evaluation.eval_items import turns_of
from localjudge.evaluation.scorer_configs import Path, ScorerPlan, slot_run
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer

log = logging.getLogger(__name__)

GROUP_TYPES = {"agent": "AGENT", "trajectory": "TRAJECTORY", "workflow": "WORKFLOW", "steps": "STEP"}
Delivered = tuple[dict[str, Any], ScoreResult, Scorer]


@runtime_checkable
class EvalScoreSink(Protocol):
    """Where `run_evals` saves its scores: ``localjudge.live.MastraScores``."""

    def save_run_evals(self, delivered: Sequence[Delivered]) -> None:
        """Write one batch's results as Mastra's runEvals rows (results without a score skipped)."""

    def close(self) -> None: ...


def eval_sink(store: Any, target: Any, target_id: str | None) -> tuple[EvalScoreSink | None, dict[str, str]]:
    """The sink `run_evals` saves to (none without a store) and the target as its rows name it
    (``target_id``, ``entity_name``); a store that is not a sink is a one-line `ValueError`."""
    if store is None:
        return None, {}
    if not isinstance(store, EvalScoreSink):
        raise ValueError(f"mastra_store takes localjudge.live.MastraScores(URL) (file:PATH or postgresql://...), "
                         f"got {type(store).__name__}")
    found = target_id or _attr(target, "id") or _attr(target, "name") or _attr(target, "__name__") \
        or type(target).__name__
    return store, {"target_id": found, "entity_name": _attr(target, "name") or found}


def _attr(target: Any, name: str) -> str | None:
    value = getattr(target, name, None)
    return value if isinstance(value, str) and value else None


def save_batch(sink: EvalScoreSink, target: Mapping[str, str], plan: ScorerPlan,
               chunk: Sequence[Mapping[str, Any]], rows: Sequence[dict[str, Any]],
               ran: Sequence[tuple[list[Any], str | None]], judged: Sequence[Mapping[Path, ScoreResult]],
               turns: Sequence[Sequence[Mapping[str, ScoreResult]]]) -> None:
    """Hand one batch's results to the sink, each run naming what its row records (the module)."""
    own = "WORKFLOW" if plan.target_type == "workflow" else "AGENT"
    delivered: list[Delivered] = []
    for i, (outputs, error) in enumerate(ran):
        if error is not None:
            continue  # every result of the item is unscored (target_failed)
        for path, scorer in plan.slots:
            run = slot_run(path, rows[i], outputs[0] if outputs else None, plan.target_type)
            if isinstance(run, tuple):
                continue  # no run for this scorer: unscored, as the result says
            group = GROUP_TYPES[path[0]] if len(path) > 1 else own
            entity = path[1] if group == "STEP" else target["target_id"]
            delivered.append(({**run, "entity_type": group, "entity_id": entity}, judged[i][path], scorer))
        if "turns" in chunk[i]:
            for t, turn in enumerate(turns_of(chunk[i])):
                for scorer, _ in turn.scorers:
                    run = {**rows[i], "input": turn.input, "output": outputs[t], "entity_type": "AGENT",
                           "entity_id": target["target_id"], "turn_index": t}
                    delivered.append((run, turns[i][t][scorer.id], scorer))
    if not any(result.scored for _, result, _ in delivered):
        return
    try:
        sink.save_run_evals([({**run, **target, "run_id": str(uuid.uuid4()), "runId": None}, result, scorer)
                             for run, result, scorer in delivered])
    except OSError as error:  # LiveStoreError: the store refused the batch (locked past its retries, gone)
        log.warning("run_evals: %s", error)


__all__ = ["Delivered", "EvalScoreSink", "eval_sink", "save_batch"]
