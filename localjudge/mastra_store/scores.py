"""localjudge's results written back as Mastra score rows (`mastra_scorers`), in Mastra's shape, so
Mastra's storage API (`listScoresByRunId`, `listScoresBySpan`, ...) and Studio list them beside the
scores Mastra produced.

One row per (run, scorer) that got a score. Its id is ``localjudge:`` and the run's resume key
(`localjudge.evaluation.result_key`: the scorer's name, prompt hash, scale and judge identity,
and the texts judged), so the same scorer with the same judge never writes a run twice, while
another judge, prompt or changed run writes a new row. An experiment's row is keyed by the
experiment too (``localjudge:<experiment id>:<resume key>``): the same trace scored as an agent
run and in its experiment is two rows, each found where Mastra looks for it.

An experiment's rows are shaped as Mastra's experiment runner writes its scores: `runId` the
experiment id (`compareExperiments` and Studio read them with ``listScoresByRunId(experimentId)``),
`entityId` the dataset item, `entity` the target (``{id, name}``: its id), `source` ``TEST``, the
trace id kept. localjudge also keeps the agent span's id (`listScoresBySpan` finds the score on
the trace) and the agent's run id in ``metadata.localjudge.agentRunId``. Its scorer id is ``localjudge:<name>``,
never one of Mastra's own, unless a series to join is named (`Judged.mastra_scorer_id`: the row
is then in that Mastra scorer's series in Studio, and only its ``localjudge:`` row id, its
``scorer.name`` ``localjudge <name>`` and its ``metadata.localjudge`` tell it apart). Unscored
results are not written (they stay in localjudge's result file). Every text goes through
`localjudge.text_safety` (PostgreSQL refuses NUL).

A live result (`localjudge.live.MastraScores`, the live scorer's sink) is written by the same
`write_scores`, as Mastra's live scorers save theirs: `source` ``LIVE``, and its row keyed by the
call too (``localjudge:live:<run id>:<resume key>``, `Judged.call`), since Mastra writes a row per
live call and two calls with the same texts are two rows.

`run_evals(mastra_store=...)`'s rows go through the same sink with `source` ``TEST``, as Mastra's
`runEvals` saves its scores (`Judged.source`): keyed ``localjudge:test:<run id>:<resume key>``;
`entity` the target (the origin's ``targetId``) while `entityType`/`entityId` name what was
scored (the agent, its trajectory, the workflow or a step); `additionalContext.groundTruth` the
item's ground truth; `metadata.turnIndex` a turn's index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from localjudge.evaluation import result_key
from localjudge.mastra_store.connection import Store
from localjudge.mastra_store.schema import JSON_COLUMNS, SCORES
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer
from localjudge.text_safety import safe_value

SCORER_PREFIX = "localjudge:"


@dataclass(frozen=True)
class Judged:
    """One result to write: the run it scored, the scorer, its resume key, the Mastra scorer id
    whose series the row joins (empty: localjudge's own, ``localjudge:<name>``), and for a live
    result the call's run id its row is keyed by too (empty: a stored run's, keyed by its texts), and
    the row's `source` where it is not derived (``TEST``: a `run_evals` row; empty: ``LIVE``, or
    ``TEST`` for an experiment's)."""

    run: Mapping[str, Any]
    result: ScoreResult
    scorer_name: str
    scorer_key: str
    prompt_hash: str
    judge: str
    key: str
    mastra_scorer_id: str = ""
    call: str = ""
    source: str = ""


def scorer_id(name: str) -> str:
    """localjudge's scorer id in Mastra's storage: ``localjudge:<name>``."""
    return f"{SCORER_PREFIX}{name}"


def _record(value: Any) -> dict[str, Any] | None:
    """A step result as Mastra's scorers store one: an object (a list or text goes under `result`)."""
    if value is None:
        return None
    return dict(value) if isinstance(value, Mapping) else {"result": value}


