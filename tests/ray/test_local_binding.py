"""The local cluster `localjudge score --ray` starts itself listens on 127.0.0.1 only, and an actor
that cannot start is one line on the driver's terminal, not Ray's pages of traceback.

Each check runs a fresh driver process (the tier's own cluster is another, started by the tests):
it opens `ray_session()` with no address and no cluster to find, reads the listening sockets of
its own process tree with ``ss -ltnp``, then runs `evaluate_on_ray` on a judge that cannot load.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = textwrap.dedent('''
    import json, os, re, subprocess
    from localjudge.cluster import ClusterError, ScorerSpec, evaluate_on_ray, ray_session
    from tests.ray.test_faults import rows, unloadable_judge

    def in_tree(pid):
        while pid > 1:
            if pid == os.getpid():
                return True
            try:
                pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
            except OSError:
                return False
        return False

    with ray_session() as ray:
        ray.get(ray.remote(lambda: 1).remote())  # a worker up too
        found = [line.split()[3] for line in subprocess.run(["ss", "-ltnpH"], capture_output=True,
                                                            text=True).stdout.splitlines()
                 if any(in_tree(int(p)) for p in re.findall(r"pid=(\\d+)", line))]
        print("LISTENING " + json.dumps(found), flush=True)
        try:
            evaluate_on_ray(rows()[:2], [ScorerSpec("toxicity")], unloadable_judge, batch_size=1)
        except ClusterError as error:
            print("CLUSTER ERROR " + str(error), flush=True)
''')


def loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "::ffff:127.0.0.1", "::1")


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read listening sockets")
def test_a_local_cluster_listens_on_loopback_and_a_dead_actor_is_one_line() -> None:
    pytest.importorskip("ray.data", reason="ray is not installed: run scripts/setup_ray.sh (the ray extra)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}  # no cluster to find: a new one
    done = subprocess.run([sys.executable, "-c", DRIVER], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    out = done.stdout.splitlines()
    listening = json.loads(next(line for line in out if line.startswith("LISTENING "))[len("LISTENING "):])
    assert listening and all(loopback(a) for a in listening), listening  # gcs_server, raylet, agents, workers
    error = next(line for line in out if line.startswith("CLUSTER ERROR "))
    assert "ValueError: model path '/elsewhere/model' does not exist." in error
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    assert len(done.stderr.splitlines()) <= 5, done.stderr  # Ray's own start-up notes at most
