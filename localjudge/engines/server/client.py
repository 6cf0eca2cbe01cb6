"""HTTP to an inference server, standard library only: JSON in and out, a per-request timeout,
bounded retries with back-off, an API key sent as a Bearer header and nowhere else.

Retried (at most `retries` times, waiting `backoff` x 2^attempt seconds, or the server's
``Retry-After``, capped at `MAX_WAIT` seconds): HTTP 429, 500, 502, 503 and 504, a refused or
reset connection, a timeout. Anything else (a 400, a 404) is answered at once as a `ServerError`.
Proxies from the environment are not used: the server is reached directly.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_WAIT = 30.0  # seconds: the longest wait between two attempts, whatever the server asks
MESSAGE_CHARS = 300  # of an error reply's body, kept in the error


class ServerError(Exception):
    """A request the server did not answer with JSON: `status` is the HTTP status (None when
    no reply came), `retryable` says whether trying again may help and `unreachable` whether the
    server could not be reached at all (connection refused, reset or lost; not a timeout)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None, unreachable: bool = False) -> None:
        super().__init__(message)
        self.status, self.retryable, self.retry_after = status, retryable, retry_after
        self.unreachable = unreachable


class Client:
    """Requests to one server at `base_url` (``http://host:8000/v1``; paths are taken from its
    root, so ``/v1/completions`` and ``/version`` both work)."""

    def __init__(self, base_url: str, *, api_key: str | None, timeout: float, retries: int = 3,
                 backoff: float = 0.5) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an http(s) URL like http://127.0.0.1:8000/v1, got {base_url!r}")
        path = parts.path.rstrip("/")
        self.root = f"{parts.scheme}://{parts.netloc}{path.removesuffix('/v1')}"
        self.host = parts.netloc.rpartition("@")[2]  # never user:password
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._key = api_key  # only ever in the Authorization header
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def __repr__(self) -> str:
        return f"Client({self.root!r})"

    def get(self, path: str) -> Any:
        """GET `path` as JSON (retried like a POST)."""
        return self._call("GET", path, None)

    def probe(self, path: str) -> Any:
        """GET `path` once, without retries: its JSON, or None when the server has no such page
        or does not answer it with JSON (used to find out which server this is)."""
        try:
            return self._once("GET", path, None)
        except ServerError as error:
            if error.status is None:
                raise
            return None

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """POST `body` as JSON to `path`; the reply's JSON."""
        return self._call("POST", path, body)

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        for attempt in range(self.retries + 1):
            try:
                return self._once(method, path, body)
            except ServerError as error:
                if not error.retryable:
                    raise
                if attempt == self.retries:
                    raise ServerError(f"{error} (tried {attempt + 1} times)", status=error.status,
                                      unreachable=error.unreachable) from None
                wait = min(error.retry_after or self.backoff * 2 ** attempt, MAX_WAIT)
                log.warning("%s %s: %s; retrying in %.1f s (attempt %d of %d)", method, path, error, wait,
                            attempt + 2, self.retries + 1)
                time.sleep(wait)
        raise AssertionError("unreachable")

    def _once(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(self.root + path, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=self.timeout) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as error:
            raise _http_error(error) from None
        except urllib.error.URLError as error:
            reason = error.reason
            retryable = isinstance(reason, (ConnectionError, TimeoutError))
            raise ServerError(f"cannot reach {self.host}: {reason}", retryable=retryable,
                              unreachable=not isinstance(reason, TimeoutError)) from None
        except TimeoutError:
            raise ServerError(f"no reply from {self.host} within {self.timeout:g} s", retryable=True) from None
        except (ConnectionError, http.client.HTTPException) as error:
            raise ServerError(f"connection to {self.host} lost: {type(error).__name__} {error}",
                              retryable=True, unreachable=True) from None
        try:
            return json.loads(raw)
        except ValueError:
            raise ServerError(f"the reply is not JSON: {raw[:MESSAGE_CHARS]!r}", status=200) from None


def _http_error(error: urllib.error.HTTPError) -> ServerError:
    try:
        text = error.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        text = ""
    try:  # OpenAI-style {"error": {"message": ...}} or {"message": ...}
        data = json.loads(text)
        found = data.get("error", data) if isinstance(data, dict) else data
        text = str(found.get("message", found) if isinstance(found, dict) else found)
    except ValueError:
        pass
    after = error.headers.get("Retry-After") if error.headers else None
    return ServerError(f"HTTP {error.code}: {text[:MESSAGE_CHARS]}", status=error.code,
                       retryable=error.code in RETRY_STATUS,
                       retry_after=float(after) if after and after.replace(".", "", 1).isdigit() else None)
