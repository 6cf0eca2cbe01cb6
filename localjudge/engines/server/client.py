"""HTTP to an inference server, standard library only (`http.client`): JSON in and out, bounded
retries with back-off, an API key sent as a Bearer header and nowhere else.

One rule for every request, here and nowhere else (what a server sends back is untrusted):

- **No redirect is followed**: a 3xx is a `ServerError`, so the key goes to no other address.
- **One deadline per attempt**: `timeout` bounds the whole exchange (connecting, sending, the
  headers and the body), not each socket read, so a reply that trickles is cut at it.
- **A size cap**: a reply longer than its cap (`reply_cap`: sized from the token budget) is
  refused as it is read; an error reply is read up to `ERROR_BYTES`.
- **Every number finite**: JSON is read by `values.read_json` (NaN, Infinity, a float out of
  range and an integer beyond 64 bits refuse the reply).
- **The key never comes back out**: a server that echoes it (in an error, a non-JSON reply or
  any string of its JSON), raw, escaped or URL-encoded, has it replaced by ``***`` before
  anything reads the reply (`localjudge.credentials`); a key with a control character (a
  newline) is refused before any request, without being shown.
  A base URL with credentials (``user:password@``) is refused, without showing them.
- **A server is unreachable only when no connection can be made** (refused, no such host): a
  reply broken midway (reset, cut off) is that request's fault, retried like a 5xx.

Retried (at most `retries` times, waiting `backoff` x 2^attempt seconds, or the server's
``Retry-After``, capped at `MAX_WAIT` seconds): HTTP 429, 500, 502, 503 and 504, a refused or
reset connection, a broken reply, a timeout. Anything else (a 400, a 404, a redirect, a reply
too large or not JSON) is answered at once as a `ServerError`. Proxies from the environment are
not used: the server is reached directly.
"""

from __future__ import annotations

import http.client
import io
import json
import logging
import math
import socket
import time
from typing import Any
from urllib.parse import SplitResult, urlsplit

from localjudge.credentials import check_credential, redact, shown_url
from localjudge.engines.server.values import printable, read_json

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_WAIT = 30.0  # seconds: the longest wait between two attempts, whatever the server asks
MESSAGE_CHARS = 300  # of an error reply's body, kept in the error
PAGE_BYTES = 4 << 20  # the cap on a GET's reply (a model list, a server's own page)
REPLY_BYTES, TOKEN_BYTES = 1 << 20, 4 << 10  # a row's reply: 1 MiB + 4 KiB a token (20 top logprobs each)
ERROR_BYTES = 64 << 10  # what is read of an error reply's body
CHUNK = 64 << 10


class ServerError(Exception):
    """A request the server did not answer with JSON: `status` is the HTTP status (None when
    no reply came), `retryable` says whether trying again may help and `unreachable` whether no
    connection to the server could be made (refused, no such host; not a timeout, not a reply
    broken midway)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None, unreachable: bool = False) -> None:
        super().__init__(message)
        self.status, self.retryable, self.retry_after = status, retryable, retry_after
        self.unreachable = unreachable


def reply_cap(max_tokens: int) -> int:
    """The most bytes a row's reply may take: `REPLY_BYTES` and `TOKEN_BYTES` a token asked for."""
    return REPLY_BYTES + max(0, max_tokens) * TOKEN_BYTES


