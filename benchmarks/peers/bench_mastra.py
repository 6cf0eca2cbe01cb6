"""Mastra's published scorers and localjudge's server engine, side by side against one vLLM server;
and Mastra's same scorers through `localjudge serve`.

The setup a Mastra user builds instead of installing localjudge, and localjudge on the same
server, rows and concurrency (issue 50 item 3):

1. One vLLM CPU server from .venv-vllm, started as the server tier starts it
   (tests/server/vllm_server.py), on `--model`; one short chat request, untimed, warms it.
2. Mastra's side (benchmarks/peers/mastra/peer.mjs, under the pinned Node 22 of
   benchmarks/peers/setup_mastra_peer.sh): @mastra/evals 1.10.2's hallucination, faithfulness
   and toxicity scorers, the judge the AI SDK's OpenAI-compatible provider, each (row, scorer)
   one job, `--concurrency` jobs at a time. Mastra sends chat messages, one request per step.
3. localjudge's side: ``localjudge score --engine server`` on the same rows and scorers,
   ``--concurrency`` requests in flight (token ids on ``/v1/completions``, the grammar on the
   server).

4. Mastra's side again, the same script and rows, its judge `localjudge serve` on the same model,
   started after the vLLM server is stopped, once per engine and concurrency of `--serve-runs`
   (default: transformers at 8 then 1 jobs in flight; vllm, from .venv-vllm: vLLM's CPU engine
   under localjudge's grammar, at 8), each stopped at `--serve-cap`. `--sides` picks the sides.

Each side is timed from its process start (Node loading Mastra; the CLI loading the tokenizer)
to its last judgment; time to first judgment is when the first one is done (Mastra: a job's
line; localjudge: the first line of its resume log, a batch stored). A side still running at its
cap (`--mastra-cap`, `--localjudge-cap`) is stopped and its unfinished judgments counted as
such. Failures are counted by kind; agreement is over the judgments both sides scored (scores
equal to 2 decimals, as both round). Run it alone (nothing else busy), from the repository root:

    .venv/bin/python benchmarks/peers/bench_mastra.py --model models/smollm2-135m-instruct --concurrency 8
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from measure import EXAMPLE_DATA, markdown_table, write_json  # noqa: E402

PEER = ROOT / "benchmarks" / "peers" / "mastra"
NODE = PEER / "node_modules" / ".bin" / "node"
SCORERS = ("hallucination", "faithfulness", "toxicity")
SERVED = "judge"  # the name the model is served under, on both sides
START_TIMEOUT = 600.0  # seconds for the server to answer (a cold compile ~4 minutes on 2 busy cores)


@dataclass
class Side:
    """One side's run: every judgment's outcome ("scored" or a failure kind) and score."""

    name: str
    seconds: float = 0.0
    first: float | None = None  # seconds to the first judgment done
    capped: bool = False
    outcomes: dict[tuple[str, str], str] = field(default_factory=dict)  # (run_id, scorer) -> kind
    scores: dict[tuple[str, str], float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # one example message per failure kind
    messages: dict[tuple[str, str], str] = field(default_factory=dict)  # every failure's message
    requests: str = ""  # the requests the server answered for this side, by endpoint and status

    def record(self, key: tuple[str, str], kind: str, score: float | None, error: str | None) -> None:
        self.outcomes[key] = kind
        if score is not None:
            self.scores[key] = score
        if error:
            self.messages[key] = error
            self.errors.setdefault(kind, error[:300])


def requests_since(log: Path, start: int) -> tuple[str, int]:
    """The requests in the server's access log after byte `start` (``POST /v1/chat/completions 200``
    and so on, counted), and the log's size now."""
    text = log.read_bytes()
    found = re.findall(r'"POST (/v1/\S+) HTTP/[\d.]+" (\d+)', text[start:].decode(errors="replace"))
    counts = Counter(f"{path} {status}" for path, status in found)
    return ", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "none", len(text)


