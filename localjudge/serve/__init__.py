"""`localjudge serve`: the constrained local judge behind OpenAI's chat API, so any eval
framework's judge (Mastra's scorers, DeepEval, Ragas, the `openai` client) gets answers that parse.

- `requests`: the chat request as read, and the chat prompt it becomes;
- `constraints`: what the answer must be (a schema from `response_format`, tools or the prompt);
- `schema_bounds`: a client's JSON schema bounded into a grammar that always closes;
- `batcher`: concurrent requests in one judge call; a failing call isolated in halves;
- `answers`: one request's answer (budget, the retry that fits, text unwrapped);
- `replies`: OpenAI-shaped replies, streams and errors;
- `app`: the FastAPI app (needs the ``serve`` extra: fastapi, uvicorn).

Importing this package imports neither FastAPI nor torch; `create_app` imports FastAPI when called.
"""

from __future__ import annotations

from typing import Any

from localjudge.serve.requests import Limits
from localjudge.serve.schema_bounds import Caps


def create_app(*args: Any, **kwargs: Any) -> Any:
    """`localjudge.serve.app.create_app`: the ASGI app serving a judge (imports FastAPI)."""
    from localjudge.serve.app import create_app as make  # heavy: FastAPI, Starlette

    return make(*args, **kwargs)


__all__ = ["Caps", "Limits", "create_app"]