def score_row(judged: Judged, columns: Mapping[str, str], now: datetime) -> dict[str, Any]:
    """The `mastra_scorers` row of one scored result, with only the columns the store has."""
    run, result, origin = judged.run, judged.result, judged.run.get("mastra") or {}
    experiment = origin.get("datasetItemId") is not None  # read by `read_experiment_runs`
    entity_id = origin.get("targetId") if experiment else origin.get("entityId")
    agent_run_id = origin.get("runId") or run.get("run_id")
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    series = judged.mastra_scorer_id or scorer_id(judged.scorer_name)
    source = judged.source or ("TEST" if experiment or origin.get("experimentId") else "LIVE")
    scope = origin["experimentId"] if experiment else f"{source.lower()}:{judged.call}" if judged.call else ""
    target = origin.get("targetId") or entity_id  # the entity scored, or the target a run_evals row scored
    truth = next((run[k] for k in ("ground_truth", "groundTruth") if run.get(k) is not None), None)
    extra = {"context": run["context"]} if run.get("context") else {}
    if judged.source == "TEST" and truth is not None:
        extra["groundTruth"] = truth  # as Mastra's runEvals keeps the item's
    row: dict[str, Any] = {
        "id": f"{SCORER_PREFIX}{scope}:{judged.key}" if scope else f"{SCORER_PREFIX}{judged.key}",
        "scorerId": series,
        "traceId": origin.get("traceId"),
        "spanId": origin.get("spanId"),
        "runId": origin["experimentId"] if experiment else agent_run_id,
        "scorer": {"id": series, "name": f"localjudge {judged.scorer_name}",
                   "description": f"localjudge's {judged.scorer_name} scorer on a local judge",
                   "hasJudge": bool(judged.judge)},
        "preprocessStepResult": _record(result.preprocess_step_result),
        "analyzeStepResult": _record(result.analyze_step_result),
        "score": result.score,
        "reason": result.reason,
        "metadata": {"localjudge": {"judge": judged.judge, "promptVersion": judged.prompt_hash,
                                    "scorerKey": judged.scorer_key, "resultKey": judged.key,
                                    "probScore": result.prob_score, "newTokens": result.new_tokens,
                                    **({"agentRunId": agent_run_id, "experimentResultId": origin.get("resultId")}
                                       if experiment else {})},
                     **({"turnIndex": origin["turnIndex"]} if origin.get("turnIndex") is not None else {})},
        "preprocessPrompt": result.preprocess_prompt,
        "analyzePrompt": result.analyze_prompt,
        "generateReasonPrompt": result.generate_reason_prompt,
        "input": run.get("input"),
        "output": run.get("output"),
        "additionalContext": extra or None,
        "entityType": (str(origin.get("targetType") or "agent").upper() if experiment
                       else str(origin.get("entityType") or "agent").upper()),
        "entity": {"id": target, "name": target if experiment else origin.get("entityName") or target},
        "entityId": origin.get("datasetItemId") if experiment else entity_id,
        "source": source,
        "resourceId": origin.get("resourceId"),
        "threadId": origin.get("threadId"),
        "datasetId": origin.get("datasetId"),
        "datasetItemId": origin.get("datasetItemId"),
        "createdAt": stamp,
        "updatedAt": stamp,
        "createdAtZ": stamp,
        "updatedAtZ": stamp,
    }
    return {k: safe_value(v) for k, v in row.items() if k in columns}


def write_scores(store: Store, judged: Sequence[Judged], columns: Mapping[str, str],
                 *, now: datetime | None = None) -> int:
    """Write every scored result as a score row, in one transaction; results without a score are
    skipped. Rows already there (same id) are left alone. Returns the number of new rows."""
    moment = now or datetime.now(timezone.utc)
    rows = [score_row(j, columns, moment) for j in judged if j.result.scored]
    return store.insert_new(SCORES, rows, JSON_COLUMNS[SCORES])


def judged_results(runs: Sequence[Mapping[str, Any]], results: Mapping[str, Sequence[ScoreResult]],
                   scorers: Sequence[Scorer], series: Mapping[str, str] | None = None) -> list[Judged]:
    """Each (run, scorer) result of scoring `runs` (one result per run, per scorer name), with the
    resume key it was stored under (empty where the scorer could not read the run: unscored);
    `series` maps a scorer name to the Mastra scorer id whose series its rows join."""
    found = []
    for scorer in scorers:
        joined = (series or {}).get(scorer.name, "")
        judge = getattr(getattr(scorer, "judge", None), "identity", "")  # none for a code scorer
        for run, result in zip(runs, results[scorer.name], strict=True):
            try:
                key = result_key(scorer.key, scorer.sample(run), scorer.shown_fields)
            except Exception:  # noqa: BLE001 - a run the scorer cannot read was recorded unscored: no key
                key = ""
            found.append(Judged(run, result, scorer.name, scorer.key, scorer.prompt_hash, judge, key, joined))
    return found


def joined_series(pairs: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """``NAME=MASTRA_SCORER_ID`` pairs (``--mastra-scorer-id``) as a scorer name -> Mastra scorer id
    map; a pair naming no scorer asked for, an empty id, or two scorers in one series is a
    one-line `ValueError`."""
    series: dict[str, str] = {}
    for pair in pairs:
        name, sep, joined = (part.strip() for part in pair.partition("="))
        if not sep or not name or not joined:
            raise ValueError(f"--mastra-scorer-id takes NAME=MASTRA_SCORER_ID, got {pair!r}")
        if name not in names:
            raise ValueError(f"--mastra-scorer-id {pair}: {name!r} is not a scorer asked for ({', '.join(names)})")
        if name in series or joined in series.values():
            raise ValueError(f"--mastra-scorer-id {pair}: each scorer joins one series, and each series one scorer")
        series[name] = joined
    return series
