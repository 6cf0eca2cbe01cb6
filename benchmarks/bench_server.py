"""The server engine against the in-process vLLM engine: the same model, rows and scorer.

1. One vLLM server from .venv-vllm (`tests/server/vllm_server.py`: configured as the in-process
   engine, on 127.0.0.1) is started and timed until ready; then, with it warm, `ServerJudge`:
   time to first row (connect, the grammar probe, one row scored) and rows/s at each
   ``--concurrency`` (requests in flight; every row of a step sent in one call). The server is
   then stopped.
2. The in-process engine (`VLLMJudge.load`): time to first row (the engine start, one row
   scored), and rows/s with the same number of rows per `generate` call (its batch size) as the
   server's concurrency.

Each engine first judges `WARM_ROWS` other rows, untimed; each timed pass starts with vLLM's
prefix cache emptied. One table; ``--json`` writes the figures too. Run it alone (nothing else
busy), in .venv-vllm:

    .venv-vllm/bin/python benchmarks/bench_server.py --rows 32 --concurrency 1,8,32
    .venv-vllm/bin/python benchmarks/bench_server.py --rows 2 --concurrency 1,2 --enforce-eager   # a quick try
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from measure import DEFAULT_MODEL, Stopwatch, markdown_table, write_json  # noqa: E402


def runs_of(benchmark: str, rows: int) -> tuple[str, list[dict[str, Any]]]:
    """(scorer name, runs) of a built-in benchmark's first `rows` rows."""
    from localjudge.bench.data import load_benchmark, rows_to_runs, select_benchmarks

    [bench] = select_benchmarks([benchmark])
    dataset, _ = load_benchmark(bench, rows)
    return bench.scorer, rows_to_runs(dataset, bench.columns)


WARM_ROWS = 2  # rows (after the timed ones) each engine judges once, untimed, before its timed passes


def timed(judge: Any, scorer: str, runs: list[dict[str, Any]], batch: int, reset: Any) -> tuple[float, int]:
    """(seconds, rows scored) of one pass, the prefix cache emptied first (`reset`): every pass
    judges the same rows, and a cache kept warm by the pass before would make later ones look faster."""
    from localjudge.evaluation import score_runs
    from localjudge.scorers import SCORERS

    reset()
    with Stopwatch() as watch:
        results, _ = score_runs(runs, [SCORERS[scorer](judge)], batch_size=batch)
    return watch.seconds, sum(r.score is not None for r in results[scorer])


def warm_up(judge: Any, scorer: str, runs: list[dict[str, Any]]) -> None:
    from localjudge.evaluation import score_runs
    from localjudge.scorers import SCORERS

    score_runs(runs, [SCORERS[scorer](judge)], batch_size=len(runs))


def first_row(load: Any, scorer: str, runs: list[dict[str, Any]]) -> tuple[Any, float]:
    """(the judge `load()` gives, seconds from calling it to the first row scored)."""
    from localjudge.evaluation import score_runs
    from localjudge.scorers import SCORERS

    with Stopwatch() as watch:
        judge = load()
        score_runs(runs[:1], [SCORERS[scorer](judge)], batch_size=1)
    return judge, watch.seconds


def on_server(args: argparse.Namespace, scorer: str, runs: list[dict[str, Any]], spare: list[dict[str, Any]],
              levels: list[int]) -> list[dict[str, Any]]:
    import urllib.request

    from localjudge.engines.server import ServerJudge
    from tests.server.vllm_server import VLLMServer

    server = VLLMServer(Path(args.model), Path(args.log), eager=args.enforce_eager, dev_mode=True)
    server.start()
    root = server.url.removesuffix("/v1")

    def reset() -> None:  # vLLM's dev-mode page
        urllib.request.urlopen(urllib.request.Request(f"{root}/reset_prefix_cache", method="POST"), timeout=60)

    figures = []
    try:
        start = server.wait_ready(900)
        print(f"server ready after {start:.0f} s (log: {args.log})", file=sys.stderr)
        judge, ttfr = first_row(lambda: ServerJudge(server.url, tokenizer=args.model), scorer, runs)
        print(f"server judge: {judge.identity}", file=sys.stderr)
        warm_up(judge, scorer, spare)
        for level in levels:  # every row of a step in one call, `level` requests in flight
            judge = ServerJudge(server.url, tokenizer=args.model, concurrency=level)
            seconds, scored = timed(judge, scorer, runs, len(runs), reset)
            figures.append(_row("server", level, len(runs), scored, seconds, ttfr, start))
            print(figures[-1], file=sys.stderr)
    finally:
        server.stop()
    return figures


def in_process(args: argparse.Namespace, scorer: str, runs: list[dict[str, Any]], spare: list[dict[str, Any]],
               levels: list[int]) -> list[dict[str, Any]]:
    from localjudge.engines.vllm import VLLMJudge

    os.environ.pop("TORCHDYNAMO_DISABLE", None)  # vLLM compiles unless --enforce-eager
    judge, ttfr = first_row(lambda: VLLMJudge.load(args.model, max_context=2048, enforce_eager=args.enforce_eager),
                            scorer, runs)
    print(f"in-process judge: {judge.identity}", file=sys.stderr)
    figures = []
    try:
        warm_up(judge, scorer, spare)
        for level in levels:  # rows per generate call
            seconds, scored = timed(judge, scorer, runs, level, judge.llm.reset_prefix_cache)
            figures.append(_row("vllm in-process", level, len(runs), scored, seconds, ttfr, None))
            print(figures[-1], file=sys.stderr)
    finally:
        judge.close()
    return figures


def _row(engine: str, level: int, rows: int, scored: int, seconds: float, ttfr: float,
         start: float | None) -> dict[str, Any]:
    return {"engine": engine, "concurrency / batch": level, "rows": rows, "scored": scored,
            "seconds": round(seconds, 1), "rows/s": round(rows / seconds, 3),
            "time to first row s": round(ttfr, 1), "server start s": "" if start is None else round(start)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="a local model folder (safetensors)")
    parser.add_argument("--benchmark", default="halueval_qa", help="a built-in benchmark; its scorer is run")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--concurrency", default="1,8,32",
                        help="server: requests in flight; in-process: rows per generate call (comma list)")
    parser.add_argument("--enforce-eager", action="store_true", help="both engines without torch.compile")
    parser.add_argument("--engines", default="server,vllm", help="which to run: server, vllm or both")
    parser.add_argument("--log", default=str(Path(tempfile.gettempdir()) / "bench-server.log"),
                        help="the server's log file (default: bench-server.log in the temporary folder)")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    levels = [int(x) for x in args.concurrency.split(",") if x.strip()]
    scorer, found = runs_of(args.benchmark, args.rows + WARM_ROWS)
    runs, spare = found[:args.rows], found[args.rows:]
    engines = {e.strip() for e in args.engines.split(",")}
    figures: list[dict[str, Any]] = []
    if "server" in engines:  # first, alone: the in-process engine is not started before it stops
        figures += on_server(args, scorer, runs, spare, levels)
    if "vllm" in engines:
        figures += in_process(args, scorer, runs, spare, levels)
    print(f"## Server engine and in-process vLLM engine: {Path(args.model).name}, {args.benchmark} ({scorer}), "
          f"{len(runs)} rows{', eager' if args.enforce_eager else ''}\n")
    print(markdown_table(figures))
    if args.json:
        write_json(args.json, {"model": args.model, "benchmark": args.benchmark, "figures": figures})


if __name__ == "__main__":
    main()
