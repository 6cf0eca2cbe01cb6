"""Opening Mastra's storage: a LibSQL/SQLite file (Python's sqlite3, `localjudge.mastra_store.sqlite`)
or PostgreSQL (psycopg, the optional `postgres` extra, imported only when a `postgresql://` URL is
opened: `localjudge.mastra_store.postgres`), both behind one small interface
(`localjudge.mastra_store.interface`, whose names are also here).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from localjudge.credentials import redact, url_secrets
from localjudge.mastra_store.interface import LOCK_RETRIES, LOCK_SECONDS, Store, StoreError
from localjudge.mastra_store.postgres import PostgresStore
from localjudge.mastra_store.sqlite import SqliteStore

__all__ = ["LOCK_RETRIES", "LOCK_SECONDS", "PostgresStore", "SqliteStore", "Store", "StoreError", "open_store",
           "opened"]


def open_store(url: str) -> Store:
    """Open Mastra's storage at `url`: ``file:PATH`` (LibSQL's local file) or ``postgresql://...``.

    Raises:
        StoreError: an unknown URL scheme, a file that does not exist, a server that refuses; its
            message shows no secret of the URL (`localjudge.credentials`: ``user:***@``,
            ``?password=***``, nor the password alone as a driver may quote it).
    """
    try:
        return _open(url)
    except StoreError as error:
        raise StoreError(redact(str(error), url_secrets(url))) from None


def _open(url: str) -> Store:
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "file":
        return SqliteStore(_file_path(url))
    if scheme in ("postgres", "postgresql"):
        return PostgresStore(url)
    if scheme in ("libsql", "http", "https", "ws", "wss"):
        raise StoreError(f"{scheme}:// stores (a remote LibSQL/Turso server) are not read: give a local file: URL "
                         "or a postgresql:// URL")
    raise StoreError(f"unknown Mastra store URL {url!r}: give file:PATH (LibSQL) or postgresql://...")


def _file_path(url: str) -> Path:
    """The path of a LibSQL ``file:`` URL: ``file:./mastra.db``, ``file:/abs/mastra.db`` or
    ``file:///abs/mastra.db`` (query parameters dropped)."""
    rest = url[len("file:"):].split("?", 1)[0]
    if rest.startswith("//"):  # file://HOST/PATH: only the local host
        host, _, tail = rest[2:].partition("/")
        if host not in ("", "localhost"):
            raise StoreError(f"{url}: a file: URL on another host ({host}) is not read")
        rest = "/" + tail
    path = Path(rest)
    if not path.is_file():
        raise StoreError(f"no Mastra store at {path}: the file does not exist")
    return path


@contextmanager
def opened(url: str) -> Iterator[Store]:
    """`open_store` as a context manager: closed at the end."""
    store = open_store(url)
    try:
        yield store
    finally:
        store.close()
