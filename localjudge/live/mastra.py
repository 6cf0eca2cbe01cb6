"""Live results as Mastra score rows: `MastraScores`, the live sink that writes each scored result
into a Mastra app's storage (`mastra_scorers`), as Mastra's live scorers save theirs.

It is the ``--mastra-store`` writer (`localjudge.mastra_store.write_scores`), not a second one:
the same row shape, checks and locking, one transaction per batch the worker hands over. The
store is a URL as ``--mastra-store`` takes it (``file:PATH``, LibSQL's local file, or
``postgresql://...``); `LiveScorer(store=URL)` makes one. It is checked when made (the table,
its columns and key, a rolled-back probe row: `check_store`), and a store that cannot be written
is refused there (`LiveStoreError`); the writing connection is opened by the first write, in the
worker's thread, and opened again after a write the store refused as a whole.

A row is Mastra's live row: `source` ``LIVE``, `runId` the run's id, and what the run dict
carries of its origin (`ORIGIN_KEYS`: a trace and span id, the entity, a thread and resource),
else its ``mastra`` dict (a run read from a Mastra store), else the sink's defaults. Its id is
``localjudge:live:<run id>:<resume key>``: one row per (call, scorer), written once. Results
without a score (failures, runs a scorer declared not scorable) are not written, as Mastra saves
none; they stay in the live scorer's counts and its `on_result`.

`run_evals(mastra_store=MastraScores(URL))` writes through this sink too (`save_run_evals`), as
Mastra's `runEvals` saves its scores: `source` ``TEST``, `scorerId` the scorer's id, `entity` the
run's ``target_id``, while its entity type and id name what was scored (an agent, its trajectory,
a workflow or a step), and its ``turn_index`` a turn's (`localjudge.evaluation.eval_store`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from localjudge.credentials import redact, shown_url, url_secrets
from localjudge.live.store import LiveStoreError
from localjudge.mastra_store import SCORES, Store, StoreError, check_store, judged_results, open_store, write_scores
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer
from localjudge.text_safety import safe_text, safe_value

SCHEMES = ("file", "postgres", "postgresql")  # what `--mastra-store` opens (`localjudge.mastra_store.open_store`)

# A score row's origin field -> the run keys it is read from (snake case, or Mastra's camel case)
ORIGIN_KEYS: dict[str, tuple[str, str]] = {
    "runId": ("run_id", "runId"), "traceId": ("trace_id", "traceId"), "spanId": ("span_id", "spanId"),
    "entityType": ("entity_type", "entityType"), "entityId": ("entity_id", "entityId"),
    "entityName": ("entity_name", "entityName"), "threadId": ("thread_id", "threadId"),
    "resourceId": ("resource_id", "resourceId"),
}


def is_mastra_url(store: object) -> bool:
    """Whether `store` is a Mastra store URL (``file:...``, ``postgresql://...``), not a live store path."""
    return isinstance(store, str) and ":" in store and store.split(":", 1)[0].lower() in SCHEMES


class MastraScores:
    """A live sink writing each scored result as one Mastra score row (see the module).

    Args:
        url: The Mastra store, as ``--mastra-store`` takes it: ``file:PATH`` or ``postgresql://...``.
        scorer_ids: Scorer name -> Mastra scorer id whose series its rows join (``--mastra-scorer-id``;
            default: ``localjudge:<name>``).
        entity_id: The entity of runs that name none (say, the agent's id: Studio's agent page lists
            an entity's scores); default none.
        entity_name: Its name (default: the id).
        entity_type: Its type, ``AGENT`` (default) or ``WORKFLOW`` as Mastra's live scorers write.

    Raises:
        LiveStoreError: The store cannot be opened, is not Mastra's, or refuses a probe row.
        ValueError: `scorer_ids` maps a scorer to an empty id, or two scorers to one series.
    """

    def __init__(self, url: str, *, scorer_ids: Mapping[str, str] | None = None, entity_id: str | None = None,
                 entity_name: str | None = None, entity_type: str = "AGENT") -> None:
        self.url = url
        self.series = dict(scorer_ids or {})
        if not all(self.series.values()) or len(set(self.series.values())) != len(self.series):
            raise ValueError(f"scorer_ids: each scorer joins one non-empty series, and each series one scorer: "
                             f"got {self.series}")
        self._defaults = {"entityId": entity_id, "entityName": entity_name, "entityType": entity_type}
        self._store: Store | None = None
        try:
            store = open_store(url)
            try:
                self._columns = check_store(store, (SCORES,))[SCORES]
            finally:
                store.close()
        except StoreError as error:
            raise LiveStoreError(f"Mastra store {shown(url)} cannot be written: {_said(url, error)}") from None

    def check_scorers(self, names: Sequence[str]) -> None:
        """Refuse a `scorer_ids` name that is not one of the live scorer's (`names`), in one line."""
        unknown = sorted(set(self.series) - set(names))
        if unknown:
            raise ValueError(f"scorer_ids names {', '.join(unknown)}: not a scorer of this LiveScorer "
                             f"({', '.join(names)})")

    def record(self, run: Mapping[str, Any], result: ScoreResult, scorer: Scorer, *,
               source: str = "LIVE") -> dict[str, Any]:
        """One result's record, for `write`: its run id and what the writer takes. `source`
        ``TEST`` for `run_evals`' rows (`save_run_evals`), in the series of the scorer's id."""
        origin = self.origin(run, test=source == "TEST")
        judged = judged_results([{**run, "mastra": origin}], {scorer.name: [result]}, [scorer], self.series)[0]
        kept = ("input", "output", "context", "ground_truth", "groundTruth")
        stored = {**judged.run, **{k: jsonable(run[k]) for k in kept if k in run}}
        series = scorer.id if source == "TEST" else judged.mastra_scorer_id  # Mastra's runEvals scorer id
        return {"run_id": result.run_id, "judged": replace(judged, run=stored, call=str(origin["runId"]),
                                                           source=source, mastra_scorer_id=series)}

    def save_run_evals(self, delivered: Sequence[tuple[Mapping[str, Any], ScoreResult, Scorer]]) -> None:
        """Write one batch of `run_evals`' results as Mastra's runEvals rows (see the module), in
        the series of each scorer's id; results without a score are skipped.

        Raises:
            LiveStoreError: the store refused the write.
        """
        self.write([self.record(run, result, scorer, source="TEST") for run, result, scorer in delivered])

    def origin(self, run: Mapping[str, Any], *, test: bool = False) -> dict[str, Any]:
        """Where a live run came from, as the score row needs it: each field from the run's keys,
        else its ``mastra`` dict, else the sink's default; a `run_evals` run's (`test`) target and turn too."""
        stored = run.get("mastra")
        stored = stored if isinstance(stored, Mapping) else {}
        origin: dict[str, Any] = {}
        for field, names in ORIGIN_KEYS.items():
            value = next((run[n] for n in names if run.get(n) not in (None, "")), stored.get(field))
            value = self._defaults.get(field) if value in (None, "") else value
            origin[field] = None if value is None else safe_text(str(value))
        if test:  # a run_evals row: its entity is the target; a turn's row names its turn
            origin["targetId"] = run.get("target_id")
            origin["turnIndex"] = run.get("turn_index")
        return origin

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        """Write a batch's scored results in one transaction (rows already there are left alone).

        Raises:
            LiveStoreError: the store refused the write (locked past its retries, gone, read-only now).
        """
        try:
            if self._store is None:
                self._store = open_store(self.url)
            write_scores(self._store, [r["judged"] for r in records], self._columns)
        except StoreError as error:
            self.close()  # opened again by the next write
            raise LiveStoreError(f"Mastra store {shown(self.url)}: {len(records)} results not stored: "
                                 f"{_said(self.url, error)}") from None

    def close(self) -> None:
        if self._store is not None:
            store, self._store = self._store, None
            store.close()


def jsonable(value: Any) -> Any:
    """A run's value as a JSON column holds it (what JSON cannot hold as text; its repr where JSON
    cannot hold it at all: a cycle, a NaN), under the storing rule."""
    try:
        return json.loads(json.dumps(safe_value(value), ensure_ascii=False, default=str, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return safe_text(repr(value))


def shown(url: str) -> str:
    """The URL as a message shows it: its secrets (``user:***@``, ``?password=***``) hidden."""
    return shown_url(url)


def _said(url: str, error: object) -> str:
    """An error about the store at `url`, without a secret of the URL in any form it quotes."""
    return redact(str(error), url_secrets(url))
