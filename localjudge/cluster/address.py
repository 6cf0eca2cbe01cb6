"""Where `--ray ADDRESS` points, and what reaching that cluster from this machine needs.

Three things Ray 2.60 leaves to the caller when an address is named (`ray.init(address=...)`):
- **Nothing there.** Ray retries for minutes, printing a warning every few seconds, before
  "Failed to connect". A plain TCP connection, tried first, says it in one line at once.
- **A cluster on this machine started with token authentication.** `ray start --head` turns token
  authentication on when a token is stored here (`~/.ray/auth_token`, written by any earlier local
  `ray.init`), but `ray.init` enables it on the driver only for a cluster it finds itself, never
  for a named address: the named one then refuses the driver. For an address on this machine the
  driver takes the same rule as `ray start` (`RAY_AUTH_MODE` unset and a token stored: token mode).
  The token is never sent to another machine's address: there, `RAY_AUTH_MODE=token` is the
  user's to set.
- **A cluster on this machine bound to 127.0.0.1 only** (`ray start --node-ip-address=127.0.0.1`,
  docs/ray.md's single-machine recipe). Ray turns a loopback address back into the machine's
  own address, where nothing of that cluster listens; the driver then connects as the local
  cluster `ray_session` starts does (node address 127.0.0.1).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PROBE_SECONDS = 5.0
AUTH_MODE = "RAY_AUTH_MODE"
LOOPBACK_NAMES = ("localhost",)
AUTH_HINT = ("a cluster started with token authentication also needs RAY_AUTH_MODE=token here and its token "
             "(~/.ray/auth_token or RAY_AUTH_TOKEN): docs/ray.md")


@dataclass(frozen=True)
class Target:
    """A named cluster's host and port (the GCS port of ``HOST:PORT``, or Ray Client's of
    ``ray://HOST:PORT``)."""

    host: str
    port: int
    client: bool  # ray://: Ray Client, a proxy that carries the driver's calls

    @property
    def loopback(self) -> bool:
        if self.host.lower() in LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def target(address: str | None) -> Target | None:
    """The host and port `address` names; None for one Ray finds itself (None, "", "auto",
    "local") or a form this module does not read (then Ray's own messages speak)."""
    if not address or address in ("auto", "local"):
        return None
    text, client = (address[len("ray://"):], True) if address.startswith("ray://") else (address, False)
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit():
        return None
    return Target(host, int(port), client)


def unreachable(where: Target, seconds: float = PROBE_SECONDS) -> str | None:
    """Why nothing of a cluster answers at `where` (one line), or None when something accepts a
    connection there."""
    if _accepts(where.host, where.port, seconds):
        return None
    return (f"no Ray cluster answers at {where.host}:{where.port} (nothing accepts a connection there within "
            f"{seconds:g} s): start one with `ray start --head` (docs/ray.md), or give its address")


def bound_to_loopback(where: Target, node_ip: str) -> bool:
    """Whether a cluster named by a loopback address listens on loopback only: nothing of it
    at this machine's own address `node_ip`, where Ray would otherwise send the driver."""
    return where.loopback and not where.client and not _accepts(node_ip, where.port, PROBE_SECONDS)


def on_this_machine(where: Target, node_ip: str) -> bool:
    """Whether `where` names this machine: a loopback address or the machine's own (Ray's node
    address for it, `node_ip`)."""
    return where.loopback or where.host == node_ip


@contextlib.contextmanager
def local_token_auth(ray: Any) -> Iterator[None]:
    """Token mode on the driver while the block runs when, as for `ray start --head` here,
    `RAY_AUTH_MODE` is unset and a token is stored on this machine (Ray's own test, its warning
    kept out of the run's output); `RAY_AUTH_MODE` as before after. A token client connects to
    a cluster without authentication too."""
    saved = os.environ.get(AUTH_MODE)
    setup = getattr(getattr(ray._private, "authentication", None), "authentication_token_setup", None)
    if saved is None and setup is not None:
        quiet = logging.getLogger(setup.__name__)
        level, quiet.disabled = quiet.disabled, True
        try:
            setup.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
        finally:
            quiet.disabled = level
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(AUTH_MODE, None)
        else:
            os.environ[AUTH_MODE] = saved


def _accepts(host: str, port: int, seconds: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=seconds):
            return True
    except OSError:
        return False
