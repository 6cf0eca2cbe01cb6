"""`run_evals`' scoring of one batch of items: every scorer (and scorer config slot), gate and turn
check of the batch as one schedule, through the planner's one entry (`score_planned`: each round of
steps of all of them in one judge call, at most `batch_size` rows per scorer per call).

A slot is one job, so a gate named as a scorer is judged apart from it; an item whose target failed,
or that a slot has no run for, is given its unscored result without the judge (`slot_runs`); a
``turns`` item's turn is one run shared by that turn's gates and scorers.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from localjudge.evaluation.dataset_runs import ScorerSummary, summarize
from localjudge.evaluation.eval_items import turns_of
from localjudge.evaluation.planner import ScorerRuns, score_planned
from localjudge.evaluation.scorer_configs import Path, ScorerPlan, slot_runs
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer

TurnFound = list[dict[str, ScoreResult]]  # an item's results per turn, by gate or scorer id


def score_items(plan: ScorerPlan, gate_slots: list[tuple[Path, Scorer]], chunk: list[Mapping[str, Any]],
                rows: list[dict[str, Any]], ran: list[tuple[list[Any], str | None]], batch_size: int,
                totals: dict[Path, list[ScorerSummary]]) -> tuple[list[dict[Path, ScoreResult]],
                                                                  list[dict[Path, ScoreResult]], list[TurnFound]]:
    """One batch of items judged by every scorer, gate and turn check as one schedule (the
    planner's `score_planned`: each round of steps of all of them in one judge call): per item, the
    scorers' results by path, the gates' by path, and per turn the turn's results by id. A slot is
    one job (a gate may share its name with a scorer); the scorers' figures go to `totals`."""
    judged: list[dict[Path, ScoreResult]] = [{} for _ in rows]
    gated: list[dict[Path, ScoreResult]] = [{} for _ in rows]
    jobs: list[ScorerRuns] = []
    places: list[list[tuple[dict[Any, ScoreResult], Any]]] = []  # per job, per run: (the dict, the key) it goes to
    counted: list[Path | None] = []  # per job: the scorer slot whose figures it gives (None: a gate, a turn)
    for slots, found in ((plan.slots, judged), (gate_slots, gated)):
        for path, scorer in slots:
            runs = slot_runs(plan, path, scorer, rows, ran, found)
            if runs:
                jobs.append((scorer, list(runs.values())))
                places.append([(found[i], path) for i in runs])
                counted.append(path if found is judged else None)
    turns, wanted = _turn_jobs(chunk, ran, rows)
    for scorer, where in wanted:
        jobs.append((scorer, [run for _, _, run in where]))
        places.append([(turns[i][t], scorer.id) for i, t, _ in where])
        counted.append(None)
    start = time.perf_counter()
    scored = score_planned(jobs, batch_size=batch_size)
    seconds = time.perf_counter() - start  # the scorers ran together: each one's seconds are the batch's
    for (scorer, _), one, place, slot in zip(jobs, scored, places, counted, strict=True):
        results = [one.results[p] for p in range(len(place))]
        for (found_at, key), result in zip(place, results, strict=True):
            found_at[key] = result
        if slot is not None:
            totals[slot].append(summarize(scorer.name, results, resumed=one.resumed, seconds=seconds,
                                          new_tokens=one.new_tokens, oom_backoffs=one.oom_backoffs))
    return ([{path: one[path] for path, _ in plan.slots} for one in judged],
            [{path: one[path] for path, _ in gate_slots} for one in gated], turns)


TurnRuns = tuple[Scorer, list[tuple[int, int, dict[str, Any]]]]  # a scorer and each (item, turn, run) it judges


def _turn_jobs(chunk: list[Mapping[str, Any]], ran: list[tuple[list[Any], str | None]],
               rows: list[dict[str, Any]]) -> tuple[list[list[dict[str, ScoreResult]]], list[TurnRuns]]:
    """Each ``turns`` item's turns, to be judged on their own input and output: per item, per turn,
    the results by gate or scorer id (filled in as they come), and per scorer the (item, turn, run)
    it judges; one run per turn, shared by the turn's gates and scorers. Where the item's target
    failed, every turn's gates and scorers are unscored (``target_failed``), so the failure
    reaches the turns' gates and thresholds."""
    found: list[list[dict[str, ScoreResult]]] = [[] for _ in chunk]
    wanted: dict[int, TurnRuns] = {}
    for i, item in enumerate(chunk):
        if "turns" not in item:
            continue
        turns = turns_of(item)
        found[i] = [{} for _ in turns]
        for t, turn in enumerate(turns):
            run_id = f"{rows[i]['run_id']}/turn-{t}"
            error = ran[i][1]
            row = None if error is not None else {**rows[i], "input": turn.input, "output": ran[i][0][t],
                                                   "run_id": run_id}
            for scorer in [*turn.gates, *(s for s, _ in turn.scorers)]:
                if row is None:
                    found[i][t][scorer.id] = ScoreResult.unscored(run_id, scorer.name, "target_failed", str(error))
                    continue
                wanted.setdefault(id(scorer), (scorer, []))[1].append((i, t, row))
    return found, list(wanted.values())


__all__ = ["TurnFound", "score_items"]
