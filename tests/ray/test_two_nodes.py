"""Two Ray nodes on one machine: a worker node killed mid-run and another joining.

Ray's own multi-node test support (`ray.cluster_utils.Cluster`: each node its own raylet and
object store, the processes of a real node) in a driver process of its own, every node bound to
127.0.0.1 (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, as the local cluster `--ray` starts). Two nodes
of one CPU each; `evaluate_on_ray` with two actors on the scripted fake judge, slowed to 0.4 s a
call, one row a batch; each call writes which node made it and for which rows (`calls.jsonl`).
Once the worker node has judged, a thread removes that node at once (its raylet, object store and
the actor's process killed: `remove_node(allow_graceful=False)`) and adds a new one. The run must
finish with every row once, each scored, nothing lost; a row the dead node began and did not end
is scored elsewhere; the node that joined mid-run takes work. Dead nodes are noticed in about a
second (`FAST_HEALTH`), not Ray's default 15-30 s.

Not tested here: nodes on separate machines (the network between them), a head node lost (Ray
cannot survive that without GCS fault tolerance), GPUs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from localjudge.evaluation import read_table
from localjudge.judge import Judge
from tests.conftest import EXAMPLES
from tests.fakes import make_fake_judge

ROOT = Path(__file__).resolve().parents[2]
ROWS = 16
FAST_HEALTH = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "2"}
DRIVER = textwrap.dedent('''
    import functools, json, sys, threading, time
    from pathlib import Path
    from ray.cluster_utils import Cluster
    from localjudge.cluster import ScorerSpec, evaluate_on_ray
    from localjudge.evaluation import ResultStore, write_table
    from tests.ray.test_two_nodes import calls, node_judge, rows

    folder = Path(sys.argv[1])
    node = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 100 * 2**20}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    worker = cluster.add_node(**node)
    events, result = {}, []

    def run():
        result.append(evaluate_on_ray(rows(), [ScorerSpec("toxicity")], functools.partial(node_judge, folder),
                                      address=cluster.address, judges=2, batch_size=1,
                                      store=ResultStore(folder / "log"), max_retries=3))

    # the run in a thread: adding a node sets signal handlers, which only the main thread may
    scoring = threading.Thread(target=run, daemon=True)
    scoring.start()
    try:
        while scoring.is_alive() and not any(c["node"] == worker.node_id for c in calls(folder)):
            time.sleep(0.05)
        if scoring.is_alive():
            cluster.remove_node(worker, allow_graceful=False)
            events["killed_at"], events["dead"] = len(calls(folder)), worker.node_id
            events["joined"] = cluster.add_node(**node).node_id
        scoring.join(240)
        write_table(result[0].dataset, folder / "out.jsonl")
        (folder / "events.json").write_text(json.dumps(events))
    finally:
        cluster.shutdown()
''')


def rows() -> list[dict[str, Any]]:
    """The example rows, twice over, each output marked with its row number."""
    examples = [dict(r) for r in read_table(EXAMPLES / "example.jsonl")]
    return [{**examples[i % len(examples)], "output": f"[row {i}] {examples[i % len(examples)]['output']}"}
            for i in range(ROWS)]


def node_judge(folder: Path) -> Judge:
    """The fake judge in an actor: 0.4 s a call, each call's node and rows written to
    `folder/calls.jsonl` when it starts and when it ends."""
    import ray

    judge, node = make_fake_judge(), ray.get_runtime_context().get_node_id()
    generate = judge.generate

    def logged(prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        text = json.dumps([list(p) for p in prompts])
        ids = sorted(i for i in range(ROWS) if f"[row {i}]" in text)
        note(folder, {"node": node, "rows": ids, "at": "start"})
        time.sleep(0.4)
        answers = generate(prompts, schemas, max_new_tokens=max_new_tokens)
        note(folder, {"node": node, "rows": ids, "at": "end"})
        return answers

    judge.generate = logged  # type: ignore[method-assign]
    return judge


def note(folder: Path, event: dict[str, Any]) -> None:
    with open(folder / "calls.jsonl", "a") as calls:
        calls.write(json.dumps(event) + "\n")


def calls(folder: Path) -> list[dict[str, Any]]:
    path = folder / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_node_killed_mid_run_loses_nothing_and_a_node_joining_takes_work(tmp_path: Path) -> None:
    pytest.importorskip("ray.data", reason="ray is not installed: run scripts/setup_ray.sh (the ray extra)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}  # no cluster to find
    env.update({"HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
                "PYTHONPATH": str(ROOT), **FAST_HEALTH})
    done = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    events = json.loads((tmp_path / "events.json").read_text())
    assert events, "the worker node judged nothing before the run ended: nothing was killed"
    dead, killed_at, joined = events["dead"], events["killed_at"], events["joined"]
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(out) == ROWS and all(f"[row {i}]" in row["output"] for i, row in enumerate(out))  # each once, in order
    assert all(row["toxicity_score"] is not None for row in out), [row["toxicity_error"] for row in out]
    keys = [json.loads(line)["key"] for line in (tmp_path / "log" / "rank-0.jsonl").read_text().splitlines()]
    assert len(keys) == len(set(keys)) == ROWS  # nothing stored twice
    judged = calls(tmp_path)
    on_dead = [c for c in judged[:killed_at] if c["node"] == dead]
    assert on_dead and on_dead[-1]["at"] == "start", "the killed node had no call in flight"
    cut = on_dead[-1]["rows"]
    assert any(c["node"] != dead and c["rows"] == cut for c in judged[killed_at:])  # its rows judged again elsewhere
    assert any(c["node"] == joined for c in judged[killed_at:]), "the node that joined mid-run judged nothing"
