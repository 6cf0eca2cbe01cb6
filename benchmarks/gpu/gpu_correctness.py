"""The GPU path's correctness, before any speed figure: gpu_check.sh's first stage.

On random-weight 7B-class architectures in bf16 (`random_model.py`; no weights can be
downloaded, and correctness of the plumbing does not depend on weight values):

1. **every scorer end to end, per family**: each of hallucination, faithfulness and toxicity on
   `--rows` rows at batch 8: every row scored (with a probability score) or unscored with its
   reason, and no row lost to a failed judge call;
2. **sharded over every visible GPU** (when there are two or more): the first family again,
   its layers spread over the GPUs (`device_map="auto"`'s placement): the same checks, with the
   decode loop's row removal and cache compaction running on layers on different devices;
3. **the out-of-memory back-off**: most of the GPU's free memory taken by a ballast tensor, then
   one call with `--oom-rows` rows: the engine must back off (halve the batch) and still
   score every row.

Prints one line per check (`ok` / `FAIL`, with figures) and exits 1 if any failed. On a CPU
(`--device cpu`, with small configs such as models/fixtures/<family>) it runs checks 1 only:
a smoke test of this script.

    python benchmarks/gpu/gpu_correctness.py [--families qwen2.5-7b-instruct=qwen2,...] [--rows 16]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/: measure.py
from measure import EXAMPLE_DATA, ROOT, CappedJudge, load_rows, set_offline_env  # noqa: E402
from random_model import build_model  # noqa: E402

CONFIGS = ROOT / "benchmarks" / "gpu" / "configs"
FIXTURES = ROOT / "models" / "fixtures"
FAMILIES = ("qwen2.5-7b-instruct=qwen2,llama-3.1-8b-instruct=llama3,qwen3-8b=qwen3,"
            "mistral-7b-instruct-v0.3=mistral,gemma-2-9b-it=gemma2,gemma-3-12b-it=gemma3-vlm,"
            "phi-3.5-mini-instruct=phi3")
SCORER_NAMES = ("hallucination", "faithfulness", "toxicity")


def check_results(results: dict[str, list[Any]]) -> tuple[bool, str]:
    """Every row scored (with a probability score) or unscored with its reason; none lost to a
    failed judge call."""
    bad, counts = [], []
    for name, rows in results.items():
        scored = [r for r in rows if r.score is not None]
        failed = [r for r in rows if r.error_kind == "judge_failed"]
        unexplained = [r for r in rows if r.score is None and not (r.error_kind and r.error)]
        no_prob = [r for r in scored if r.prob_score is None]
        counts.append(f"{name} {len(scored)}/{len(rows)} scored")
        if failed:
            bad.append(f"{name}: {len(failed)} judge_failed ({failed[0].error})")
        if unexplained or no_prob:
            bad.append(f"{name}: {len(unexplained)} unscored without a reason, {len(no_prob)} scored without prob")
    return not bad, "; ".join(bad or counts)


def score_all(judge: Any, rows: list[dict[str, Any]], batch_size: int, cap: int) -> tuple[dict[str, Any], Any]:
    from localjudge.evaluation.dataset_runs import score_runs
    from localjudge.scorers import SCORERS

    capped = CappedJudge(judge, cap)
    return score_runs(rows, [SCORERS[name](capped) for name in SCORER_NAMES], batch_size=batch_size)


def report(label: str, ok: bool, detail: str, started: float) -> bool:
    print(f"{'ok  ' if ok else 'FAIL'} {label}: {detail} ({time.monotonic() - started:.0f} s)", flush=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=FAMILIES,
                        help="comma-separated CONFIG=FIXTURE: a folder of benchmarks/gpu/configs (or a path) and "
                             "the models/fixtures family whose tokenizer it uses")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=48, help="cap per judge call (random text is long)")
    parser.add_argument("--oom-rows", type=int, default=256)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--data", default=str(EXAMPLE_DATA))
    args = parser.parse_args()
    set_offline_env()
    import torch
    from transformers import AutoTokenizer

    from localjudge.engines.transformers.judge import TransformersJudge
    from localjudge.evaluation.dataset_runs import score_runs
    from localjudge.scorers import SCORERS

    if args.device == "cuda" and not torch.cuda.is_available():
        print("FAIL no CUDA device")
        return 1
    rows = load_rows(Path(args.data), args.rows)
    families = [tuple(pair.split("=", 1)) for pair in args.families.split(",") if pair]
    passed = True

    def judge_of(config: str, fixture: str, shard: bool = False) -> Any:
        folder = Path(config) if Path(config).is_dir() else CONFIGS / config
        tokenizer = AutoTokenizer.from_pretrained(str(FIXTURES / fixture), local_files_only=True)
        model = build_model(folder, tokenizer, seed=0, shard=shard, device=args.device)
        return TransformersJudge(model, tokenizer, identity=f"random-{folder.name}")

    for config, fixture in families:
        started = time.monotonic()
        judge = judge_of(config, fixture)
        results, _ = score_all(judge, rows, 8, args.max_new_tokens)
        passed &= report(f"{config} ({judge.model.dtype}, {judge.decoder}): all scorers", *check_results(results),
                         started)
        del judge
        gc.collect()
        if args.device == "cuda":
            torch.cuda.empty_cache()

    if args.device != "cuda":
        print("skipped sharding and the out-of-memory back-off: they need a GPU")
        return 0 if passed else 1
    config, fixture = families[0]
    if torch.cuda.device_count() > 1:
        started = time.monotonic()
        judge = judge_of(config, fixture, shard=True)
        devices = sorted({str(p.device) for p in judge.model.parameters()})
        results, _ = score_all(judge, rows, 8, args.max_new_tokens)
        ok, detail = check_results(results)
        passed &= report(f"{config} sharded over {', '.join(devices)}", ok and len(devices) > 1, detail, started)
        del judge
        gc.collect()
        torch.cuda.empty_cache()
    else:
        print("skipped sharding: one GPU visible")

    started = time.monotonic()
    judge = judge_of(config, fixture)
    free, _ = torch.cuda.mem_get_info()
    ballast = torch.empty(max(free - 3 * 2**30, 0), dtype=torch.uint8, device="cuda")  # leave ~3 GiB
    try:
        many = load_rows(Path(args.data), args.oom_rows)
        results, summary = score_runs(many, [SCORERS["toxicity"](CappedJudge(judge, args.max_new_tokens))],
                                      batch_size=args.oom_rows)
    finally:
        del ballast
        torch.cuda.empty_cache()
    ok, detail = check_results(results)
    backoffs = summary["toxicity"].oom_backoffs
    passed &= report(f"out-of-memory back-off ({args.oom_rows} rows, ~3 GiB free)", ok and backoffs > 0,
                     f"{backoffs} back-offs; {detail}", started)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
