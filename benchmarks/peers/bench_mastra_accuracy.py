"""Does a parse guarantee change Mastra's accuracy, and which prompts judge better on one model?

Mastra's own scorers (@mastra/evals 1.10.2, benchmarks/peers/mastra/peer.mjs) on labeled rows
of localjudge's bundled benchmarks, their judge first vLLM's own OpenAI-compatible server, then
`localjudge serve` on vLLM's engine (the same weights, dtype and kernels, under localjudge's
grammar); beside them `localjudge bench --engine vllm --mode ensemble` on the same rows, which
reports localjudge's pipeline, direct and ensemble prob scores and the baselines.

Rows: the first `--rows` of each set (the sets alternate the classes, so an even count is
balanced). Each judgment Mastra could not score is counted by kind; Mastra's AUC is over the
rows it scored (its n says how many), and again with an unscored row read as the least
positive score (0), what a user who keeps the failures gets. Intervals: the bench's stratified
bootstrap (1,000 resamples, seed 0). Run it alone on the machine, from the repository root, with
.venv-vllm built and the Mastra peer set up (benchmarks/peers/setup_mastra_peer.sh):

    .venv/bin/python benchmarks/peers/bench_mastra_accuracy.py --model models/qwen2.5-coder-1.5b-instruct
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mastra import NODE, START_TIMEOUT, Side, outcomes, run_mastra, warm  # noqa: E402
from measure import markdown_table, write_json  # noqa: E402

from localjudge.bench.metrics import bootstrap_ci, roc_auc  # noqa: E402

VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
SETS = "halueval_qa:hallucination,toxigen:toxicity"  # benchmark:scorer (Mastra's scorer of the same name)


def peer_rows(benchmark: str, n: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The benchmark's first `n` rows as the peer reads them, and each row's label by run id."""
    path = ROOT / "localjudge" / "bench" / "bench_data" / benchmark / f"{benchmark}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:n]]
    return ([{"run_id": r["id"], "input": r["input"], "output": r["output"], "context": r["context"]} for r in rows],
            {str(r["id"]): int(r["label"]) for r in rows})


def figure(value: float | None, low: float | None = None, high: float | None = None) -> str:
    """'AUC [low, high]', 'AUC' without an interval, or '-' where undefined."""
    if value is None:
        return "-"
    return f"{value:.2f}" + ("" if low is None or high is None else f" [{low:.2f}, {high:.2f}]")


def shown(scores: list[float], labels: list[int]) -> str:
    """The AUC of `scores` against `labels`, with its bootstrap interval (`figure`)."""
    auc = roc_auc(scores, labels) if scores else None
    interval = bootstrap_ci(roc_auc, scores, labels) if auc is not None else None
    return figure(auc, *(interval or (None, None)))


def mastra_row(side: Side, scorer: str, labels: dict[str, int]) -> dict[str, str]:
    keys = [(run_id, scorer) for run_id in labels]
    scored = [k for k in keys if k in side.scores]
    _, failed = outcomes(side, keys)
    kept = [side.scores.get(k, 0.0) for k in keys]
    return {"judge": side.name, "scored": f"{len(scored)} of {len(keys)}",
            "AUC (rows scored)": shown([side.scores[k] for k in scored], [labels[k[0]] for k in scored]),
            "AUC (unscored as 0)": shown(kept, [labels[k[0]] for k in keys]),
            "seconds": f"{side.seconds:.0f}", "not scored, by kind": failed}


def mastra_side(server: Any, name: str, sets: list[tuple[str, str]], rows: dict[str, list[dict[str, Any]]],
                concurrency: int, cap: float, folder: Path) -> dict[str, Side]:
    """Mastra's scorer of each set on its rows, judged by `server` (started here, stopped after)."""
    server.start()
    try:
        print(f"{server.name} ready in {server.wait_ready(START_TIMEOUT):.0f} s", file=sys.stderr)
        warm(server.url)
        return {bench: run_mastra(server.url, rows[bench], concurrency, cap, folder / f"{name}-{bench}.err",
                                  name=name, scorers=(scorer,)) for bench, scorer in sets}
    finally:
        server.stop()


def run_vllm_server(model: Path, sets: list[tuple[str, str]], rows: dict[str, list[dict[str, Any]]],
                    concurrency: int, cap: float, folder: Path) -> dict[str, Side]:
    from tests.server.vllm_server import VLLMServer

    server = VLLMServer(model, folder / "vllm-server.log", served="judge")
    return mastra_side(server, "Mastra on vLLM's server", sets, rows, concurrency, cap, folder)


