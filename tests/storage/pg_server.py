"""A throwaway PostgreSQL server for the storage tier: Debian's postgresql (scripts/setup_postgres.sh),
a new cluster in a temporary folder (owned by the `postgres` user when run as root), listening on 127.0.0.1 only (a
free port, its socket in the same folder), trust authentication, stopped and removed at the end.

PostgreSQL refuses to run as root, so when the tests run as root, initdb and pg_ctl run as the
`postgres` user (`runuser`); otherwise as the current user.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

BIN_ROOT = Path("/usr/lib/postgresql")


def pg_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian's layout), or None."""
    found = sorted((p for p in BIN_ROOT.glob("*/bin") if (p / "pg_ctl").exists()),
                   key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    return found[-1] if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    folder: Path
    port: int
    bin: Path

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_owner(self, *command: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)

    def _run(self, *command: str) -> None:
        done = subprocess.run(self._as_owner(*command), capture_output=True, text=True)
        if done.returncode != 0:
            log = self.folder / "server.log"
            raise RuntimeError(f"{Path(command[0]).name} failed ({done.returncode}): {done.stderr[-2000:]}"
                               f"{log.read_text()[-2000:] if log.exists() else ''}")

    def start(self) -> None:
        data = self.folder / "data"
        self._run(str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-t", "60",
                  "-l", str(self.folder / "server.log"), "start")

    def stop(self) -> None:
        data = self.folder / "data"
        if data.exists():
            subprocess.run(self._as_owner(str(self.bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                                          "stop"), capture_output=True)


def start_server() -> PgServer:
    """A new server in a fresh folder of its own under the system's temporary folder (not pytest's,
    which other pytest sessions on the machine may rotate away), owned by the `postgres` user when
    running as root. `stop` it, then remove `folder`."""
    binary = pg_bin()
    if binary is None:
        raise RuntimeError("PostgreSQL is not installed: run scripts/setup_postgres.sh")
    folder = Path(tempfile.mkdtemp(prefix="localjudge-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    server = PgServer(folder, _free_port(), binary)
    try:
        server.start()
    except BaseException:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return server
