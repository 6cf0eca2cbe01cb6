"""Speed of localjudge's scorers next to the hardware's ceiling and a peer, on one model.

In one process, on the same rows and the same loaded model, for each scorer:

- **ours**: `score_runs` over the rows, after one untimed pass over the same rows (grammars
  compiled, shared-prefix KV caches built: the steady state of a long run; the cold first
  pass is reported too).
- **ceiling**: every judge call our pipeline made, replayed as a plain batched
  `model.generate`: the same rendered chat prompts, the same batch composition, left padding,
  greedy, no logits processor, each call forced to generate exactly as many new tokens as its
  longest row did (min_new_tokens = max_new_tokens). It prefills every full prompt: the
  judge's shared-prefix KV cache is our own optimisation, so the ceiling does without it.
- **deepeval** (with `--peer deepeval`): DeepEval's HallucinationMetric, FaithfulnessMetric
  and ToxicityMetric (llm eval mode, async_mode=False) driven by the same model object through
  DeepEval's documented custom-model class (a `DeepEvalBaseLLM` subclass: chat template,
  greedy, at most `--peer-max-new-tokens` per call), one test case at a time, telemetry off.
  A row whose metric raises (DeepEval raises on invalid JSON) counts as not scored, with its
  error type. The peer lives in `benchmarks/peers/deepeval_peer.py`; timers and the recording
  judge in `benchmarks/measure.py`.

Figures: seconds, rows/s, generated tokens/s, judge calls per row, peak RSS (the process's
high-water mark so far: `ru_maxrss`), % rows scored; then our time as a ratio to the ceiling
(target <= 1.2x) and our rows/s as a multiple of DeepEval's (target >= 10x). `--profile` adds
where our time goes: model forward prefill vs decode (forward hooks), the row-wise grammar
processor (its methods timed only during that extra pass: `measure.timed_processor`), the rest
of `generate`, and the engine outside the judge.

Usage:
    .venv/bin/python benchmarks/bench_speed.py [--model DIR] [--data FILE.jsonl] [--rows 8]
        [--batch-size 8] [--threads N] [--scorers hallucination,faithfulness,toxicity]
        [--profile] [--skip-ceiling] [--json OUT.json]
    bash benchmarks/peers/setup_peer.sh      # once: builds .venv-peer with DeepEval
    .venv-peer/bin/python benchmarks/bench_speed.py --peer deepeval [--peer-max-new-tokens 512] ...

Rows come from `--data` (JSONL with input, output, context), cycled to `--rows`; rows with an
empty output are left out (every scorer decides them without the model). Prints markdown.
Run it alone: on 2 cores another busy process skews every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from measure import (
    DEFAULT_MODEL,
    EXAMPLE_DATA,
    ForwardTimer,
    RecordedCall,
    RecordingJudge,
    Row,
    Stopwatch,
    load_rows,
    markdown_table,
    peak_rss_mb,
    set_offline_env,
    set_torch_threads,
    synchronize,
    timed_processor,
    write_json,
)
from peers.deepeval_peer import METRICS as PEER_METRICS
from peers.deepeval_peer import PeerRun, deepeval_env, deepeval_model, measure_deepeval

from localjudge.scorers import SCORERS

CEILING_TARGET = 1.2  # our time / ceiling time, at most
PEER_TARGET = 10.0  # our rows/s / DeepEval's rows/s, at least


@dataclass
class Figures:
    """One line of the results table."""

    scorer: str
    system: str  # ours | ceiling | deepeval
    rows: int
    seconds: float
    tokens: int
    calls: int
    scored: int | None  # None where scoring does not apply (the ceiling)
    peak_rss_mb: float
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds else float("nan")

    @property
    def scored_per_s(self) -> float:
        """Rows that got a score, per second (0 where none did)."""
        return (self.scored or 0) / self.seconds if self.seconds else float("nan")

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows_per_s": round(self.rows_per_s, 4),
                "tokens_per_s": round(self.tokens_per_s, 2)}


# --- ours and the ceiling ----------------------------------------------------------------


def measure_ours(judge: Any, name: str, rows: list[Row], batch_size: int,
                 warmup: str) -> tuple[Figures, list[RecordedCall]]:
    """Our scorer over the rows (timed after an untimed warm-up pass); the calls it made."""
    from localjudge.evaluation import score_runs

    scorer = SCORERS[name](judge)
    with Stopwatch() as cold:
        score_runs(rows if warmup == "full" else rows[:1], [scorer], batch_size=batch_size)

    recorder = RecordingJudge(judge)
    with Stopwatch() as timed:
        _, summary = score_runs(rows, [scorer.with_judge(recorder)], batch_size=batch_size)
    s = summary[name]
    notes = {"warmup_pass_s": round(cold.seconds, 3), "warmup": warmup,
             "seconds_in_judge": round(sum(c.seconds for c in recorder.calls), 3)}
    return Figures(name, "ours", len(rows), timed.seconds, s.new_tokens, len(recorder.calls), s.scored,
                   peak_rss_mb(), notes), recorder.calls


def measure_ceiling(judge: Any, name: str, rows: int, calls: list[RecordedCall]) -> Figures:
    """Replay each recorded call as a plain batched generate of exactly `longest` new tokens."""
    import torch

    model, tokenizer = judge.model, judge.tokenizer
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    todo = [c for c in calls if c.prompts and c.longest > 0]

    def generate(call: RecordedCall, new_tokens: int) -> tuple[float, int, int]:
        texts = [judge.render(p) for p in call.prompts]
        batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        batch = {k: v.to(model.device) for k, v in batch.items()}
        synchronize(model.device)
        start = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(
                **batch, min_new_tokens=new_tokens, max_new_tokens=new_tokens, do_sample=False,
                num_beams=1, temperature=None, top_p=None, top_k=None, pad_token_id=pad,
                eos_token_id=eos,
            )
        synchronize(model.device)
        made = out.shape[1] - batch["input_ids"].shape[1]
        return time.perf_counter() - start, made * out.shape[0], made

    if todo:
        generate(todo[0], 2)  # warm-up: first-call allocations, kernels
    seconds, tokens, mismatched = 0.0, 0, 0
    for call in todo:
        spent, made, steps = generate(call, call.longest)
        seconds, tokens = seconds + spent, tokens + made
        mismatched += steps != call.longest
    notes = {"prefix_cache": False, "useful_tokens": sum(c.tokens for c in todo),
             "calls_with_other_length": mismatched}
    return Figures(name, "ceiling", rows, seconds, tokens, len(todo), None, peak_rss_mb(), notes)


def peer_figures(name: str, run: PeerRun, max_new_tokens: int) -> Figures:
    """DeepEval's run as a line of the table (peak RSS read now, as for ours)."""
    notes = {"errors": run.errors, "max_new_tokens": max_new_tokens}
    return Figures(name, "deepeval", run.rows, run.seconds, run.tokens, run.calls, run.scored, peak_rss_mb(), notes)


