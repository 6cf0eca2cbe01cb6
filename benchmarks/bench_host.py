"""The decode loop's host work per row and step: everything but the model's forward pass.

On a GPU the forward of a 7B model at batch 128 takes a few milliseconds; the loop's own work
between forwards (grammar masks, masking the logits, choosing, feeding the matchers, the
repetition guard's text) must stay well under that. This measures it on the CPU with a stand-in
model whose forward returns stored random logits over a real vocabulary (default: the Qwen2
fixture's, 151,936 tokens) at once, so what is timed is the loop, not a model: the three
scorers' real prompts and schemas, every step of their pipelines, at several batch sizes.

    python benchmarks/bench_host.py [--tokenizer models/fixtures/qwen2] [--batch-sizes 8,32,128]

Prints, per batch size: row-steps (rows times passes), the host's CPU time per row-step in
microseconds (the main thread's, torch on one thread: contention-proof), the mean positions a
row carries per pass (1 = no drafting; wider passes cost every row), and tokens per pass.
The forward stand-in's own time (building the logits tensor) is excluded. Run it on two
checkouts to compare the loop before and after a change.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import measure

EXAMPLE_ROWS = measure.EXAMPLE_DATA


class StoredLogitsModel:
    """A stand-in causal LM: the config and vocabulary of a real one, a forward that returns
    logits gathered from a fixed random bank (different per row, position and pass)."""

    def __init__(self, config: Any, bank_rows: int = 256, seed: int = 0) -> None:
        import torch

        self.config = config
        self.dtype = torch.float32
        self.device = torch.device("cpu")
        vocab = config.get_text_config(decoder=True).vocab_size
        self.bank = torch.randn((bank_rows, vocab), generator=torch.Generator().manual_seed(seed))
        self.passes = 0
        self.forward_seconds = 0.0  # wall (main thread) time spent in the stand-in forward
        self.forward_cpu = 0.0  # the main thread's CPU time in it
        self.positions = 0  # rows times kept logits positions, summed

    def eval(self) -> StoredLogitsModel:
        return self

    def forward(self, input_ids: Any = None, attention_mask: Any = None, position_ids: Any = None,
                past_key_values: Any = None, use_cache: bool = True, logits_to_keep: int = 0, **_: Any) -> Any:
        import torch

        wall, cpu = time.perf_counter(), time.thread_time()
        rows, length = input_ids.shape
        width = logits_to_keep or length
        index = (torch.arange(rows).unsqueeze(1) * 131 + self.passes * 17 + torch.arange(width).unsqueeze(0))
        logits = self.bank[index % len(self.bank)]
        self.passes += 1
        self.positions += rows * width
        self.forward_seconds += time.perf_counter() - wall
        self.forward_cpu += time.thread_time() - cpu
        return type("Output", (), {"logits": logits})()

    __call__ = forward


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", default=str(measure.ROOT / "models" / "fixtures" / "qwen2"),
                        help="a model folder whose config and tokenizer to use (no weights are read)")
    parser.add_argument("--batch-sizes", default="8,32,128")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()
    measure.set_offline_env()
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from localjudge import faithfulness_scorer, hallucination_scorer, toxicity_scorer
    from localjudge.engines.transformers import TransformersJudge

    torch.set_num_threads(1)  # the host's own work, on one thread: its CPU time is the main thread's
    config = AutoConfig.from_pretrained(args.tokenizer, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer, local_files_only=True)
    base = [json.loads(line) for line in Path(EXAMPLE_ROWS).read_text().splitlines() if line.strip()]
    figures = []
    for batch in [int(b) for b in args.batch_sizes.split(",")]:
        model = StoredLogitsModel(config)
        judge = TransformersJudge(model, tokenizer, identity="stand-in")
        runs = [{**base[i % len(base)], "run_id": str(i)} for i in range(batch)]
        cpu, wall = time.thread_time(), time.perf_counter()
        for factory in (hallucination_scorer, faithfulness_scorer, toxicity_scorer):
            factory(judge).run_batch(runs)
        cpu, wall = time.thread_time() - cpu - model.forward_cpu, time.perf_counter() - wall - model.forward_seconds
        stats = judge.decode_stats
        figures.append({
            "batch": batch, "row_steps": stats.row_steps, "passes": stats.forwards, "tokens": stats.tokens,
            "host_us_per_row_step": round(1e6 * cpu / stats.row_steps, 1),
            "host_wall_us_per_row_step": round(1e6 * wall / stats.row_steps, 1),
            "positions_per_row_step": round(model.positions / max(stats.row_steps, 1), 2),
            "tokens_per_pass": round(stats.tokens / stats.forwards, 2),
        })
        print(f"batch {batch}: done", file=sys.stderr)
    print(measure.markdown_table(figures))
    if args.json:
        measure.write_json(args.json, {"tokenizer": args.tokenizer, "figures": figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
