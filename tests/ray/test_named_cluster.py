"""`localjudge score --ray 127.0.0.1:PORT` against a cluster started as docs/ray.md's single-machine
recipe starts it (`ray start --head --node-ip-address=127.0.0.1`), on a machine with a stored Ray
token, so that `ray start` turns token authentication on: the named cluster is reached (Ray
itself enables the token only for a cluster it finds, and sends a loopback address to the
machine's own address), and every socket of that cluster listens on loopback. A port where no
cluster listens is one line at once, not minutes of Ray's retries.

The cluster runs in its own process group, with its own HOME (the token) and temp folder, and is
killed at the end: never `ray stop`, which would end the tier's own cluster too.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.ray.test_local_binding import loopback

ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).with_name("ray")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_env(home: Path) -> dict[str, str]:
    """This environment without Ray's settings (no cluster to find, no auth mode), HOME `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return {**env, "HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"}


@pytest.fixture
def token_cluster(tmp_path: Path) -> Iterator[tuple[int, Path, int]]:
    """A head node bound to 127.0.0.1 with token authentication on: its GCS port, HOME and
    process group."""
    pytest.importorskip("ray.data", reason="ray is not installed: run scripts/setup_ray.sh (the ray extra)")
    if not RAY.exists():
        pytest.skip(f"no ray command beside {sys.executable}")
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    port = free_port()
    # /tmp/lj-<n>: Ray's socket paths must stay short (107 bytes), pytest's tmp_path can be long
    temp = Path(f"/tmp/lj-ray-{port}")
    head = subprocess.Popen(
        [str(RAY), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
         "--include-dashboard=false", "--num-cpus=1", f"--temp-dir={temp}"],
        env={**clean_env(home), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not accepts(port):
            assert head.poll() is None and time.monotonic() < deadline, "ray start --head did not come up"
            time.sleep(0.5)
        yield port, home, head.pid
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait(30)
        shutil.rmtree(temp, ignore_errors=True)


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def score(address: str, home: Path, out: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "localjudge.cli", "score", "--ray", address, "--scorer", "content_similarity",
         "--data", str(EXAMPLES / "example.jsonl"), "--limit", "3", "--out", str(out)],
        cwd=ROOT, env=clean_env(home), capture_output=True, text=True, timeout=timeout)


def cluster_sockets(group: int) -> list[str]:
    """The listening addresses of the processes of process group `group` (the cluster's)."""
    pids = set(subprocess.run(["pgrep", "-g", str(group)], capture_output=True, text=True).stdout.split())
    lines = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout.splitlines()
    return [line.split()[3] for line in lines if set(re.findall(r"pid=(\d+)", line)) & pids]


@pytest.mark.skipif(shutil.which("ss") is None or shutil.which("pgrep") is None, reason="needs ss and pgrep")
def test_a_named_loopback_cluster_with_token_auth_is_reached(token_cluster: tuple[int, Path, int],
                                                             tmp_path: Path) -> None:
    port, home, group = token_cluster
    done = score(f"127.0.0.1:{port}", home, tmp_path / "out.jsonl", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(row["content_similarity_score"] is not None for row in rows)
    found = cluster_sockets(group)
    assert len(found) >= 3 and all(loopback(address) for address in found), found


def test_an_address_where_nothing_listens_is_one_line_at_once(tmp_path: Path) -> None:
    pytest.importorskip("ray.data", reason="ray is not installed: run scripts/setup_ray.sh (the ray extra)")
    started = time.monotonic()
    done = score(f"127.0.0.1:{free_port()}", tmp_path, tmp_path / "out.jsonl", timeout=60)
    assert done.returncode != 0 and time.monotonic() - started < 45
    lines = done.stderr.splitlines()  # the judge line ("judge: none ..."), then the error
    assert lines[-1].startswith("localjudge: error: no Ray cluster answers at 127.0.0.1:"), done.stderr
    assert len(lines) == 2 and "Traceback" not in done.stderr, done.stderr