def split_url(url: str) -> SplitResult:
    """The parts of a server URL, or a ValueError that never shows credentials written in it."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        raise ValueError(f"base_url: credentials in the URL (user:password@) are not taken: give the key with "
                         f"api_key_env / --api-key-env (the server at {printable(shown_url(url))})")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http(s) URL like http://127.0.0.1:8000/v1, got {printable(url)!r}")
    try:
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError:
        raise ValueError(f"base_url: the port of {printable(url)!r} is not a number") from None
    return parts


class Client:
    """Requests to one server at `base_url` (``http://host:8000/v1``; paths are taken from its
    root, so ``/v1/completions`` and ``/version`` both work)."""

    def __init__(self, base_url: str, *, api_key: str | None, timeout: float, retries: int = 3,
                 backoff: float = 0.5) -> None:
        parts = split_url(base_url)
        self._https = parts.scheme == "https"
        self._address = (parts.hostname or "", parts.port)
        self._prefix = parts.path.rstrip("/").removesuffix("/v1")
        self.root = f"{parts.scheme}://{parts.netloc}{self._prefix}"
        self.host = parts.netloc
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._key = None if api_key is None else check_credential(api_key, "the API key")  # only in the header

    def __repr__(self) -> str:
        return f"Client({self.root!r})"

    def redact(self, text: str) -> str:
        """`text` with the API key, in any form it takes (`localjudge.credentials.redact`: raw,
        escaped, URL-encoded), replaced by ``***``: for every message made from a reply."""
        return redact(text, [self._key])

    def get(self, path: str) -> Any:
        """GET `path` as JSON (retried like a POST)."""
        return self._call("GET", path, None, PAGE_BYTES)

    def probe(self, path: str) -> Any:
        """GET `path` once, without retries: its JSON, or None when the server has no such page
        or does not answer it with JSON (used to find out which server this is)."""
        try:
            return self._once("GET", path, None, PAGE_BYTES)
        except ServerError as error:
            if error.status is None:
                raise
            return None

    def post(self, path: str, body: dict[str, Any], *, max_bytes: int = REPLY_BYTES) -> Any:
        """POST `body` as JSON to `path`; the reply's JSON (at most `max_bytes` of it)."""
        return self._call("POST", path, body, max_bytes)

    def _call(self, method: str, path: str, body: dict[str, Any] | None, max_bytes: int) -> Any:
        for attempt in range(self.retries + 1):
            try:
                return self._once(method, path, body, max_bytes)
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

    def _once(self, method: str, path: str, body: dict[str, Any] | None, max_bytes: int) -> Any:
        """One attempt, the whole of it within `timeout` seconds."""
        deadline = time.monotonic() + self.timeout
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        connection = kind(*self._address, timeout=self.timeout)
        sock = None
        try:
            try:
                connection.connect()
            except TimeoutError:
                raise self._late() from None
            except OSError as error:  # refused, no such host, a TLS failure: no connection at all
                raise self._error(f"cannot reach {self.host}: {error}", retryable=isinstance(error, ConnectionError),
                                  unreachable=True) from None
            sock = connection.sock
            connection.sock = _Bounded(sock, deadline)
            try:
                raw, status, reply = self._exchange(connection, method, path, body, max_bytes)
            except TimeoutError:
                raise self._late() from None
            except (OSError, http.client.HTTPException, ValueError) as error:  # reset, cut off, malformed
                raise self._error(f"connection to {self.host} lost: {type(error).__name__} {error}",
                                  retryable=True) from None
        finally:
            connection.close()
            if sock is not None:
                sock.close()
        if status >= 300:
            raise self._status_error(status, reply, raw)
        try:
            return self._redacted(read_json(raw))
        except (ValueError, RecursionError) as error:
            raise self._error(f"the reply is not JSON localjudge takes ({error}): "
                              f"{printable(self.redact(raw[:ERROR_BYTES].decode('utf-8', 'replace')), MESSAGE_CHARS)}",
                              status=200) from None

    def _exchange(self, connection: http.client.HTTPConnection, method: str, path: str,
                  body: dict[str, Any] | None, max_bytes: int) -> tuple[bytes, int, http.client.HTTPResponse]:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        connection.request(method, self._prefix + path, body=data, headers=headers)
        reply = connection.getresponse()
        if 300 <= reply.status < 400:
            return b"", reply.status, reply
        limit = max_bytes if reply.status < 300 else ERROR_BYTES
        declared = reply.getheader("Content-Length", "")
        if reply.status < 300 and declared.isdigit() and int(declared) > limit:
            raise self._too_large(limit)
        chunks, size = [], 0
        while chunk := reply.read(min(CHUNK, limit + 1 - size)):
            size += len(chunk)
            chunks.append(chunk)
            if size > limit:
                if reply.status < 300:
                    raise self._too_large(limit)
                break  # an error reply: its start is enough
        if size <= limit and reply.length:  # closed before its Content-Length
            raise http.client.IncompleteRead(b"".join(chunks), reply.length)
        return b"".join(chunks), reply.status, reply

    def _status_error(self, status: int, reply: http.client.HTTPResponse, raw: bytes) -> ServerError:
        if 300 <= status < 400:
            where = reply.getheader("Location")
            return self._error(f"HTTP {status}: the server redirects{f' to {where}' if where else ''}; "
                               "redirects are not followed (the key goes to no other address): give the URL it "
                               "answers at", status=status)
        text = raw.decode("utf-8", "replace")
        try:  # OpenAI-style {"error": {"message": ...}} or {"message": ...}
            data = read_json(text)
            found = data.get("error", data) if isinstance(data, dict) else data
            text = str(found.get("message", found) if isinstance(found, dict) else found)
        except (ValueError, RecursionError):
            pass
        after = _seconds(reply.getheader("Retry-After"))
        return self._error(f"HTTP {status}: {text}", status=status, retryable=status in RETRY_STATUS,
                           retry_after=after)

    def _error(self, message: str, **options: Any) -> ServerError:
        """Every error the client raises: the key redacted, one printable line, cut short."""
        return ServerError(printable(self.redact(message), 2 * MESSAGE_CHARS), **options)

    def _late(self) -> ServerError:
        return self._error(f"no reply from {self.host} within {self.timeout:g} s", retryable=True)

    def _too_large(self, limit: int) -> ServerError:
        return self._error(f"the reply from {self.host} is larger than {limit} bytes, the cap for this request",
                           status=200)

    def _redacted(self, data: Any) -> Any:
        """The reply's JSON with the key replaced in every string (keys of objects too)."""
        if not self._key:
            return data
        if isinstance(data, str):
            return redact(data, [self._key], urls=False)
        if isinstance(data, list):
            return [self._redacted(item) for item in data]
        if isinstance(data, dict):
            return {redact(k, [self._key], urls=False): self._redacted(v) for k, v in data.items()}
        return data


def _seconds(value: str | None) -> float | None:
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


class _Bounded:
    """A connected socket whose every read and write must end by `deadline` (a monotonic time):
    each is given the time left as its timeout, and none starts once it has passed."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._deadline = sock, deadline

    def _left(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the attempt's deadline passed")
        self._sock.settimeout(left)
        return left

    def sendall(self, data: bytes) -> None:
        self._left()
        self._sock.sendall(data)

    def recv_into(self, buffer: Any, size: int = 0) -> int:
        self._left()
        return self._sock.recv_into(buffer, size)

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_Reader(self))

    def close(self) -> None:
        """Nothing: the reply may still be read; the attempt closes the socket when it ends."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _Reader(io.RawIOBase):
    def __init__(self, sock: _Bounded) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)