def profile_ours(judge: Any, name: str, rows: list[Row], batch_size: int) -> dict[str, Any]:
    """An instrumented (warm) pass of our scorer: where the time goes."""
    from localjudge.evaluation import score_runs

    recorder = RecordingJudge(judge)
    scorer = SCORERS[name](recorder)
    with ForwardTimer(judge.model) as forwards, timed_processor(judge.model.device) as processor:
        with Stopwatch() as watch:
            score_runs(rows, [scorer], batch_size=batch_size)
        total = watch.seconds
    in_judge = sum(c.seconds for c in recorder.calls)
    steps = processor["steps"]
    rest = in_judge - forwards.prefill.seconds - forwards.decode.seconds - steps.seconds
    return {
        "scorer": name,
        "total_s": round(total, 3),
        "engine_outside_judge_s": round(total - in_judge, 3),
        "judge_s": round(in_judge, 3),
        "prefill_s": round(forwards.prefill.seconds, 3),
        "prefill_calls": forwards.prefill.calls,
        "prefill_tokens": forwards.prefill.items,
        "decode_s": round(forwards.decode.seconds, 3),
        "decode_steps": forwards.decode.calls,
        "decode_ms_per_step": round(1000 * forwards.decode.seconds / max(forwards.decode.calls, 1), 2),
        "processor_s": round(steps.seconds + processor["setup"].seconds, 3),
        "processor_ms_per_step": round(1000 * steps.seconds / max(steps.calls, 1), 2),
        "processor_setup_s": round(processor["setup"].seconds, 3),
        "rest_of_generate_s": round(rest - processor["setup"].seconds, 3),
    }


# --- report ------------------------------------------------------------------------------


