"""The HTTP server of `localjudge serve`: OpenAI's chat API on one loaded judge (FastAPI).

- ``GET /v1/models``: the served name, its context length and what it guarantees.
- ``POST /v1/chat/completions``: with and without ``stream``; every structured answer parses
  (`constraints`, `answers`); concurrent requests share judge calls (`batcher`).
- ``GET /health``: liveness and the queue.

Safe to leave running: an API key when one is set (``Authorization: Bearer``, compared in
constant time); a body-size cap checked as the body arrives; caps on messages and tokens; a full
queue is a 429 with Retry-After; every refusal an OpenAI error object with a 4xx, never a
traceback. Nothing here imports torch: the judge comes loaded.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from localjudge.judge import ChatPrompt, Judge
from localjudge.serve.answers import Answerer
from localjudge.serve.batcher import Batcher, QueueFull
from localjudge.serve.constraints import RequestError, constraint
from localjudge.serve.replies import Reply, error_body
from localjudge.serve.requests import ChatRequest, Limits, chat_prompt
from localjudge.serve.schema_bounds import Caps
from localjudge.serve.scoring import Calibrator, ScoreBatcher, ScorerBuildError, ScoreRequest, Scorers, results_body

log = logging.getLogger(__name__)

GUARANTEES = ("every response_format json_schema / json_object answer parses under its schema",
              "tool_choice required or named: arguments parse under the tool's parameters",
              "a JSON schema in the last user message (Mastra, Ragas, LangChain instructions): the answer is its JSON",
              "greedy: the same request gives the same answer")


def _judge_error(error: Exception) -> str:
    return f"the judge failed on this request: {type(error).__name__}: {error}"


def _fail(status: int, message: str, *, param: str | None = None, kind: str = "invalid_request_error",
          code: str | None = None, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(message, kind=kind, param=param, code=code), status_code=status, headers=headers)


class Guard:
    """ASGI middleware in front of the app: the API key on ``/v1`` paths (when one is set), and a
    body over `limit` bytes refused (413) as it arrives, never read whole (`BodyTooLarge` is
    raised from `receive`: the route answers 413)."""

    def __init__(self, app: Any, limit: int, api_key: str | None) -> None:
        self.app, self.limit, self.api_key = app, limit, api_key

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.api_key is not None and str(scope.get("path", "")).startswith("/v1"):
            scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), self.api_key.encode()):
                await _fail(401, "a valid API key is required (Authorization: Bearer KEY)",
                            kind="authentication_error", code="invalid_api_key")(scope, receive, send)
                return
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await too_large(self.limit)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge
            return message

        await self.app(scope, counted, send)


class BodyTooLarge(Exception):
    """The body grew past the limit while it was read."""


def too_large(limit: int) -> JSONResponse:
    return _fail(413, f"the request body is over the server's limit of {limit} bytes", param="body")


def create_app(judge: Judge, *, served_name: str, api_key: str | None = None, limits: Limits = Limits(),
               caps: Caps = Caps(), count_tokens: Callable[[ChatPrompt], int] | None = None,
               context_window: int | None = None, on_start: Callable[[], None] | None = None,
               calibrator: Calibrator | None = None) -> Any:
    """The ASGI app serving `judge` (see the module's docstring).

    Args:
        judge: A loaded judge (any engine; the fake judge in tests).
        served_name: The model name clients send and `/v1/models` lists (any name is answered).
        api_key: Required as ``Authorization: Bearer KEY`` on every ``/v1`` call when set.
        limits: Request caps and batching.
        caps: The string and list bounds a schema gets where it has none.
        count_tokens: A chat prompt's tokens (default: the judge's `prompt_ids`).
        context_window: Prompt plus answer limit (default: the judge's).
        on_start: Called once the app has started (the CLI prints its line).
        calibrator: A calibration for `/v1/score`'s scorers (`--calibration`): each result gets
            ``calibrated_prob`` where it applies.
    """
    counter = count_tokens or (lambda prompt: len(judge.prompt_ids(prompt)))  # type: ignore[attr-defined]
    window = context_window or int(judge.context_window)  # type: ignore[attr-defined]
    batcher = Batcher(judge, max_rows=limits.max_rows, window=limits.window, max_queue=limits.max_queue)
    answerer = Answerer(batcher, counter, window, max_tokens=min(limits.max_tokens, window),
                        text_tokens=limits.text_tokens)
    scorers = Scorers(judge)
    scoring = ScoreBatcher(batcher.on_judge, window=limits.window)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks = [asyncio.create_task(batcher.run()), asyncio.create_task(scoring.run())]
        if on_start is not None:
            on_start()
        yield
        for task in tasks:
            task.cancel()
        batcher.close()

    app = FastAPI(title="localjudge serve", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.batcher = batcher

    @app.exception_handler(Exception)
    async def server_error(request: Request, error: Exception) -> JSONResponse:
        log.error("request %s failed: %s: %s", request.url.path, type(error).__name__, error)
        return _fail(500, f"the server failed on this request: {type(error).__name__}: {error}", kind="server_error")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        return _fail(error.status_code, str(error.detail), code=str(error.status_code))

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "waiting": batcher.waiting}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{
            "id": served_name, "object": "model", "created": 0, "owned_by": "localjudge",
            "max_model_len": window, "root": judge.identity,
            "localjudge": {"identity": judge.identity, "guarantees": list(GUARANTEES),
                           "max_tokens": answerer.max_tokens, "text_tokens": limits.text_tokens,
                           "default_max_items": caps.items, "default_max_length": caps.string}}]}

    async def read(request: Request, model: type[Any]) -> Any:
        """The body as `model`, or the OpenAI error reply that refuses it."""
        try:
            raw = json.loads(await request.body())
        except BodyTooLarge:
            return too_large(limits.max_body)
        except (ValueError, RecursionError) as error:
            return _fail(400, f"the body is not JSON: {str(error)[:200]}", param="body")
        if not isinstance(raw, dict):
            return _fail(400, "the body must be a JSON object", param="body")
        try:
            return model.model_validate(raw)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            return _fail(400, f"{where}: {first['msg']}", param=where)

    @app.post("/v1/score")
    async def score(request: Request) -> Any:
        body = await read(request, ScoreRequest)
        if isinstance(body, JSONResponse):
            return body
        try:
            scorer = scorers.get(body)
        except ScorerBuildError as error:
            return _fail(400, str(error), param=error.param)
        if batcher.waiting >= limits.max_queue:
            return _busy()
        try:
            results = await scoring.score(scorer, body.runs)
        except Exception as error:  # noqa: BLE001 - the schedule failed as a whole: one line
            return _judge_failed(error)
        return {"object": "localjudge.score", "scorer": body.scorer, "judge": judge.identity,
                **results_body(scorer, results, calibrator)}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body = await read(request, ChatRequest)
        if isinstance(body, JSONResponse):
            return body
        if len(body.messages) > limits.max_messages:
            return _fail(400, f"{len(body.messages)} messages: the server takes at most {limits.max_messages}",
                         param="messages")
        try:
            prompt = chat_prompt(body.messages)
            wanted = constraint(body, caps)
            prompt_tokens = answerer.prompt_tokens(prompt)
        except RequestError as error:
            return _fail(400, str(error), param=error.param)
        except ValueError as error:
            return _fail(400, str(error), param="messages")
        if batcher.waiting >= limits.max_queue:
            return _busy()
        reply = Reply(body.model or served_name, judge.identity, with_logprobs=body.logprobs, top=body.top_logprobs)

        async def answer() -> Any:
            return await answerer.answer(prompt, wanted, body.budget(), body.stops(), prompt_tokens)

        if not body.stream:
            try:
                return reply.completion(await answer(), wanted.source)
            except QueueFull:
                return _busy()
            except RequestError as error:
                return _fail(400, str(error), param=error.param)
            except Exception as error:  # noqa: BLE001 - the judge failed on this row alone (the batcher isolated it)
                return _judge_failed(error)

        async def events() -> AsyncIterator[str]:
            yield reply.opening()
            try:
                done = await answer()
            except QueueFull as error:
                for line in reply.stream_error(error_body(str(error), code="queue_full")):
                    yield line
                return
            except RequestError as error:
                for line in reply.stream_error(error_body(str(error), param=error.param)):
                    yield line
                return
            except Exception as error:  # noqa: BLE001 - as above: one error event, the stream ends
                for line in reply.stream_error(error_body(_judge_error(error), kind="server_error")):
                    yield line
                return
            for line in reply.stream(done, wanted.source):
                yield line

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    def _judge_failed(error: Exception) -> JSONResponse:
        log.error("the judge failed on a request: %s", _judge_error(error))
        return _fail(500, _judge_error(error), kind="server_error")

    def _busy() -> JSONResponse:
        return _fail(429, f"the server's queue is full ({limits.max_queue} requests waiting); retry later",
                     kind="rate_limit_error", code="queue_full", headers={"Retry-After": str(limits.retry_after)})

    return Guard(app, limits.max_body, api_key)
