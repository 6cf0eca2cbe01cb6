"""`run_evals`' scores saved into a Mastra store (``mastra_store=``), as Mastra's `runEvals` saves
each item's scores when the target's Mastra instance has storage (its `saveScoresToStorage`).

The writer is the live sink's (`localjudge.live.MastraScores` with `source` ``TEST``), called after
each batch is scored (one transaction), so a crash loses no batch already written. Each scored
(item, scorer) is one `mastra_scorers` row as Mastra's `saveSingleScore` writes it:

- `source` ``TEST``; `scorerId` the scorer's id (its key in `scores`);
- `entity` the target, ``{id, name}`` (`target_id`; default the target's `id`, else its name);
- `entityType` and `entityId`: ``AGENT`` (``WORKFLOW`` for a workflow target) and the target's id for
  a list of scorers; ``AGENT``, ``TRAJECTORY`` or ``WORKFLOW`` and the target's id for a config's
  group; ``STEP`` and the step's id for `steps` scorers;
- `runId` the scorer run's own id, a fresh one per row (Mastra's scorer runs get a random one);
- `input` and `output` what the scorer judged; `additionalContext.groundTruth` the item's;
- a ``turns`` item's turn scorers (not its gates): ``AGENT`` rows with `metadata.turnIndex`.

Gates are not saved (Mastra saves none). Results without a score (declared not scorable, a target
or scorer failure) are not written: Mastra saves only results with a score, and a failure aborts
its run. Mastra's trace and span ids come from an item's tracing context: none here. Unlike
Mastra's, a store that cannot be written is refused before any target runs (`LiveStoreError`); a
batch the store refuses later is logged and the run goes on, as Mastra logs a score it fails to save.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from localjudge.evaluation.eval_items import turns_of
from localjudge.evaluation.scorer_configs import Path, ScorerPlan, _slot_run
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer

if TYPE_CHECKING:
    from localjudge.live.mastra import MastraScores

log = logging.getLogger(__name__)

GROUP_TYPES = {"agent": "AGENT", "trajectory": "TRAJECTORY", "workflow": "WORKFLOW", "steps": "STEP"}


def eval_sink(store: str | MastraScores | None, target: Any, target_id: str | None,
              target_type: str) -> MastraScores | None:
    """The sink `run_evals` writes its scores to (none without a store), checked now.

    Raises:
        LiveStoreError: The store cannot be opened, is not Mastra's, or refuses a probe row.
        ValueError: A `MastraScores` not made with ``source="TEST"``, or a store that is neither.
    """
    if store is None:
        return None
    from localjudge.live.mastra import MastraScores  # the store's drivers load only when asked for

    if isinstance(store, MastraScores):
        if store.source != "TEST":
            raise ValueError("mastra_store: a MastraScores for run_evals is made with source='TEST' "
                             f"(Mastra's runEvals rows), got source={store.source!r}")
        return store
    if not isinstance(store, str):
        raise ValueError(f"mastra_store takes a Mastra store URL (file:PATH or postgresql://...) or a MastraScores, "
                         f"got {type(store).__name__}")
    found = target_id or _attr(target, "id") or _attr(target, "name") or _attr(target, "__name__")
    name = _attr(target, "name") or found
    return MastraScores(store, entity_id=found or type(target).__name__, entity_name=name,
                        entity_type="WORKFLOW" if target_type == "workflow" else "AGENT", source="TEST")


def _attr(target: Any, name: str) -> str | None:
    value = getattr(target, name, None)
    return value if isinstance(value, str) and value else None


def save_batch(sink: MastraScores, plan: ScorerPlan, chunk: Sequence[Mapping[str, Any]],
               rows: Sequence[dict[str, Any]], ran: Sequence[tuple[list[Any], str | None]],
               judged: Sequence[Mapping[Path, ScoreResult]],
               turns: Sequence[Sequence[Mapping[str, ScoreResult]]]) -> None:
    """Write one batch's results as Mastra's runEvals rows (see the module); the writer skips
    those without a score."""
    delivered: list[tuple[dict[str, Any], ScoreResult, Scorer]] = []
    for i, (outputs, error) in enumerate(ran):
        if error is not None:
            continue  # every result of the item is unscored (target_failed)
        for path, scorer in plan.slots:
            run = _slot_run(path, rows[i], outputs[0] if outputs else None, plan.target_type)
            if isinstance(run, tuple):
                continue  # no run for this scorer: unscored, as the result says
            group = GROUP_TYPES.get(path[0]) if len(path) > 1 else None
            delivered.append(({**run, "entity_type": group, "entity_id": path[1] if group == "STEP" else None},
                              judged[i][path], scorer))
        if "turns" in chunk[i]:
            for t, turn in enumerate(turns_of(chunk[i])):
                for scorer, _ in turn.scorers:
                    delivered.append(({**rows[i], "input": turn.input, "output": outputs[t],
                                       "entity_type": "AGENT", "turn_index": t}, turns[i][t][scorer.id], scorer))
    if not any(result.scored for _, result, _ in delivered):
        return
    records = sink.records([({**run, "run_id": str(uuid.uuid4()), "runId": None}, result, scorer)
                            for run, result, scorer in delivered])
    for record, (_, _, scorer) in zip(records, delivered, strict=True):
        record["judged"] = replace(record["judged"], mastra_scorer_id=scorer.id)  # Mastra's runEvals scorer id
    try:
        sink.write(records)
    except OSError as error:  # LiveStoreError: the store refused the batch
        log.warning("run_evals: %s", error)


__all__ = ["eval_sink", "save_batch"]
