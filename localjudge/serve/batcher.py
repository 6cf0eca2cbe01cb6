"""Requests that arrive together, answered in one judge call.

Every answer a request needs is a `Job` (a chat prompt, its schema, a token budget). `Batcher`
collects jobs for a short window (`window` seconds after the first arrives; more keep joining
while the judge is busy), takes up to `max_rows` in arrival order and hands the judge one
`generate` call per token budget among them (a call has one budget; rows with the same budget
share it, so a row's answer never depends on its neighbours' budgets). The judge runs in one
worker thread, one call at a time.

A call that raises is retried in halves down to one row (`generate_isolating`), as the
engine's out-of-memory rule does: only a row that makes the judge fail alone fails, with its
error; its neighbours are answered. At most `max_queue` jobs wait: past that, `submit` raises
`QueueFull` (the server answers 429 with Retry-After). A job whose client went away before its
turn is dropped without being generated.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from localjudge.judge import ChatPrompt, Generation, Judge

log = logging.getLogger(__name__)
T = TypeVar("T")
J = TypeVar("J")


class QueueFull(RuntimeError):
    """More jobs waiting than the server's queue holds."""


def schema_class(schema: dict[str, Any], name: str = "Answer") -> type[BaseModel]:
    """A pydantic class standing for a client's bounded JSON schema, as the judge interface takes
    schemas: its `model_json_schema` is `schema`. One class per distinct schema (cached), so an
    engine compiles each grammar once. Named ``<name>_<hash>`` (the fake judge scripts ``name``)."""
    return _schema_class(json.dumps(schema, sort_keys=True), name)


@functools.lru_cache(maxsize=1024)
def _schema_class(text: str, name: str) -> type[BaseModel]:
    frozen = json.loads(text)

    def model_json_schema(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        return json.loads(json.dumps(frozen))  # a fresh copy: callers may add keys

    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return type(f"{name}_{digest}", (BaseModel,), {"model_json_schema": classmethod(model_json_schema),
                                                   "__module__": __name__})


@dataclass
class Job:
    prompt: ChatPrompt
    schema: type[BaseModel]
    max_new_tokens: int
    future: asyncio.Future[Generation] = field(repr=False)


class Collector(Generic[J]):
    """Jobs waiting for their turn, each with a `future`: `add` one, `take` the next batch.

    `take` waits until a job arrives, then `window` seconds more for others to join, drops the
    jobs whose clients went away (their future done), and returns up to `limit` in arrival order.
    `settle` gives each job of a batch its answer or its exception. Both batchers use it."""

    def __init__(self, window: float) -> None:
        self.window = window
        self.jobs: list[J] = []
        self._wake: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._wake is None:
            self._wake = asyncio.Event()
        return self._wake

    def add(self, job: J) -> None:
        self.jobs.append(job)
        self._event().set()

    async def take(self, limit: int | None = None) -> list[J]:
        wake = self._event()
        await wake.wait()
        await asyncio.sleep(self.window)
        self.jobs = [job for job in self.jobs if not job.future.done()]  # type: ignore[attr-defined]
        cut = len(self.jobs) if limit is None else limit
        batch, self.jobs = self.jobs[:cut], self.jobs[cut:]
        if not self.jobs:
            wake.clear()
        return batch

    @staticmethod
    def settle(jobs: Sequence[Any], answers: Sequence[Any]) -> None:
        for job, answer in zip(jobs, answers, strict=True):
            if job.future.done():
                continue
            if isinstance(answer, Exception):
                job.future.set_exception(answer)
            else:
                job.future.set_result(answer)


def generate_isolating(judge: Judge, prompts: Sequence[ChatPrompt], schemas: Sequence[type[BaseModel]],
                       max_new_tokens: int) -> list[Generation | Exception]:
    """`judge.generate`, retried in halves when it raises, down to one row: each row gets its
    answer, or the exception it raised alone."""
    try:
        return list(judge.generate(prompts, schemas, max_new_tokens=max_new_tokens))
    except Exception as error:  # noqa: BLE001 - any engine failure is isolated to its row
        if len(prompts) == 1:
            return [error]
        log.warning("a judge call of %d rows failed (%s); retrying it in halves", len(prompts), error)
        mid = len(prompts) // 2
        return [*generate_isolating(judge, prompts[:mid], schemas[:mid], max_new_tokens),
                *generate_isolating(judge, prompts[mid:], schemas[mid:], max_new_tokens)]


class Batcher:
    """Collects jobs and answers them in batched judge calls (see the module's docstring).

    Args:
        judge: The loaded judge.
        max_rows: The most rows one judge call takes.
        window: Seconds to wait for more jobs once one arrives while the judge is idle.
        max_queue: The most jobs waiting or in flight.
    """

    def __init__(self, judge: Judge, *, max_rows: int = 16, window: float = 0.02, max_queue: int = 256) -> None:
        self.judge = judge
        self.max_rows, self.window, self.max_queue = max_rows, window, max_queue
        self.waiting = 0  # jobs submitted and not yet answered
        self.calls = 0  # judge calls made (for /health and the tests)
        self._queue: Collector[Job] = Collector(window)
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="localjudge-judge")

    async def submit(self, prompt: ChatPrompt, schema: type[BaseModel], max_new_tokens: int) -> Generation:
        """The judge's answer to one prompt, batched with whatever else is waiting.

        Raises:
            QueueFull: `max_queue` jobs are already waiting.
            Exception: what the judge raised on this row alone.
        """
        if self.waiting >= self.max_queue:
            raise QueueFull(f"{self.waiting} requests are waiting (the server's --max-queue)")
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        self._queue.add(Job(prompt, schema, max_new_tokens, future))
        self.waiting += 1
        try:
            return await future
        finally:
            self.waiting -= 1

    async def run(self) -> None:
        """Answer jobs until cancelled (the server's lifespan runs it as a task)."""
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._queue.take(self.max_rows)
            budgets: dict[int, list[Job]] = {}
            for job in batch:
                budgets.setdefault(job.max_new_tokens, []).append(job)
            for tokens, jobs in budgets.items():
                self.calls += 1
                try:
                    answers: list[Generation | Exception] = await loop.run_in_executor(
                        self._worker, generate_isolating, self.judge, [j.prompt for j in jobs],
                        [j.schema for j in jobs], tokens)
                except Exception as error:  # noqa: BLE001 - the worker itself failed: each job hears why
                    answers = [error] * len(jobs)
                Collector.settle(jobs, answers)

    async def on_judge(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on the judge's worker, between judge calls (`/v1/score`'s schedule)."""
        self.calls += 1
        return await asyncio.get_running_loop().run_in_executor(self._worker, function, *args)

    def close(self) -> None:
        self._worker.shutdown(wait=True, cancel_futures=True)
