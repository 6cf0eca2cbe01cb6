"""Live scoring: score a sampled share of an app's calls in the background, as they happen.

Mastra attaches scorers to an agent (`scorers: {key: {scorer, sampling: {type: "ratio",
rate}}}`) and stores each score. Here a `LiveScorer` wraps a function (sync or async) or takes
runs through `submit`. Each call is sampled per scorer (a seeded ratio, or every Nth), queued,
and scored by one background worker that batches what has queued (up to `max_batch` runs, or
whatever arrived within `max_wait` seconds of the first) and makes one judge call per scorer
step per batch, as every other path does. Results go to a store (SQLite by default, JSONL by
suffix) and to an optional callback.

The wrapped function is never blocked or broken by scoring: sampling and queueing cost
microseconds, the queue is bounded and what overflows it is counted (`stats.dropped`) and
logged, never silently lost; a judge failure is recorded on its runs; `flush()` waits for the
queue to drain, `close()` drains and stops the worker, and an interpreter that exits drains
first (atexit).
"""

from __future__ import annotations

import atexit
import functools
import inspect
import json
import logging
import queue
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from localjudge.evaluate import score_runs
from localjudge.result import ScoreResult
from localjudge.scorer import Scorer

log = logging.getLogger(__name__)

DEFAULT_STORE = "localjudge-live.db"


class Sampler:
    """Decides, call by call, whether a scorer scores it: ``{"type": "ratio", "rate": r}`` (a
    seeded random share), ``{"type": "every", "n": n}`` (calls 1, n+1, 2n+1, ...) or
    ``{"type": "none"}`` (every call). Thread-safe; the same seed gives the same decisions."""

    def __init__(self, spec: Mapping[str, Any] | float | None = None, *, seed: int = 0) -> None:
        spec = {"type": "none"} if spec is None else {"type": "ratio", "rate": spec} if isinstance(
            spec, (int, float)) else dict(spec)
        kind = spec.get("type")
        if kind == "ratio":
            rate = spec.get("rate")
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
                raise ValueError(f"sampling ratio needs a rate in [0, 1], got {rate!r}")
        elif kind == "every":
            n = spec.get("n")
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"sampling every-n needs an integer n >= 1, got {n!r}")
        elif kind != "none":
            raise ValueError(f"unknown sampling {spec!r}: give {{'type': 'ratio', 'rate': r}}, "
                             "{'type': 'every', 'n': n} or {'type': 'none'}")
        self.spec = spec
        self._rng = random.Random(seed)
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self) -> bool:
        with self._lock:
            self._count += 1
            if self.spec["type"] == "ratio":
                return self._rng.random() < self.spec["rate"]
            if self.spec["type"] == "every":
                return (self._count - 1) % self.spec["n"] == 0
            return True


class ResultSink(Protocol):
    """Where live results go: written by the worker thread only, a batch at a time."""

    def write(self, records: Sequence[dict[str, Any]]) -> None: ...

    def close(self) -> None: ...


COLUMNS = ("created_at", "scorer", "run_id", "score", "prob_score", "reason", "error", "error_kind", "input",
           "output", "result")


class SqliteResults:
    """Results in a SQLite table `results` (WAL journal: readers never block the writer). The
    connection is opened by the first `write`, in the worker's thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY, created_at TEXT, scorer TEXT, run_id TEXT, "
            "score REAL, prob_score REAL, reason TEXT, error TEXT, error_kind TEXT, input TEXT, output TEXT, "
            "result TEXT)")
        return db

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        if self._db is None:
            self._db = self._connect()
        with self._db:  # one transaction per batch
            self._db.executemany(
                f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                [tuple(r[c] for c in COLUMNS) for r in records])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class JsonlResults:
    """Results as JSON lines, appended and flushed a batch at a time."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))

    def close(self) -> None:
        pass


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Every live result stored at `path` (SQLite or JSONL), oldest first."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM results ORDER BY id")]


def _sink(store: str | Path | ResultSink | None) -> ResultSink | None:
    if store is None or not isinstance(store, (str, Path)):
        return store
    return JsonlResults(store) if Path(store).suffix == ".jsonl" else SqliteResults(store)