def run_serve(model: Path, sets: list[tuple[str, str]], rows: dict[str, list[dict[str, Any]]],
              concurrency: int, cap: float, folder: Path) -> dict[str, Side]:
    from tests.serve.serve_process import ServeProcess

    server = ServeProcess(folder / "serve.log", "--engine", "vllm", model=model, python=str(VLLM_PYTHON))
    return mastra_side(server, "Mastra on localjudge serve (vLLM engine)", sets, rows, concurrency, cap, folder)


def run_localjudge(model: Path, sets: list[tuple[str, str]], n: int, folder: Path) -> tuple[dict[str, Any], float]:
    """`localjudge bench --mode ensemble` on the same rows (vLLM's engine): its report.json and seconds."""
    out = folder / "bench"
    command = [str(VLLM_PYTHON), "-m", "localjudge.cli", "bench", "--engine", "vllm", "--model", str(model),
               "--benchmark", ",".join(b for b, _ in sets), "--limit", str(n), "--mode", "ensemble",
               "--out-dir", str(out), "--no-html"]
    began = time.monotonic()
    with open(folder / "bench.log", "wb") as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    return json.loads((out / "report.json").read_text(encoding="utf-8")), time.monotonic() - began


def localjudge_rows(report: dict[str, Any], benchmark: str, seconds: float) -> list[dict[str, str]]:
    """The judge rows (pipeline, direct and ensemble prob scores, the ensemble's score) and the
    baselines of one benchmark."""
    result = next(r for r in report["results"] if r["benchmark"] == benchmark)
    names = {"pipeline prob score": "localjudge pipeline (prob score)",
             "direct prob score": "localjudge direct (prob score)",
             "judge prob score": "localjudge ensemble (prob score)", "judge score": "localjudge ensemble (score)"}
    rows = []
    for row in result["table"]:
        if row["kind"] == "judge" and row["name"] not in names:
            continue
        auc = row["auc"]
        name = names.get(row["name"], f"baseline: {row['name']}")
        rows.append({"judge": name, "scored": f"{row['n']} of {result['rows']}" if row["kind"] == "judge"
                     else str(row["n"]), "AUC (rows scored)": figure(auc["value"], auc["low"], auc["high"]),
                     "AUC (unscored as 0)": "",
                     "seconds": f"{seconds:.0f} (all modes, both sets)" if row["kind"] == "judge" else "",
                     "not scored, by kind": ""})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--sets", default=SETS, help="benchmark:scorer,... (Mastra's scorer of that name)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--cap", type=float, default=1500.0, help="seconds before a Mastra run on one set is stopped")
    parser.add_argument("--sides", default="vllm,serve,localjudge")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not NODE.exists():
        raise SystemExit("no benchmarks/peers/mastra/node_modules: run bash benchmarks/peers/setup_mastra_peer.sh")
    from tests import machine

    sets_ = [(b.strip(), s.strip()) for b, _, s in (item.partition(":") for item in args.sets.split(","))]
    model = args.model.resolve()
    wanted = {s.strip() for s in args.sides.split(",")}
    folder = Path(tempfile.mkdtemp(prefix="localjudge-mastra-accuracy-"))
    rows: dict[str, list[dict[str, Any]]] = {}
    labels: dict[str, dict[str, int]] = {}
    for bench, _ in sets_:
        rows[bench], labels[bench] = peer_rows(bench, args.rows)
    sides: list[dict[str, Side]] = []
    if "vllm" in wanted:
        sides.append(run_vllm_server(model, sets_, rows, args.concurrency, args.cap, folder))
    if "serve" in wanted:
        sides.append(run_serve(model, sets_, rows, args.concurrency, args.cap, folder))
    report, seconds = run_localjudge(model, sets_, args.rows, folder) if "localjudge" in wanted else ({}, 0.0)
    print(f"{model.name}, {args.rows} rows a set, {args.concurrency} Mastra jobs in flight, {machine.cpu()}; "
          f"logs in {folder}")
    tables = {}
    for bench, scorer in sets_:
        table = [mastra_row(side[bench], scorer, labels[bench]) for side in sides]
        if report:
            table += localjudge_rows(report, bench, seconds)
        tables[bench] = table
        print(f"\n{bench} ({scorer}), {len(labels[bench])} rows, {sum(labels[bench].values())} positive\n")
        print(markdown_table(table))
        for side in sides:
            for kind, error in side[bench].errors.items():
                print(f"{side[bench].name}, {kind}: {error}")
    if args.json:
        write_json(args.json, {"model": str(args.model), "rows": args.rows, "cpu": machine.cpu(), "tables": tables,
                               "mastra": {bench: {side[bench].name: {k[0]: v for k, v in side[bench].scores.items()}
                                                  for side in sides} for bench, _ in sets_}})


if __name__ == "__main__":
    main()