def machine_info(judge: Any, args: argparse.Namespace, rows: list[Row], load_s: float) -> dict[str, Any]:
    import torch
    import transformers

    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    cpu = next((x.split(":", 1)[1].strip() for x in lines if x.startswith("model name")), platform.processor())
    distinct = {json.dumps({k: v for k, v in r.items() if k != "run_id"}, sort_keys=True) for r in rows}
    info: dict[str, Any] = {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "device": str(judge.model.device),
        "dtype": str(judge.model.dtype),
        "model": args.model,
        "parameters_m": round(sum(p.numel() for p in judge.model.parameters()) / 1e6, 1),
        "model_load_s": round(load_s, 2),
        "rows": len(rows),
        "distinct_rows": len(distinct),
        "data": args.data,
        "batch_size": args.batch_size,
    }
    if torch.cuda.is_available() and judge.model.device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(judge.model.device)
    if args.peer:
        from importlib.metadata import version

        info["deepeval"] = version("deepeval")
    return info


def figure_rows(figures: list[Figures]) -> list[dict[str, Any]]:
    return [{
        "scorer": f.scorer,
        "system": f.system,
        "seconds": round(f.seconds, 2),
        "rows/s": round(f.rows_per_s, 3),
        "gen tokens": f.tokens,
        "gen tokens/s": round(f.tokens_per_s, 1),
        "calls/row": round(f.calls / f.rows, 2),
        "peak RSS MB": round(f.peak_rss_mb),
        "rows scored": "n/a" if f.scored is None else f"{100 * f.scored / f.rows:.0f}%",
    } for f in figures]


def ratio_rows(figures: list[Figures]) -> list[dict[str, Any]]:
    by = {(f.scorer, f.system): f for f in figures}
    out = []
    for scorer in dict.fromkeys(f.scorer for f in figures):
        ours, ceiling = by.get((scorer, "ours")), by.get((scorer, "ceiling"))
        peer = by.get((scorer, "deepeval"))
        row: dict[str, Any] = {"scorer": scorer}
        if ours and ceiling and ceiling.seconds:
            r = ours.seconds / ceiling.seconds
            judge_only = ours.notes["seconds_in_judge"] / ceiling.seconds
            verdict = "met" if r <= CEILING_TARGET else "MISSED"
            row["ours / ceiling time"] = f"{r:.2f}x ({verdict}, target <= {CEILING_TARGET}x)"
            row["judge calls only / ceiling"] = f"{judge_only:.2f}x"
        if ours and peer:
            r = ours.rows_per_s / peer.rows_per_s if peer.rows_per_s else float("inf")
            verdict = "met" if r >= PEER_TARGET else "MISSED"
            row["ours / DeepEval rows/s"] = f"{r:.1f}x ({verdict}, target >= {PEER_TARGET:g}x)"
            row["scored rows/s: ours / DeepEval"] = (
                f"{ours.scored_per_s:.4f} / {peer.scored_per_s:.4f}"
                + (f" ({ours.scored_per_s / peer.scored_per_s:.1f}x)" if peer.scored_per_s
                   else " (DeepEval scored none)"))
            errors = peer.notes["errors"].items()
            row["DeepEval errors"] = ", ".join(f"{k}: {v}" for k, v in errors) or "none"
        out.append(row)
    return out


NOTES = """Notes:
- ours: timed after one untimed pass over {warmup}; that cold pass took: {cold}. Tokens include the
  closing end-of-turn token of each answer.
- ceiling: our judge calls replayed as plain batched `model.generate` (left padding, greedy, no
  grammar, no pipeline; its only logits processor is transformers' end-of-sequence mask for
  min_new_tokens), each forced to exactly the new-token count of that call's longest row. It
  prefills every full prompt: the judge's shared-prefix KV cache (instructions and worked examples
  computed once per process) is our own optimisation, so the ceiling does without it and ours can
  beat it. Its generated tokens count every row at the call's longest length.
- "judge calls only / ceiling" leaves out the engine's work between calls (rendering, parsing,
  scoring).
- peak RSS is the process's high-water mark so far (ru_maxrss): the phases run in the order shown.
"""

