"""Live scoring: score a sampled share of an app's calls in the background, as they happen.

Mastra attaches scorers to an agent (`scorers: {key: {scorer, sampling: {type: "ratio",
rate}}}`) and stores each score. Here a `LiveScorer` wraps a function (sync or async) or takes
runs through `submit`. Each call is filtered and sampled per scorer (a ratio decided by the hash of
its trace or run id, as Mastra's, or every Nth: `localjudge.live.sampling`), queued,
and scored by one background worker that batches what has queued (up to `max_batch` runs, or
whatever arrived within `max_wait` seconds of the first) and makes one judge call per scorer
step per batch, as every other path does. Results go to a store (SQLite by default, JSONL by
suffix: `localjudge.live.store`; a Mastra store's score table by its URL: `localjudge.live.mastra`)
and to an optional callback.

The wrapped function is never blocked or broken by scoring: sampling and queueing cost
microseconds, the queue is bounded and what overflows it is counted (`stats.dropped`) and
logged, never silently lost; a judge failure is recorded on its runs, and a run that cannot be
scored or stored costs only itself; `flush()` waits for the queue to drain, `close()` drains and
stops the worker, and an interpreter that exits drains first (atexit: a normal exit, an uncaught
exception, Ctrl-C). SIGTERM kills a Python process without atexit unless the app handles it;
`drain_on_sigterm=True` turns it into a normal exit where the app has no handler of its own.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge.evaluation import score_planned
from localjudge.live.mastra import MastraScores, is_mastra_url
from localjudge.live.sampling import Sampler
from localjudge.live.sigterm import exit_on_sigterm_by_default
from localjudge.live.store import (
    JsonlResults,
    LiveStoreError,
    ResultSink,
    SqliteResults,
    open_sink,
    read_results,
    record_of,
)
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer

log = logging.getLogger(__name__)

DEFAULT_STORE = "localjudge-live.db"


@dataclass(frozen=True)
class LiveStats:
    """Counts since the start. `sampled` = `scored` + `unscored` + `not_scorable` + `dropped` + still
    queued, per (call, scorer) pair; `scored`/`unscored` (failures)/`not_scorable` (a step declared
    the run not scorable): what the judge gave; `dropped`: sampled but the
    queue was full; `failed_writes`: results the store refused or whose `on_result` raised, each
    counted once and logged with its run id."""

    calls: int
    sampled: int
    queued: int
    scored: int
    unscored: int
    dropped: int
    failed_writes: int
    not_scorable: int = 0


class LiveScorer:
    """Score a sampled share of live calls in the background.

    Args:
        scorers: A scorer, a list of scorers (each sampled by `sampling`), or Mastra's shape
            ``{key: {"scorer": s, "sampling": {...}, "filter": f}}`` (a sampling and filter per scorer).
        sampling: For scorers without their own: ``{"type": "ratio", "rate": 0.1}`` (the runs
            whose trace or run id hashes below the rate: Mastra's, the same runs every time),
            ``{"type": "every", "n": 10}``, a bare rate, or None (every call).
        filter: For scorers without their own: a function of the run, asked before sampling;
            only runs it returns True for are sampled (one that raises: not scored, logged).
        store: A ``.db``/``.sqlite`` path (SQLite), a ``.jsonl`` path, a Mastra store's URL
            (``file:PATH`` or ``postgresql://...``, as ``--mastra-store`` takes it: each scored
            result a Mastra score row, `MastraScores`), any object with ``write(records)`` and
            ``close()``, or None (the callback only). Default: ``localjudge-live.db`` in the
            working directory. A store that cannot be written raises `LiveStoreError` here.
        on_result: Called in the worker thread with ``(run, result)`` for every result; its
            exceptions are logged and counted, never raised.
        max_batch: Most runs per judge call.
        max_wait: Seconds the worker waits, after the first queued run, for a batch to fill.
        queue_size: Most runs waiting; beyond it, runs are dropped and counted.
        drain_on_sigterm: Make SIGTERM a normal exit (status 143), so that the queue drains
            first as at any exit, where SIGTERM still has its default action (which ends the
            process at once, queued runs lost). Never replaces a handler the app has set; off by
            default, since a library must not take over its host's signals. Main thread only;
            the handler stays for the life of the process.
    """

    def __init__(
        self,
        scorers: Scorer | Sequence[Scorer] | Mapping[str, Mapping[str, Any]],
        *,
        sampling: Mapping[str, Any] | float | None = None,
        store: str | Path | ResultSink | None = DEFAULT_STORE,
        on_result: Callable[[Mapping[str, Any], ScoreResult], Any] | None = None,
        max_batch: int = 8,
        max_wait: float = 0.5,
        queue_size: int = 1000,
        filter: Callable[[Mapping[str, Any]], Any] | None = None,
        drain_on_sigterm: bool = False,
    ) -> None:
        if max_batch < 1 or queue_size < 1 or max_wait < 0:
            raise ValueError("max_batch and queue_size must be at least 1, max_wait at least 0")
        self._entries = self._parse(scorers, sampling, filter)
        # a store that cannot be written is refused here
        self._sink = MastraScores(store) if isinstance(store, str) and is_mastra_url(store) else open_sink(store)
        if isinstance(self._sink, MastraScores):
            self._sink.check_scorers([s.name for s, _ in self._entries])
        if drain_on_sigterm:
            exit_on_sigterm_by_default()  # before the worker starts: it may refuse (not the main thread)
        self._on_result = on_result
        self._max_batch, self._max_wait = max_batch, max_wait
        self._queue: queue.Queue[tuple[dict[str, Any], list[Scorer]] | None] = queue.Queue(queue_size)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._counts = dict.fromkeys(("calls", "sampled", "scored", "unscored", "not_scorable", "dropped",
                                      "failed_writes"), 0)
        self._pending = 0  # runs queued or being scored
        self._closed = False
        self._worker = threading.Thread(target=self._work, name="localjudge-live", daemon=True)
        self._worker.start()
        atexit.register(self.close)

    @staticmethod
    def _parse(scorers: Any, sampling: Any, run_filter: Any) -> list[tuple[Scorer, Sampler]]:
        if isinstance(scorers, Scorer):
            scorers = [scorers]
        if isinstance(scorers, Mapping):
            entries = []
            for key, entry in scorers.items():
                if not isinstance(entry, Mapping) or not isinstance(entry.get("scorer"), Scorer):
                    raise TypeError(f"scorer {key!r}: give {{'scorer': Scorer, 'sampling': {{...}}}}, got {entry!r}")
                entries.append((entry["scorer"], entry.get("sampling", sampling), entry.get("filter", run_filter)))
        else:
            entries = [(s, sampling, run_filter) for s in scorers]
        if not entries or not all(isinstance(s, Scorer) for s, _, _ in entries):
            raise TypeError("give at least one Scorer")
        names = [s.name for s, _, _ in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"each scorer once: got {names}")
        return [(s, Sampler(spec, filter=keep)) for s, spec, keep in entries]

    # --- the caller's side: never blocks, never raises -------------------------------------
    def submit(self, run: Mapping[str, Any]) -> bool:
        """Sample `run` for each scorer and queue it; False when no scorer sampled it, the queue
        was full (counted in `stats.dropped`) or the scorer is closed."""
        run = {**run, "run_id": run.get("run_id") or run.get("runId") or f"live-{uuid.uuid4().hex[:16]}"}
        chosen = [s for s, sample in self._entries if sample(run)]
        with self._lock:
            self._counts["calls"] += 1
            self._counts["sampled"] += len(chosen)
            if not chosen or self._closed:
                if self._closed:
                    self._counts["dropped"] += len(chosen)
                return False
            self._pending += 1
        try:
            self._queue.put_nowait((run, chosen))
        except queue.Full:
            with self._lock:
                self._pending -= 1
                self._counts["dropped"] += len(chosen)
                dropped = self._counts["dropped"]
                self._idle.notify_all()
            if dropped == len(chosen) or dropped % 100 < len(chosen):  # the first drop, then every ~100th
                log.warning("live scoring queue is full: %d scorings dropped so far (raise queue_size, "
                            "lower the sampling rate, or give the judge more room)", dropped)
            return False
        return True

    def wrap(self, fn: Callable[..., Any] | None = None, *,
             to_run: Callable[[tuple[Any, ...], dict[str, Any], Any], Mapping[str, Any]] | None = None) -> Any:
        """Wrap a function (sync or async; also as ``@live.wrap``): its result is returned
        unchanged and, sampled, scored as the run ``{"input": first argument, "output": result}``
        (or what ``to_run(args, kwargs, result)`` builds: a context, tool results, an id). A
        call that raises is not scored; its exception is the caller's, untouched."""
        if fn is None:
            return functools.partial(self.wrap, to_run=to_run)
        build = to_run or _default_run

        def send(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
            try:
                self.submit(build(args, kwargs, result))
            except Exception:  # noqa: BLE001 - scoring must never break the app
                log.exception("live scoring: could not submit a call")

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
                result = await fn(*args, **kwargs)
                send(args, kwargs, result)
                return result
            return wrapped_async

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            send(args, kwargs, result)
            return result
        return wrapped

    @property
    def stats(self) -> LiveStats:
        with self._lock:
            return LiveStats(queued=self._pending, **self._counts)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued run is scored and stored; False if `timeout` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Drain the queue (waiting up to `timeout`), stop the worker and close the store.
        Idempotent; runs at interpreter exit too. False if runs were still queued at the timeout."""
        with self._lock:
            if self._closed:
                return not self._pending
            self._closed = True
        drained = self.flush(timeout)
        try:
            self._queue.put(None, timeout=timeout)  # wakes the worker to stop, after what is queued
        except queue.Full:
            log.warning("live scoring: closed with %d runs still queued", self.stats.queued)
        self._worker.join(timeout)  # the worker closes the store, in its own thread
        atexit.unregister(self.close)
        return drained

    def __enter__(self) -> LiveScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the worker's side -------------------------------------------------------------------
    def _take_batch(self) -> list[tuple[dict[str, Any], list[Scorer]]] | None:
        first = self._queue.get()
        if first is None:
            return None
        batch = [first]
        deadline = time.monotonic() + self._max_wait
        while len(batch) < self._max_batch:
            left = deadline - time.monotonic()
            try:
                item = self._queue.get(timeout=left) if left > 0 else self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._queue.put(None)  # stop after this batch
                break
            batch.append(item)
        return batch

    def _work(self) -> None:
        try:
            self._loop()
        finally:
            if self._sink is not None:
                self._sink.close()

    def _loop(self) -> None:
        while (batch := self._take_batch()) is not None:
            try:
                self._score(batch)
            except Exception:  # noqa: BLE001 - the worker must outlive any batch
                log.exception("live scoring: a batch failed outside the judge")
            finally:
                with self._idle:
                    self._pending -= len(batch)
                    self._idle.notify_all()

    def _score(self, batch: list[tuple[dict[str, Any], list[Scorer]]]) -> None:
        jobs = [(scorer, [run for run, chosen in batch if scorer in chosen]) for scorer, _ in self._entries]
        jobs = [(scorer, runs) for scorer, runs in jobs if runs]
        scored = _scored(jobs, len(batch))  # every sampled scorer as one schedule
        delivered = [(run, result, scorer) for (scorer, runs), results in zip(jobs, scored, strict=True)
                     for run, result in zip(runs, results, strict=True)]
        with self._lock:
            self._counts["scored"] += sum(r.scored for _, r, _ in delivered)
            self._counts["unscored"] += sum(r.failed for _, r, _ in delivered)
            self._counts["not_scorable"] += sum(r.not_scorable for _, r, _ in delivered)
        failed = self._store(delivered) if self._sink is not None and delivered else set()
        for i, (run, result, _) in enumerate(delivered):
            if self._on_result is None:
                break
            try:
                self._on_result(run, result)
            except Exception:  # noqa: BLE001 - a failing callback costs this result's delivery only
                failed.add(i)
                log.exception("live scoring: on_result raised for run %s", result.run_id)
        if failed:
            with self._lock:
                self._counts["failed_writes"] += len(failed)

    def _store(self, delivered: list[tuple[dict[str, Any], ScoreResult, Scorer]]) -> set[int]:
        """Store a batch's results in one write; the indices of those not stored. A store that
        fails as a whole (`LiveStoreError`: read-only now, locked past its retries) loses the
        batch; any other failure is retried a record at a time, so a record the store refuses
        (or a result that cannot be made one) costs only itself. A Mastra store makes its own
        records (keyed by the scorer too)."""
        assert self._sink is not None
        sink = self._sink
        records, failed = {}, set()
        for i, (run, result, scorer) in enumerate(delivered):
            try:
                records[i] = sink.record(run, result, scorer) if isinstance(sink, MastraScores) \
                    else record_of(run, result)
            except Exception as error:  # noqa: BLE001 - counted and logged, the others are stored
                failed.add(i)
                log.error("live scoring: the result of run %s cannot be stored: %s", result.run_id, error)
        if not records:
            return failed
        try:
            sink.write(list(records.values()))
            return failed
        except LiveStoreError:
            log.exception("live scoring: %d results not stored", len(records))
            return set(range(len(delivered)))
        except Exception as error:  # noqa: BLE001 - one bad record must not cost the others
            log.warning("live scoring: the store refused a batch of %d (%s); storing them one by one",
                        len(records), error)
        for i, record in records.items():
            try:
                sink.write([record])
            except Exception as error:  # noqa: BLE001 - counted and logged, the worker goes on
                failed.add(i)
                log.error("live scoring: the store refused the result of run %s: %s", record["run_id"], error)
        return failed


def _scored(jobs: list[tuple[Scorer, list[dict[str, Any]]]], rows: int) -> list[list[ScoreResult]]:
    """Per scorer, one result per run it sampled: every scorer on its runs as one schedule (the
    planner's `score_planned`: each round of steps in one judge call, a judge failure recorded on
    each run); if that raises outside the judge, each scorer alone (`_results`)."""
    try:
        scored = score_planned(jobs, batch_size=max(rows, 1))
        return [[one.results[p] for p in range(len(runs))] for (_, runs), one in zip(jobs, scored, strict=True)]
    except Exception as error:  # noqa: BLE001 - one bad scorer or run must not cost the batch
        if len(jobs) > 1:
            log.warning("live scoring: a batch of %d scorers failed outside the judge (%s); scoring each alone",
                        len(jobs), error)
        return [_results(scorer, runs) for scorer, runs in jobs]


def _results(scorer: Scorer, runs: list[dict[str, Any]]) -> list[ScoreResult]:
    """One result per run: the planner's `score_planned` (one judge call per step for these runs, a
    judge failure recorded on each run); if it raises outside the judge, each run alone, and a run
    that still raises is recorded unscored, alone."""
    try:
        one = score_planned([(scorer, runs)], batch_size=len(runs))[0]
        return [one.results[p] for p in range(len(runs))]
    except Exception as error:  # noqa: BLE001 - one bad run must not cost the batch
        if len(runs) > 1:
            log.warning("live scoring: a batch of %d failed outside the judge (%s); scoring its runs one by one",
                        len(runs), error)
            return [result for run in runs for result in _results(scorer, [run])]
        run_id = runs[0].get("run_id")
        log.exception("live scoring: run %s could not be scored", run_id)
        return [ScoreResult.unscored(None if run_id is None else str(run_id), scorer.name, "invalid_run",
                                     f"invalid run: could not be scored ({type(error).__name__}: {error})")]


def _default_run(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> dict[str, Any]:
    question = args[0] if args else kwargs.get("input", next(iter(kwargs.values()), ""))
    return {"input": question, "output": result}


__all__ = ["DEFAULT_STORE", "JsonlResults", "LiveScorer", "LiveStats", "LiveStoreError", "MastraScores", "ResultSink",
           "Sampler", "SqliteResults", "read_results"]
