"""Which runs to read from Mastra's storage, and reading them: agent runs from the trace spans
(`read_agent_runs`), or an experiment's results with their ground truth (`read_experiment_runs`).
Reads only; the store's tables are never changed here.

A run that cannot be read (a bad cell in one of its rows, a span without an id, spans that do not
form a tree: see `localjudge.mastra_store.spans`) costs only itself: it comes back as an
unreadable run, ``{"run_id", "unreadable": why, "mastra": ...}`` with no output (so any scorer
records it `invalid_run`), logged as a warning, and every other run is read as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from localjudge.mastra_store.cells import BAD_CELL
from localjudge.mastra_store.connection import Store, StoreError
from localjudge.mastra_store.schema import EXPERIMENT_RESULTS, EXPERIMENTS, JSON_COLUMNS, NEEDED, SCORES, SPANS
from localjudge.mastra_store.spans import UnreadableRun, origin, readable, run_from_spans, under_other_agent
from localjudge.samples import hash_to_unit_interval

SPAN_COLUMNS = ", ".join(f'"{c}"' for c in NEEDED[SPANS])
TRACE_CHUNK = 200  # trace ids per query
UNREADABLE = "unreadable"  # an unreadable run's key: why it cannot be read (table, row, column)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Selection:
    """Which agent runs to read.

    Attributes:
        entity_ids: Only these agents (their ids, Mastra's entityId); empty: every agent.
        since, until: Only runs started at or after / before these times (ISO 8601; an offset is
            honoured, a time without one is UTC): compared in UTC, as Mastra stores `startedAt`.
        trace_ids: Only these traces; empty: every trace.
        sample_rate: Keep this share of runs, chosen by a hash of the trace id (the same runs every time).
        unscored_by: Skip runs that already have a score row of every one of these scorer ids.
        limit: At most this many runs (the earliest).
    """

    entity_ids: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    trace_ids: tuple[str, ...] = ()
    sample_rate: float | None = None
    unscored_by: tuple[str, ...] = ()
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.sample_rate is not None and not 0 < self.sample_rate <= 1:
            raise ValueError(f"the sample rate must be in (0, 1], got {self.sample_rate}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"the limit must be at least 1, got {self.limit}")
        for bound in (self.since, self.until):
            if bound is not None:
                utc_bound(bound)  # refused here, before anything is read


def utc_bound(text: str) -> str:
    """A time bound as Mastra stores `startedAt`: ISO 8601 in UTC with milliseconds and ``Z``
    (``2026-01-02T08:00:00.000Z``), so LibSQL's text compares in order and PostgreSQL's
    timestamp column (no time zone: UTC) reads the same instant. An offset is honoured; a time
    without one is UTC. Rounded up to the millisecond (Mastra's times have no finer part), which
    leaves ``>=`` and ``<`` on millisecond times as they were.

    Raises:
        ValueError: text that is not an ISO 8601 time.
    """
    try:
        given = text.strip()
        moment = datetime.fromisoformat(given[:-1] + "+00:00" if given[-1:] in ("Z", "z") else given)  # 3.10: no Z
    except ValueError:
        raise ValueError(f"--mastra-since/--mastra-until: {text!r} is not an ISO 8601 time "
                         "(e.g. 2026-01-02T08:00:00Z)") from None
    moment = (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    extra = moment.microsecond % 1000
    if extra:
        moment += timedelta(microseconds=1000 - extra)
    return moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def sampled(trace_id: str, rate: float) -> bool:
    """Whether a trace is in a `rate` sample: Mastra's hash of its id (live sampling's too) below the rate."""
    return hash_to_unit_interval(trace_id) < rate


def read_agent_runs(store: Store, selection: Selection = Selection()) -> list[dict[str, Any]]:
    """Every selected agent run as a run dict (see `localjudge.mastra_store.spans`), earliest first."""
    where, params = ['"spanType" = ?'], ["agent_run"]
    for column, values in (("entityId", selection.entity_ids), ("traceId", selection.trace_ids)):
        if values:
            where.append(f'"{column}" IN ({", ".join("?" for _ in values)})')
            params += list(values)
    if selection.since:
        where.append('"startedAt" >= ?')
        params.append(utc_bound(selection.since))
    if selection.until:
        where.append('"startedAt" < ?')
        params.append(utc_bound(selection.until))
    roots = store.fetch(f'SELECT {SPAN_COLUMNS} FROM "{SPANS}" WHERE {" AND ".join(where)} ORDER BY "startedAt"',
                        params, JSON_COLUMNS[SPANS], table=SPANS)
    if selection.sample_rate is not None:  # a root whose trace id cannot be read is kept: to be reported
        roots = [r for r in roots if r["traceId"] is None or sampled(str(r["traceId"]), selection.sample_rate)]
    traces = _spans_by_trace(store, sorted({str(r["traceId"]) for r in roots if r["traceId"] is not None}))
    runs = []
    for root in roots:
        spans = traces.get(str(root["traceId"]), [])
        try:
            readable(root)
            if under_other_agent(root, {s["spanId"]: s for s in spans}):
                continue
            runs.append(run_from_spans(root, spans))
        except UnreadableRun as error:
            runs.append(unreadable_run(root, str(error)))
    if selection.unscored_by:
        done = scored_runs(store, selection.unscored_by)
        runs = [r for r in runs if not all((scorer, r["run_id"]) in done for scorer in selection.unscored_by)]
    return runs[:selection.limit] if selection.limit else runs


def _spans_by_trace(store: Store, trace_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(trace_ids), TRACE_CHUNK):
        chunk = trace_ids[start:start + TRACE_CHUNK]
        rows = store.fetch(f'SELECT {SPAN_COLUMNS} FROM "{SPANS}" WHERE "traceId" IN ({", ".join("?" for _ in chunk)})',
                           chunk, JSON_COLUMNS[SPANS], table=SPANS)
        for row in rows:
            found.setdefault(str(row["traceId"]), []).append(row)
    return found


def unreadable_run(root: Mapping[str, Any], why: str) -> dict[str, Any]:
    """The run of agent span `root` that cannot be read: its ids where they could be read, why, no output."""
    run_id = root.get("runId") or root.get("spanId")
    logger.warning("run %s cannot be read, not scored: %s", run_id, why)
    return {"run_id": None if run_id is None else str(run_id), UNREADABLE: why, "mastra": origin(root)}


def scored_runs(store: Store, scorer_ids: Sequence[str]) -> set[tuple[str, str]]:
    """(scorer id, run id) of every score row of these scorers (a row that cannot be read counts for none)."""
    rows = store.fetch(f'SELECT "scorerId", "runId" FROM "{SCORES}" WHERE "scorerId" IN '
                       f'({", ".join("?" for _ in scorer_ids)})', list(scorer_ids), table=SCORES)
    return {(str(r["scorerId"]), str(r["runId"])) for r in rows if not r.get(BAD_CELL)}


def read_experiment_runs(store: Store, experiment_id: str) -> list[dict[str, Any]]:
    """An experiment's results as runs, each with its dataset item's ground truth; the run is
    read from its trace where the store has it (tool calls, thread), else from the result's input
    and output. A result whose target failed has no output: it is kept and scored as unscored.

    Raises:
        StoreError: no experiment with that id.
    """
    experiments = store.fetch(f'SELECT "id", "datasetId", "targetType", "targetId" FROM "{EXPERIMENTS}" '
                              'WHERE "id" = ?', [experiment_id], table=EXPERIMENTS)
    if not experiments:
        raise StoreError(f"no experiment {experiment_id!r} in the store")
    experiment = experiments[0]
    if experiment.get(BAD_CELL):  # every result is described by it: nothing to read without it
        raise StoreError(experiment[BAD_CELL])
    columns = ", ".join(f'"{c}"' for c in NEEDED[EXPERIMENT_RESULTS])
    results = store.fetch(f'SELECT {columns} FROM "{EXPERIMENT_RESULTS}" WHERE "experimentId" = ? ORDER BY "id"',
                          [experiment_id], JSON_COLUMNS[EXPERIMENT_RESULTS], table=EXPERIMENT_RESULTS)
    traces = _spans_by_trace(store, sorted({str(r["traceId"]) for r in results if r.get("traceId")}))
    runs = []
    for result in results:
        spans = traces.get(str(result.get("traceId")), [])
        root = next((s for s in spans if s.get("spanType") == "agent_run" and not s.get("parentSpanId")), None)
        try:
            if result.get(BAD_CELL):
                raise UnreadableRun(result[BAD_CELL])
            run = run_from_spans(root, spans) if root is not None else _result_run(result)
        except UnreadableRun as error:
            run = unreadable_run(root or {"runId": result.get("id")}, str(error))
        if UNREADABLE not in run and (result.get("error") is not None or result.get("output") is None):
            run["output"] = None  # the target failed: nothing to judge (recorded unscored)
        run["ground_truth"] = result.get("groundTruth")
        run["mastra"] = {**run.get("mastra", {}), "experimentId": experiment_id, "datasetId": experiment["datasetId"],
                         "datasetItemId": result["itemId"], "targetType": experiment["targetType"],
                         "targetId": experiment["targetId"], "resultId": result["id"]}
        runs.append(run)
    return runs


def _result_run(result: Mapping[str, Any]) -> dict[str, Any]:
    output = result.get("output")
    text = output.get("text") if isinstance(output, Mapping) else output
    return {"run_id": str(result["id"]), "input": result.get("input"),
            "output": text if isinstance(text, str) else ("" if text is None else str(text)),
            "mastra": {"traceId": result.get("traceId"), "spanId": None, "runId": None}}
