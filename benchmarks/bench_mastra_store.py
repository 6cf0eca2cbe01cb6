"""Time each phase of scoring a Mastra app's storage: the app writing its runs (Node, the storage
tier's mock-model app, run `--apps` times into one LibSQL file), reading and checking them,
scoring them (a scripted judge: the figures are localjudge's own overhead, not a model's),
writing the score rows, writing them again (nothing new), and Mastra's storage API reading them
back. Prints a markdown table; needs `scripts/setup_node.sh`. Not a test.

    .venv/bin/python benchmarks/bench_mastra_store.py --apps 4
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from localjudge.evaluation import score_runs
from localjudge.judge import FakeJudge
from localjudge.mastra_store import (
    SCORES,
    SPANS,
    check_tables,
    judged_results,
    open_store,
    read_agent_runs,
    write_scores,
)
from localjudge.scorers import build_scorer

ROOT = Path(__file__).resolve().parents[1]
NODE = ROOT / "tests" / "differential" / "node" / "node_modules" / ".bin" / "node"
SCRIPTS = ROOT / "tests" / "storage" / "node_scripts"
ANSWERS = {"Claims": lambda prompt: {"claims": ["A claim."]},
           "HallucinationVerdicts": lambda prompt: {"verdicts": [{"verdict": "supported", "reason": "r"}]},
           "RelevancyVerdicts": lambda prompt: {"verdicts": [{"verdict": "yes", "reason": "r"}]},
           "Statements": lambda prompt: {"statements": ["A statement."]},
           "Reason": lambda prompt: {"reason": "r"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=4, help="times the app writes its runs (7 agent runs each)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        url = f"file:{folder}/mastra.db"

        def timed(what: str, step):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            value = step()
            rows.append((what, time.perf_counter() - start))
            return value

        for i in range(args.apps):
            timed(f"app run {i + 1} (Node: start, 5 agent calls, a 2-item experiment)",
                  lambda: subprocess.run([str(NODE), str(SCRIPTS / "mastra_app.mjs"), url], check=True,
                                         capture_output=True))
        store = open_store(url)
        columns = timed("open and check the schema", lambda: check_tables(store, (SPANS, SCORES)))
        runs = timed("read the agent runs", lambda: read_agent_runs(store))
        judge = FakeJudge(ANSWERS)
        scorers = [build_scorer(name, judge) for name in ("hallucination", "answer_relevancy")]
        results, _ = timed("score (scripted judge, 2 scorers)", lambda: score_runs(runs, scorers))
        judged = judged_results(runs, results, scorers)
        written = timed("write the score rows (one transaction)", lambda: write_scores(store, judged, columns[SCORES]))
        again = timed("write again (nothing new)", lambda: write_scores(store, judged, columns[SCORES]))
        store.close()
        query = {"runIds": sorted({r["run_id"] for r in runs})}
        timed("Mastra's API reads them back (Node: start, listScoresByRunId each)",
              lambda: json.loads(subprocess.run([str(NODE), str(SCRIPTS / "read_scores.mjs"), url], check=True,
                                                capture_output=True, text=True, input=json.dumps(query)).stdout))
    print(f"{len(runs)} agent runs, {written} score rows written, {again} on the second write\n")
    print("| phase | seconds |\n|---|---|")
    for what, seconds in rows:
        print(f"| {what} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