@dataclass(frozen=True)
class LiveStats:
    """Counts since the start. `sampled` = `scored` + `unscored` + `dropped` + still queued, per
    (call, scorer) pair; `dropped`: sampled but the queue was full; `failed_writes`: batches
    the store or callback refused (logged)."""

    calls: int
    sampled: int
    queued: int
    scored: int
    unscored: int
    dropped: int
    failed_writes: int


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class LiveScorer:
    """Score a sampled share of live calls in the background.

    Args:
        scorers: A scorer, a list of scorers (each sampled by `sampling`), or Mastra's shape
            ``{key: {"scorer": s, "sampling": {...}}}`` (a sampling per scorer).
        sampling: For scorers without their own: ``{"type": "ratio", "rate": 0.1}``,
            ``{"type": "every", "n": 10}``, a bare rate, or None (every call).
        store: A ``.db``/``.sqlite`` path (SQLite), a ``.jsonl`` path, any object with
            ``write(records)`` and ``close()``, or None (the callback only). Default:
            ``localjudge-live.db`` in the working directory.
        on_result: Called in the worker thread with ``(run, result)`` for every result; its
            exceptions are logged and counted, never raised.
        max_batch: Most runs per judge call.
        max_wait: Seconds the worker waits, after the first queued run, for a batch to fill.
        queue_size: Most runs waiting; beyond it, runs are dropped and counted.
        seed: Seeds the ratio samplers.
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
        seed: int = 0,
    ) -> None:
        if max_batch < 1 or queue_size < 1 or max_wait < 0:
            raise ValueError("max_batch and queue_size must be at least 1, max_wait at least 0")
        self._entries = self._parse(scorers, sampling, seed)
        self._sink = _sink(store)
        self._on_result = on_result
        self._max_batch, self._max_wait = max_batch, max_wait
        self._queue: queue.Queue[tuple[dict[str, Any], list[Scorer]] | None] = queue.Queue(queue_size)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._counts = dict.fromkeys(("calls", "sampled", "scored", "unscored", "dropped", "failed_writes"), 0)
        self._pending = 0  # runs queued or being scored
        self._closed = False
        self._worker = threading.Thread(target=self._work, name="localjudge-live", daemon=True)
        self._worker.start()
        atexit.register(self.close)

    @staticmethod
    def _parse(scorers: Any, sampling: Any, seed: int) -> list[tuple[Scorer, Sampler]]:
        if isinstance(scorers, Scorer):
            scorers = [scorers]
        if isinstance(scorers, Mapping):
            entries = []
            for key, entry in scorers.items():
                if not isinstance(entry, Mapping) or not isinstance(entry.get("scorer"), Scorer):
                    raise TypeError(f"scorer {key!r}: give {{'scorer': Scorer, 'sampling': {{...}}}}, got {entry!r}")
                entries.append((entry["scorer"], entry.get("sampling", sampling)))
        else:
            entries = [(s, sampling) for s in scorers]
        if not entries or not all(isinstance(s, Scorer) for s, _ in entries):
            raise TypeError("give at least one Scorer")
        names = [s.name for s, _ in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"each scorer once: got {names}")
        return [(s, Sampler(spec, seed=seed + i)) for i, (s, spec) in enumerate(entries)]

    # --- the caller's side: never blocks, never raises -------------------------------------
    def submit(self, run: Mapping[str, Any]) -> bool:
        """Sample `run` for each scorer and queue it; False when no scorer sampled it, the queue
        was full (counted in `stats.dropped`) or the scorer is closed."""
        chosen = [s for s, sample in self._entries if sample()]
        with self._lock:
            self._counts["calls"] += 1
            self._counts["sampled"] += len(chosen)
            if not chosen or self._closed:
                if self._closed:
                    self._counts["dropped"] += len(chosen)
                return False
            self._pending += 1
        item = {**run, "run_id": run.get("run_id") or run.get("runId") or f"live-{uuid.uuid4().hex[:16]}"}
        try:
            self._queue.put_nowait((item, chosen))
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
        records, delivered = [], []
        for scorer, _ in self._entries:
            runs = [run for run, chosen in batch if scorer in chosen]
            if not runs:
                continue
            # score_runs: one judge call per step for these runs, a judge failure recorded per run
            results, _ = score_runs(runs, [scorer], batch_size=len(runs))
            for run, result in zip(runs, results[scorer.name], strict=True):
                records.append(_record(run, result))
                delivered.append((run, result))
        with self._lock:
            self._counts["scored"] += sum(r.scored for _, r in delivered)
            self._counts["unscored"] += sum(not r.scored for _, r in delivered)
        try:
            if self._sink is not None and records:
                self._sink.write(records)
            for run, result in delivered:
                if self._on_result is not None:
                    self._on_result(run, result)
        except Exception:  # noqa: BLE001 - a failing store or callback costs this batch's delivery only
            with self._lock:
                self._counts["failed_writes"] += 1
            log.exception("live scoring: storing or delivering a batch of %d results failed", len(records))


def _default_run(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> dict[str, Any]:
    question = args[0] if args else kwargs.get("input", next(iter(kwargs.values()), ""))
    return {"input": question, "output": result}


def _record(run: Mapping[str, Any], result: ScoreResult) -> dict[str, Any]:
    return {
        "created_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "scorer": result.scorer, "run_id": result.run_id, "score": result.score, "prob_score": result.prob_score,
        "reason": result.reason, "error": result.error, "error_kind": result.error_kind,
        "input": _text(run.get("input", "")), "output": _text(run.get("output", "")),
        "result": json.dumps(result.to_dict(), ensure_ascii=False, default=str),
    }
