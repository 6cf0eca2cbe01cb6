"""localjudge's speed on an NVIDIA GPU with a 7B-class model, against the bandwidth roofline.

For a GPU machine without internet: no weights are downloaded. The model is a real
7B-class architecture (default Qwen2.5-7B-Instruct; `--config benchmarks/gpu/configs/<family>` for Llama
3.1, Qwen3, Mistral v0.3, Gemma 2, Gemma 3 and Phi-3.5: see benchmarks/gpu/configs/README.md), from its
public config, with random bf16 weights built directly on the GPU. Tokenizer files cannot be
downloaded either: it takes the config folder's own tokenizer if you put one there (or
`--tokenizer PATH`), else SmolLM2's from models/smollm2-135m-instruct. A vocabulary smaller
than the model's (49,152 vs 152,064) does not change the speed: the grammar's vocabulary is
padded to the model's and the padding is never allowed.

The model is wrapped in localjudge's judge with `TransformersJudge(model, tokenizer,
identity=...)`; with `--via-disk` it is saved (safetensors, ~15 GB) to a temporary folder and
loaded back with `TransformersJudge.load(folder, device_map="cuda")`. The model building is in
`benchmarks/gpu/random_model.py`, the timers in `benchmarks/measure.py`.

Then, for each batch size, one scorer (default toxicity) over rows cycled from
examples/example.jsonl, a batch at a time, until all `--rows` are done or `--max-seconds`
have passed (the batch in flight finishes). Printed per batch size: rows/s, generated tokens/s,
the time per forward pass from whole judge calls (call time / passes: one synchronisation per
call, nothing added inside the loop), the share of the memory-bandwidth roofline it reaches
(lower bound of a pass = weight bytes / bandwidth), and `torch.cuda.max_memory_allocated`.
`--per-forward` adds a breakdown (forward and grammar time per step, each with a CUDA sync,
which slows the run it measures).

Random weights write arbitrary text: constrained decoding keeps every answer valid JSON, but
the number of tokens per row is not what a trained model would write (random text tends to
fill every string to its length limit), so rows/s is not a trained model's; the step time
and tokens/s carry over.

Usage:
    python benchmarks/gpu/gpu_speed.py [--rows 1000] [--batch-sizes 8,32,64,128] [--scorer toxicity]
        [--max-seconds 90] [--max-new-tokens N] [--bandwidth 4.8e12] [--tokenizer PATH]
        [--config DIR] [--via-disk] [--json OUT.json]
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
from measure import (
    EXAMPLE_DATA,
    CappedJudge,
    ForwardTimer,
    RecordingJudge,
    Stopwatch,
    load_rows,
    markdown_table,
    peak_rss_mb,
    set_offline_env,
    timed_processor,
    write_json,
)
from random_model import DEFAULT_CONFIG, build_model, pick_tokenizer

from localjudge.scorers import SCORERS


def make_judge(model: Any, tokenizer: Any, identity: str, via_disk: bool, tmp_root: str) -> tuple[Any, str]:
    """localjudge's judge around the loaded model, and how it was made."""
    from localjudge.engines.transformers.judge import TransformersJudge

    if not via_disk:
        return TransformersJudge(model, tokenizer, identity=identity), "TransformersJudge(model, tokenizer)"
    folder = tempfile.mkdtemp(prefix="localjudge-gpu-", dir=tmp_root)
    try:
        with Stopwatch() as saving:
            model.save_pretrained(folder)  # safetensors
            tokenizer.save_pretrained(folder)
        judge = TransformersJudge.load(folder, device_map="cuda")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return judge, f"saved to disk and reloaded ({saving.seconds:.0f} s to save)"


def percent(floor: float, measured: float) -> str:
    """The share of the roofline reached: floor time / measured time."""
    return f"{100 * floor / measured:.0f}%" if measured > 0 else "n/a"