def read_rows(path: Path, n: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows or any("run_id" not in r for r in rows):
        raise SystemExit(f"{path}: need JSONL rows, each with a run_id")
    return rows[:n]


def warm(url: str) -> None:
    """One short chat request, so neither side pays the server's first request."""
    body = {"model": SERVED, "messages": [{"role": "user", "content": "Say yes."}], "max_tokens": 4}
    request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as reply:
        reply.read()


def run_mastra(url: str, rows: list[dict[str, Any]], concurrency: int, cap: float, log: Path,
               name: str = "Mastra (@mastra/evals 1.10.2, AI SDK openai-compatible)",
               scorers: tuple[str, ...] = SCORERS) -> Side:
    side = Side(name)
    spec = {"baseURL": url, "model": SERVED, "concurrency": concurrency, "scorers": list(scorers), "rows": rows}
    began = time.monotonic()
    with open(log, "wb") as err:
        process = subprocess.Popen([str(NODE), "peer.mjs"], cwd=PEER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=err, text=True)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(spec))
        process.stdin.close()
        timer = _Killer(process, cap)
        for line in process.stdout:  # one line per judgment, as each is done
            item = json.loads(line)
            side.first = side.first if side.first is not None else time.monotonic() - began
            side.record((str(item["run_id"]), item["scorer"]), item["kind"], item.get("score"), item.get("error"))
        process.wait()
        side.capped = timer.cancel()
    side.seconds = time.monotonic() - began
    return side


def run_localjudge(url: str, data: Path, tokenizer: Path, concurrency: int, timeout: float, cap: float,
                   folder: Path) -> Side:
    side = Side("localjudge --engine server")
    out = folder / "localjudge.jsonl"
    log = folder / "localjudge.jsonl.progress" / "rank-0.jsonl"
    command = [sys.executable, "-m", "localjudge.cli", "score", "--engine", "server", "--base-url", url,
               "--tokenizer", str(tokenizer), "--scorer", ",".join(SCORERS), "--data", str(data),
               "--concurrency", str(concurrency), "--request-timeout", str(int(timeout)), "--out", str(out)]
    began = time.monotonic()
    with open(folder / "localjudge.err", "wb") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        while process.poll() is None:
            if side.first is None and log.exists() and log.stat().st_size:
                side.first = time.monotonic() - began
            if time.monotonic() - began > cap:
                process.kill()
                side.capped = True
            time.sleep(0.05)
    side.seconds = time.monotonic() - began
    if process.returncode != 0 and not side.capped:
        raise SystemExit(f"localjudge score failed ({process.returncode}): see {folder / 'localjudge.err'}")
    for line in out.read_text(encoding="utf-8").splitlines() if out.exists() else []:
        row = json.loads(line)
        for name in SCORERS:
            score, kind = row[f"{name}_score"], row[f"{name}_error_kind"]
            side.record((str(row["run_id"]), name), "scored" if score is not None else str(kind), score,
                        row[f"{name}_error"])
    return side


class _Killer:
    """Kills `process` once `cap` seconds have passed; `cancel` says whether it did."""

    def __init__(self, process: subprocess.Popen[str], cap: float) -> None:
        import threading

        self._fired = threading.Event()
        self._timer = threading.Timer(cap, self._kill, args=(process,))
        self._timer.daemon = True
        self._timer.start()

    def _kill(self, process: subprocess.Popen[str]) -> None:
        self._fired.set()
        process.kill()

    def cancel(self) -> bool:
        self._timer.cancel()
        return self._fired.is_set()


def outcomes(side: Side, keys: list[tuple[str, str]]) -> tuple[int, str]:
    """How many of `keys` the side scored, and the others counted by kind ("none" when none)."""
    kinds = Counter(side.outcomes.get(key, "unfinished at the cap") for key in keys)
    scored = kinds.pop("scored", 0)
    return scored, ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "none"


def summary(side: Side, keys: list[tuple[str, str]], rows: int) -> dict[str, Any]:
    scored, failed = outcomes(side, keys)
    return {"side": side.name, "scored": f"{scored} of {len(keys)}", "seconds": f"{side.seconds:.1f}",
            "rows/s": f"{rows / side.seconds:.3f}",
            "first judgment (s)": "-" if side.first is None else f"{side.first:.1f}", "not scored, by kind": failed}


def as_json(side: Side) -> dict[str, Any]:
    keyed = {part: {f"{k[0]}/{k[1]}": v for k, v in getattr(side, part).items()}
             for part in ("outcomes", "scores", "messages")}
    return {**asdict(side), **keyed}


