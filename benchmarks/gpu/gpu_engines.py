"""The two engines on one GPU, the same random-weight 7B-class model: rows/s by batch size.

For a GPU machine with no internet and no weights (run by gpu_check.sh): the model is a real
architecture from its public config (benchmarks/gpu/configs/<family>, default Qwen2.5-7B-Instruct) with
random bf16 weights (`random_model.build_model`, seed 0), saved once as safetensors with a
tokenizer (`--tokenizer`, default the config folder's, else SmolLM2's) so that both engines
load the same weights:

1. the transformers engine (`TransformersJudge.load(folder, device_map="cuda")`), then freed;
2. the vLLM engine (`VLLMJudge.load(folder, dtype="bfloat16")`).

For each engine and batch size: the scorer (default toxicity) over rows cycled from
examples/example.jsonl, a batch per `score_runs` call, until `--rows` are done or
`--max-seconds` have passed; every call's new tokens capped (`--max-new-tokens`, default 128)
so that a random model's strings, which run to their length limit, cost both engines the same.
Time is taken around whole calls (one synchronisation per call, none per forward). Printed:
rows/s, generated tokens/s, rows scored, and the vLLM engine's rows/s over the transformers
engine's at each batch size; with the same weights, how many rows got the same score.

Usage:
    python benchmarks/gpu/gpu_engines.py [--config benchmarks/gpu/configs/qwen2.5-7b-instruct] [--batch-sizes 8,64,256]
        [--rows 512] [--max-seconds 60] [--max-new-tokens 128] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/: measure.py
from measure import EXAMPLE_DATA, CappedJudge, Stopwatch, load_rows, markdown_table, set_offline_env, write_json
from random_model import DEFAULT_CONFIG, build_model, pick_tokenizer


def sweep(judge: Any, scorer_name: str, rows: list[dict[str, Any]], batch_size: int, max_seconds: float,
          cap: int) -> tuple[dict[str, Any], list[Any]]:
    """One batch size on one engine: the figures, and each row's score."""
    import torch

    from localjudge.evaluation.dataset_runs import score_runs
    from localjudge.scorers import SCORERS

    scorer = SCORERS[scorer_name](CappedJudge(judge, cap))
    done = scored = tokens = 0
    scores: list[Any] = []
    torch.cuda.synchronize()
    with Stopwatch() as watch:
        for first in range(0, len(rows), batch_size):
            chunk = rows[first:first + batch_size]
            results, summary = score_runs(chunk, [scorer], batch_size=batch_size)
            torch.cuda.synchronize()
            s = summary[scorer_name]
            done, scored, tokens = done + len(chunk), scored + s.scored, tokens + s.new_tokens
            scores += [r.score for r in results[scorer_name]]
            if max_seconds and watch.seconds >= max_seconds:
                break
    return {"batch": batch_size, "rows": done, "seconds": round(watch.seconds, 1),
            "rows/s": round(done / watch.seconds, 2), "gen tokens/s": round(tokens / watch.seconds, 1),
            "rows scored": f"{100 * scored / max(done, 1):.0f}%"}, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="folder holding config.json")
    parser.add_argument("--tokenizer", default=None)
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--batch-sizes", default="8,64,256")
    parser.add_argument("--scorer", default="toxicity")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="per engine and batch size")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--engines", default="transformers,vllm")
    parser.add_argument("--tmp-dir", default=tempfile.gettempdir(), help="where the random weights are saved")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    batch_sizes = [int(b) for b in args.batch_sizes.split(",") if b.strip()]
    set_offline_env({"TORCHDYNAMO_DISABLE": "0"})  # vLLM compiles its model; transformers is unaffected

    import torch
    from transformers import AutoTokenizer

    if not torch.cuda.is_available():
        raise SystemExit("gpu_engines.py needs an NVIDIA GPU (torch.cuda.is_available() is False)")
    rows = load_rows(EXAMPLE_DATA, args.rows)
    config_dir = Path(args.config)
    tokenizer = AutoTokenizer.from_pretrained(str(pick_tokenizer(config_dir, args.tokenizer)), local_files_only=True)
    folder = Path(tempfile.mkdtemp(prefix="localjudge-engines-", dir=args.tmp_dir))
    results: list[dict[str, Any]] = []
    scores: dict[tuple[str, int], list[Any]] = {}
    try:
        with Stopwatch() as saving:
            model = build_model(config_dir, tokenizer, seed=0)
            model.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
            del model
            gc.collect()
            torch.cuda.empty_cache()
        print(f"random weights of {config_dir.name} saved in {saving.seconds:.0f} s", file=sys.stderr)
        for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
            from localjudge.engines.choice import load_judge

            options = {"device_map": "cuda"} if engine == "transformers" else {"dtype": "bfloat16"}
            with Stopwatch() as loading:
                judge = load_judge(folder, engine=engine, **options)
                sweep(judge, args.scorer, rows[:2], 2, 0, 16)  # warm-up: grammars, kernels, graphs
            for batch_size in batch_sizes:
                figures, scores[engine, batch_size] = sweep(judge, args.scorer, rows, batch_size, args.max_seconds,
                                                            args.max_new_tokens)
                results.append({"engine": engine, "load+warm-up s": round(loading.seconds), **figures})
                print(results[-1], file=sys.stderr)
            if engine == "vllm":
                judge.close()  # type: ignore[attr-defined]
            del judge
            gc.collect()
            torch.cuda.empty_cache()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    by = {(r["engine"], r["batch"]): r for r in results}
    compared = []
    for batch_size in batch_sizes:
        tf, vl = by.get(("transformers", batch_size)), by.get(("vllm", batch_size))
        if tf and vl:
            a, b = scores["transformers", batch_size], scores["vllm", batch_size]
            n = min(len(a), len(b))
            compared.append({"batch": batch_size, "transformers rows/s": tf["rows/s"], "vllm rows/s": vl["rows/s"],
                             "vllm / transformers": round(vl["rows/s"] / tf["rows/s"], 2),
                             "same score": f"{sum(x == y for x, y in zip(a[:n], b[:n], strict=True))}/{n}"})
    print(f"## {config_dir.name} (random bf16 weights), {args.scorer}, new tokens capped at {args.max_new_tokens}\n")
    print(markdown_table(results) + "\n\n" + markdown_table(compared))
    if args.json:
        write_json(args.json, {"config": str(config_dir), "gpu": torch.cuda.get_device_name(0),
                               "results": results, "compared": compared})


if __name__ == "__main__":
    main()