def sweep(judge: Any, scorer_name: str, rows: list[dict[str, Any]], batch_size: int,
          max_seconds: float, cap: int | None, weight_bytes: int, kv_bytes_per_position: int,
          bandwidth: float, per_forward: bool) -> dict[str, Any]:
    """One batch size: batches until the rows or the time run out; the figures.

    Timed by whole judge calls (each ends in one synchronisation: its tokens come back to the
    host), so nothing is added to the loop. Passes per call: the own loop's counters; under
    `generate`, one per token of the call's longest row. With `per_forward`, forward hooks and
    the grammar processor are also timed, each with a CUDA synchronisation: a breakdown that
    slows what it measures (its whole-call figures are not comparable with a plain run's)."""
    import contextlib

    import torch

    from localjudge.engines.transformers.decode import DecodeStats
    from localjudge.evaluation.dataset_runs import score_runs

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    recorder = RecordingJudge(CappedJudge(judge, cap))
    scorer = SCORERS[scorer_name](recorder)
    before = DecodeStats()
    before.add(judge.decode_stats)
    done = scored = tokens = backoffs = 0
    with contextlib.ExitStack() as timers:
        forwards = timers.enter_context(ForwardTimer(judge.model)) if per_forward else None
        processor = timers.enter_context(timed_processor(judge.model.device)) if per_forward else None
        with Stopwatch() as watch:
            for first in range(0, len(rows), batch_size):
                chunk = rows[first:first + batch_size]
                _, summary = score_runs(chunk, [scorer], batch_size=batch_size)
                s = summary[scorer_name]
                done, scored, tokens = done + len(chunk), scored + s.scored, tokens + s.new_tokens
                backoffs += s.oom_backoffs
                if max_seconds and watch.seconds >= max_seconds:
                    break
        seconds = watch.seconds

    in_judge = sum(c.seconds for c in recorder.calls)
    if judge.decoder == "loop":
        passes = judge.decode_stats.forwards - before.forwards
    else:
        passes = sum(c.longest for c in recorder.calls)
    pass_ms = 1000 * in_judge / max(passes, 1)
    floor_ms = 1000 * weight_bytes / bandwidth
    figures: dict[str, Any] = {
        "batch": batch_size,
        "rows": done,
        "seconds": round(seconds, 1),
        "rows/s": round(done / seconds, 2),
        "gen tokens": tokens,
        "gen tokens/s": round(tokens / seconds, 1),
        "rows scored": f"{100 * scored / max(done, 1):.0f}%",
        "passes": passes,
        "ms/pass (whole calls)": round(pass_ms, 2),
        "roofline ms": round(floor_ms, 2),
        "% roofline": percent(floor_ms, pass_ms),
        "max GPU mem GB": round(torch.cuda.max_memory_allocated() / 2**30, 1),
        "OOM back-offs": backoffs,
    }
    if forwards is not None and processor is not None:
        steps = max(forwards.decode.calls + forwards.window.calls, 1)
        kv_ms = 1000 * kv_bytes_per_position * forwards.kv_positions / steps / bandwidth
        forward_ms = 1000 * (forwards.decode.seconds + forwards.window.seconds) / steps
        figures.update({
            "forward ms/step (synced)": round(forward_ms, 2),
            "processor ms/step (synced)": round(1000 * processor["steps"].seconds / steps, 2),
            "% roofline (weights+KV)": percent(floor_ms + kv_ms, forward_ms),
        })
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="folder holding config.json")
    parser.add_argument("--tokenizer", default=None,
                        help="tokenizer folder (default: the config folder's, else SmolLM2's)")
    parser.add_argument("--data", default=str(EXAMPLE_DATA))
    parser.add_argument("--rows", type=int, default=1000, help="rows per batch size, cycling --data")
    parser.add_argument("--batch-sizes", default="8,32,64,128")
    parser.add_argument("--scorer", default="toxicity", choices=tuple(SCORERS))
    parser.add_argument("--max-seconds", type=float, default=90.0,
                        help="stop a batch size after this long (0: no limit; default 90)")
    parser.add_argument("--max-new-tokens", type=int, default=None,
                        help="cap every judge call's new tokens (default: the scorer's own budget)")
    parser.add_argument("--bandwidth", type=float, default=4.8e12,
                        help="GPU memory bandwidth in bytes/s (default 4.8e12: H200)")
    parser.add_argument("--via-disk", action="store_true",
                        help="save the model and load it by path with TransformersJudge.load")
    parser.add_argument("--tmp-dir", default=tempfile.gettempdir(), help="where --via-disk saves")
    parser.add_argument("--decoders", default="loop,generate",
                        help="judge decoders to sweep, each on the same model (default: loop,generate: "
                             "localjudge's own loop, then transformers' generate)")
    parser.add_argument("--per-forward", action="store_true",
                        help="also time each forward and grammar step (a CUDA sync each: slows the run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = parser.parse_args()
    batch_sizes = [int(b) for b in args.batch_sizes.split(",") if b.strip()]
    if not batch_sizes or min(batch_sizes) < 1 or args.rows < 1:
        parser.error("--batch-sizes and --rows must be positive")
    set_offline_env()  # before torch is imported

    import torch
    import transformers
    from transformers import AutoTokenizer

    if not torch.cuda.is_available():
        raise SystemExit("gpu_speed.py needs an NVIDIA GPU (torch.cuda.is_available() is False)")
    rows = load_rows(Path(args.data), args.rows)
    config_dir = Path(args.config)
    tokenizer_dir = pick_tokenizer(config_dir, args.tokenizer)
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), local_files_only=True)

    with Stopwatch() as building:
        model = build_model(config_dir, tokenizer, args.seed)
    built_s = building.seconds
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    parameters = sum(p.numel() for p in model.parameters())
    top, cfg = model.config, model.config.get_text_config(decoder=True)  # Gemma 3: text_config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    element = next(model.parameters()).element_size()
    kv_bytes_per_position = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * head_dim * element
    identity = f"random-{config_dir.name}-seed{args.seed}"  # the judge adds dtype, decoding
    judge, how = make_judge(model, tokenizer, identity, args.via_disk, args.tmp_dir)
    del model
    gc.collect()
    torch.cuda.empty_cache()

    # Warm-up: grammar compile, CUDA kernels and allocator; a short cap keeps it quick.
    from localjudge.evaluation.dataset_runs import score_runs

    with Stopwatch() as warming:
        score_runs(rows[:2], [SCORERS[args.scorer](CappedJudge(judge, 16))], batch_size=2)
    warm_s = warming.seconds

    info = {
        "gpu": torch.cuda.get_device_name(0),
        "gpu_memory_gb": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "model": f"{top.architectures[0] if top.architectures else top.model_type} from {config_dir}"
                 f" (random weights, seed {args.seed})",
        "parameters_b": round(parameters / 1e9, 2),
        "weight_gb": round(weight_bytes / 1e9, 2),
        "dtype": str(judge.model.dtype),
        "tokenizer": f"{tokenizer_dir} (vocab {len(tokenizer)} vs model {cfg.vocab_size})",
        "judge": how,
        "build_s": round(built_s, 1),
        "warmup_s": round(warm_s, 1),
        "scorer": args.scorer,
        "rows": f"{args.rows} cycled from {args.data}",
        "max_seconds_per_batch_size": args.max_seconds or "none",
        "max_new_tokens": args.max_new_tokens or "the scorer's own budget",
        "bandwidth": f"{args.bandwidth:.3g} B/s",
        "kv_bytes_per_position": kv_bytes_per_position,
    }
    print("\n".join(f"{k}: {v}" for k, v in info.items()), file=sys.stderr)

    from localjudge.engines.transformers.judge import TransformersJudge

    results = []
    for decoder in [d.strip() for d in args.decoders.split(",") if d.strip()]:
        twin = judge if decoder == judge.decoder else TransformersJudge(
            judge.model, judge.tokenizer, identity=identity, decoder=decoder)
        for batch_size in batch_sizes:
            figures = sweep(twin, args.scorer, rows, batch_size, args.max_seconds, args.max_new_tokens,
                            weight_bytes, kv_bytes_per_position, args.bandwidth, args.per_forward)
            results.append({"decoder": decoder, **figures})
            print(results[-1], file=sys.stderr)

    print("## Machine and model\n")
    print("\n".join(f"- {k}: {v}" for k, v in info.items()))
    print(f"\n## {args.scorer}: speed by batch size\n\n" + markdown_table(results))
    print(f"""
Notes:
- Random weights: constrained decoding keeps every answer valid JSON, but the tokens per row
  are not a trained model's (random text tends to fill each string to its length limit), so
  rows/s does not carry over to a real 7B judge; the step times and tokens/s do.
- ms/pass (whole calls): time inside judge calls (prefill, decode, grammar, detokenizing) over
  the forward passes they ran (the own loop's counters; under generate, the longest row's
  tokens per call). With --per-forward: forward and grammar time per step, each synchronised.
- roofline ms = weight bytes / bandwidth = {weight_bytes / 1e9:.2f} GB / {args.bandwidth:.3g} B/s: no
  decode step can be faster. Weight bytes are all parameters (the input embedding is gathered,
  not streamed, so the true floor is a little lower). "+KV" (--per-forward) also counts reading
  the KV cache (padding included) each step: {kv_bytes_per_position} bytes per cached position.
- A batch size stops after --max-seconds ({args.max_seconds or 'none'}), finishing the batch in
  flight; "rows" says how many it did. Peak host RSS {peak_rss_mb():.0f} MB.""")
    if args.json:
        write_json(args.json, {"info": info, "results": results})


if __name__ == "__main__":
    main()