def run_serve(model: Path, rows: list[dict[str, Any]], concurrencies: list[int], cap: float,
              folder: Path, engine: str = "transformers") -> list[Side]:
    """Mastra's side against `localjudge serve` on `model` and `engine` (vllm: from .venv-vllm),
    once per concurrency (one server)."""
    from tests.serve.serve_process import ServeProcess

    python = str(ROOT / ".venv-vllm" / "bin" / "python") if engine == "vllm" else sys.executable
    flags = ("--engine", "vllm") if engine == "vllm" else ()
    server = ServeProcess(folder / f"serve-{engine}.log", *flags, model=model, python=python)
    server.start()
    sides = []
    try:
        ready = server.wait_ready(START_TIMEOUT)
        warm(server.url)
        print(f"localjudge serve ready in {ready:.0f} s", file=sys.stderr)
        for concurrency in concurrencies:
            sides.append(run_mastra(server.url, rows, concurrency, cap, folder / f"serve-{engine}-{concurrency}.err",
                                    name=f"Mastra through localjudge serve ({engine}), {concurrency} in flight"))
    finally:
        server.stop()
    return sides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=ROOT / "models" / "smollm2-135m-instruct")
    parser.add_argument("--data", type=Path, default=EXAMPLE_DATA)
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--request-timeout", type=float, default=300.0,
                        help="localjudge's per-request timeout (Node's fetch gives up on a reply after 300 s)")
    parser.add_argument("--mastra-cap", type=float, default=420.0, help="seconds before Mastra's side is stopped")
    parser.add_argument("--localjudge-cap", type=float, default=300.0)
    parser.add_argument("--sides", default="mastra,localjudge,serve",
                        help="comma-separated: mastra (Mastra on vLLM), localjudge (--engine server on vLLM), serve "
                             "(Mastra on localjudge serve)")
    parser.add_argument("--serve-runs", default="transformers:8,1;vllm:8",
                        help="the serve side's runs: ENGINE:CONCURRENCY,... separated by ';', one server per engine "
                             "(vllm: from .venv-vllm)")
    parser.add_argument("--serve-cap", type=float, default=300.0, help="seconds before a serve run is stopped")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    wanted = {s.strip() for s in args.sides.split(",") if s.strip()}
    if not NODE.exists():
        raise SystemExit("no benchmarks/peers/mastra/node_modules: run bash benchmarks/peers/setup_mastra_peer.sh")
    from tests import machine
    from tests.server.vllm_server import VLLMServer

    rows = read_rows(args.data, args.rows)
    keys = [(str(r["run_id"]), name) for r in rows for name in SCORERS]
    folder = Path(tempfile.mkdtemp(prefix="localjudge-mastra-peer-"))
    data = folder / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sides: list[Side] = []
    if wanted & {"mastra", "localjudge"}:
        server = VLLMServer(args.model.resolve(), folder / "server.log", served=SERVED)
        server.start()
        try:
            ready = server.wait_ready(START_TIMEOUT)
            warm(server.url)
            print(f"server ready in {ready:.0f} s; logs in {folder}", file=sys.stderr)
            _, mark = requests_since(server.log_path, 0)
            if "mastra" in wanted:
                sides.append(run_mastra(server.url, rows, args.concurrency, args.mastra_cap, folder / "mastra.err"))
                sides[-1].requests, mark = requests_since(server.log_path, mark)
            if "localjudge" in wanted:
                sides.append(run_localjudge(server.url, data, args.model.resolve(), args.concurrency,
                                            args.request_timeout, args.localjudge_cap, folder))
                sides[-1].requests, _ = requests_since(server.log_path, mark)
        finally:
            server.stop()
    if "serve" in wanted:
        for run in [r.strip() for r in args.serve_runs.split(";") if r.strip()]:
            engine, _, levels = run.partition(":")
            concurrencies = [int(c) for c in (levels or "8").split(",") if c.strip()]
            sides += run_serve(args.model.resolve(), rows, concurrencies, args.serve_cap, folder, engine.strip())
    print(f"{args.model.name}, {len(rows)} rows x {len(SCORERS)} scorers, vLLM CPU server at concurrency "
          f"{args.concurrency}, {machine.cpu()}")
    print(markdown_table([summary(side, keys, len(rows)) for side in sides]))
    for a, b in zip(sides, sides[1:], strict=False):
        both = [k for k in keys if k in a.scores and k in b.scores]
        same = sum(round(a.scores[k], 2) == round(b.scores[k], 2) for k in both)
        print(f"scores equal (2 decimals), {a.name} vs {b.name}: {same} of {len(both)} both scored")
    for side in sides:
        print(f"{side.name}: requests {side.requests or '-'}")
        for kind, error in side.errors.items():
            print(f"{side.name}, {kind}: {error}")
    if args.json:
        write_json(args.json, {"model": str(args.model), "rows": len(rows), "concurrency": args.concurrency,
                               "cpu": machine.cpu(), "table": [summary(side, keys, len(rows)) for side in sides],
                               "sides": [as_json(side) for side in sides]})


if __name__ == "__main__":
    main()