PEER_NOTES = """- deepeval: DeepEval {version} metrics (eval_mode="llm", async_mode=False), one test case at a
  time, through a DeepEvalBaseLLM subclass on the same model object: chat template, greedy, no
  JSON constraint (DeepEval parses JSON out of the text and raises when it cannot), at most
  {max_new} new tokens per call. Telemetry off (DEEPEVAL_TELEMETRY_OPT_OUT=YES).
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--data", default=str(EXAMPLE_DATA),
                        help="JSONL rows with input, output and context")
    parser.add_argument("--rows", type=int, default=8, help="rows, cycling the file (default 8)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--device-map", default=None, help="cpu, cuda or auto (default: GPU if any)")
    parser.add_argument("--scorers", default=",".join(SCORERS))
    parser.add_argument("--warmup", choices=("full", "one"), default="full",
                        help="untimed pass before timing ours: all rows (steady state) or one row")
    parser.add_argument("--peer", choices=("deepeval",), default=None,
                        help="also measure DeepEval (run with .venv-peer/bin/python)")
    parser.add_argument("--peer-max-new-tokens", type=int, default=512, help="DeepEval's cap per call")
    parser.add_argument("--profile", action="store_true", help="also show where our time goes")
    parser.add_argument("--skip-ceiling", action="store_true", help="leave out the plain-generate ceiling")
    parser.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = parser.parse_args()

    scorers = [s.strip() for s in args.scorers.split(",") if s.strip()]
    unknown = [s for s in scorers if s not in SCORERS]
    if unknown or not scorers:
        parser.error(f"--scorers takes some of {', '.join(SCORERS)}; got {args.scorers!r}")
    if args.peer and (no_peer := [s for s in scorers if s not in PEER_METRICS]):
        parser.error(f"--peer deepeval has no metric for {', '.join(no_peer)} (it has {', '.join(PEER_METRICS)})")
    if args.rows < 1 or args.batch_size < 1 or args.peer_max_new_tokens < 1:
        parser.error("--rows, --batch-size and --peer-max-new-tokens must be at least 1")
    # Before torch or DeepEval is imported: no TorchDynamo warm-up, and nothing that phones home.
    set_offline_env(deepeval_env() if args.peer else None)
    rows = load_rows(Path(args.data), args.rows)
    if args.peer:
        try:
            import deepeval  # noqa: F401 - fail now, not after our part has run
        except ImportError:
            parser.error("--peer deepeval needs DeepEval: bash benchmarks/peers/setup_peer.sh, then "
                         ".venv-peer/bin/python benchmarks/bench_speed.py --peer deepeval")

    with Stopwatch() as loading:  # imports included
        from localjudge.engines.transformers import TransformersJudge

        set_torch_threads(args.threads)
        judge = TransformersJudge.load(args.model, device_map=args.device_map)
    load_s = loading.seconds
    info = machine_info(judge, args, rows, load_s)
    print(f"loaded {args.model} in {load_s:.1f} s; {info['torch_threads']} torch threads; "
          f"{len(rows)} rows, batch {args.batch_size}", file=sys.stderr)

    figures: list[Figures] = []
    profiles: list[dict[str, Any]] = []
    for name in scorers:
        ours, calls = measure_ours(judge, name, rows, args.batch_size, args.warmup)
        figures.append(ours)
        print(ours.as_dict(), file=sys.stderr)
        if not args.skip_ceiling:
            figures.append(measure_ceiling(judge, name, len(rows), calls))
            print(figures[-1].as_dict(), file=sys.stderr)
        if args.profile:
            profiles.append(profile_ours(judge, name, rows, args.batch_size))
            print(profiles[-1], file=sys.stderr)
    if args.peer:
        model = deepeval_model(lambda: (judge.model, judge.tokenizer), Path(args.model).name,
                               args.peer_max_new_tokens)
        for name in scorers:
            figures.append(peer_figures(name, measure_deepeval(model, name, rows), args.peer_max_new_tokens))
            print(figures[-1].as_dict(), file=sys.stderr)

    order = {"ours": 0, "ceiling": 1, "deepeval": 2}
    shown = sorted(figures, key=lambda f: (scorers.index(f.scorer), order[f.system]))
    print("## Machine\n")
    print("\n".join(f"- {k}: {v}" for k, v in info.items()))
    print("\n## Speed\n\n" + markdown_table(figure_rows(shown)))
    print("\n## Ratios\n\n" + markdown_table(ratio_rows(shown)))
    if profiles:
        print("\n## Where our time goes (an extra, instrumented warm pass)\n\n" + markdown_table(profiles))
        print("\nprefill/decode: model forward hooks (more than one new position per row = prefill, "
              "including the shared prefix's once-per-process KV); processor: RowGrammarProcessor "
              "construction and process_logits; rest of generate: transformers' loop, tokenizing, "
              "detokenizing, prefix-cache copies; engine outside the judge: rendering, parsing, "
              "scoring, reasons' bookkeeping.")
    colds = ", ".join(f"{f.scorer} {f.notes['warmup_pass_s']} s" for f in figures if f.system == "ours")
    print("\n" + NOTES.format(warmup="all rows" if args.warmup == "full" else "one row", cold=colds))
    if args.peer:
        print(PEER_NOTES.format(version=info.get("deepeval"), max_new=args.peer_max_new_tokens))
    if args.json:
        write_json(args.json, {"machine": info, "figures": [f.as_dict() for f in shown],
                               "ratios": ratio_rows(shown), "profile": profiles})


if __name__ == "__main__":
    main()
