"""`POST /v1/score`: localjudge's own scorers on runs a client sends, batched across clients.

A request names a scorer and how to build it (`options`, `mode`, `compat`, `scale`) and sends runs
in the shapes `localjudge score` reads (Mastra's agent runs, or plain `input`/`output`/`context`).
Each run gets one result in localjudge's result shape (`ScoreResult.to_dict`: score, prob_score,
reason, every step's result and prompt, or the error and its kind: unscored, never guessed).

Requests that arrive together are scored as one schedule (`evaluation.score_planned`: each
round, the same step of every scorer's rows in one judge call), exactly as `evaluate` batches a
file; on the judge's one worker, between the chat requests' calls. A scorer is built once per
distinct (name, options, mode, compat, scale).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localjudge.evaluation import score_planned
from localjudge.judge import Judge
from localjudge.result import ScoreResult
from localjudge.scorers import build_scorer
from localjudge.scoring import Scorer
from localjudge.serve.batcher import Collector

log = logging.getLogger(__name__)

MAX_RUNS = 256  # runs in one request
# A calibration for a scorer: its map from prob score to the chance of the positive label, or why
# none applies (another judge or scorer version, no map for it): the CLI's `--calibration`.
Calibrator = Callable[[Scorer], "Callable[[float | None], float | None] | str"]


class ScoreRequest(BaseModel):
    """The body of `POST /v1/score`."""

    model_config = ConfigDict(extra="forbid")

    scorer: str = Field(min_length=1, max_length=100)
    options: dict[str, Any] = Field(default_factory=dict)
    mode: Literal["pipeline", "direct", "ensemble"] = "pipeline"
    compat: Literal["localjudge", "mastra"] = "localjudge"
    scale: float = Field(default=1.0, ge=0, le=1e6, allow_inf_nan=False)
    runs: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_RUNS)


class ScorerBuildError(ValueError):
    """The scorer named cannot be built as asked (`param`: the field to blame)."""

    def __init__(self, param: str, message: str) -> None:
        self.param = param
        super().__init__(message)


def results_body(scorer: Scorer, results: Sequence[ScoreResult], calibrator: Calibrator | None) -> dict[str, Any]:
    """A `/v1/score` reply's results: localjudge's result shape, with ``calibrated_prob`` when a
    calibration applies to the scorer (else ``calibration`` says why it does not)."""
    rows = [result.to_dict() for result in results]
    body: dict[str, Any] = {"results": rows}
    if calibrator is not None:
        fitted = calibrator(scorer)
        if isinstance(fitted, str):
            body["calibration"] = fitted
        else:
            for row, result in zip(rows, results, strict=True):
                row["calibrated_prob"] = fitted(result.prob_score if result.scored else None)
    return body


class Scorers:
    """The scorers requests name, built once per distinct build (name, options, mode, compat,
    scale) on `judge`; at most `most` kept (the oldest built is dropped)."""

    def __init__(self, judge: Judge, most: int = 64) -> None:
        self.judge, self.most = judge, most
        self._built: dict[tuple[str, str, str, str, float], Scorer] = {}

    def get(self, request: ScoreRequest) -> Scorer:
        """The scorer of `request`.

        Raises:
            ScorerBuildError: an unknown scorer, an option it does not take, a mode it has not.
        """
        try:
            options = json.dumps(request.options, sort_keys=True)
        except (TypeError, ValueError) as error:
            raise ScorerBuildError("options", f"options: {error}") from None
        key = (request.scorer, options, request.mode, request.compat, request.scale)
        if key not in self._built:
            if len(self._built) >= self.most:
                self._built.pop(next(iter(self._built)))
            self._built[key] = self._build(request)
        return self._built[key]

    def _build(self, request: ScoreRequest) -> Scorer:
        try:
            return build_scorer(request.scorer, self.judge, scale=request.scale, mode=request.mode,
                                options=request.options, compat=request.compat)
        except (ValueError, TypeError) as error:
            text = str(error)
            param = "scorer" if "unknown scorer" in text else "mode" if "mode" in text else \
                "compat" if "compat" in text else "options"
            raise ScorerBuildError(param, text) from None


@dataclass
class _Job:
    scorer: Scorer
    runs: Sequence[Mapping[str, Any]]
    future: asyncio.Future[list[ScoreResult]] = field(repr=False)


def score_jobs(jobs: Sequence[tuple[Scorer, Sequence[Mapping[str, Any]]]]) -> list[list[ScoreResult]]:
    """Each job's runs scored, all jobs as one schedule: per job, one result per run, in order.
    A run the scorer cannot read gets its `invalid_run` result, the others are judged: one batch
    of every run (the planner's `score_planned`, longest first, as `evaluate` orders a batch)."""
    scored = score_planned(jobs, batch_size=max(sum(len(runs) for _, runs in jobs), 1))
    return [[one.results[p] for p in range(len(runs))] for (_, runs), one in zip(jobs, scored, strict=True)]


class ScoreBatcher:
    """Collects `/v1/score` requests for `window` seconds and scores them as one schedule on
    `run_on_judge` (the chat batcher's worker, so the judge runs one call at a time)."""

    def __init__(self, run_on_judge: Callable[..., Awaitable[Any]], *, window: float = 0.02) -> None:
        self.run_on_judge = run_on_judge
        self._queue: Collector[_Job] = Collector(window)

    async def score(self, scorer: Scorer, runs: Sequence[Mapping[str, Any]]) -> list[ScoreResult]:
        future: asyncio.Future[list[ScoreResult]] = asyncio.get_running_loop().create_future()
        self._queue.add(_Job(scorer, runs, future))
        return await future

    async def run(self) -> None:
        """Score collected requests until cancelled (the server's lifespan runs it)."""
        while True:
            jobs = await self._queue.take()
            if not jobs:
                continue
            try:
                results: list[Any] = await self.run_on_judge(score_jobs, [(j.scorer, j.runs) for j in jobs])
            except Exception as error:  # noqa: BLE001 - every waiting request hears why, the server serves on
                log.error("scoring a batch of %d requests failed: %s", len(jobs), error)
                results = [error] * len(jobs)
            Collector.settle(jobs, results)
