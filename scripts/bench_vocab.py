"""Grammar set-up and mask cost by vocabulary size, on the family fixtures and the default model.

For each model (one child process each, so memory figures are its own), prints:
- `index s`, `index MB`: building llguidance's token index of the vocabulary (once per process,
  inside `TransformersJudge`), and the process's RSS growth for it;
- `first mask ms`: the first grammar mask of a scorer schema (lazy lexer set-up included);
- `mask ms/step`: mean mask time per step while replaying a valid verdict answer token by token;
- `apply ms/step`: unpacking the packed mask onto a batch of 8 rows of logits and masking them
  (the processor's torch side), per step;
- `first row s`, `next row s`: one toxicity row through the whole judge, cold then warm, with
  the generation capped at 48 new tokens (random weights: the cap makes rows comparable).

Run after `scripts/setup.sh`: `python scripts/bench_vocab.py` (one model at a time, 2 threads).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from measure import DEFAULT_MODEL, ROOT, CappedJudge, Stopwatch, markdown_table, peak_rss_mb

MODELS = ROOT / "models"


def rss_mb() -> float:
    """The process's resident memory now (VmRSS), else its peak so far."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: str) -> dict:
    import llguidance
    import llguidance.hf
    import llguidance.torch
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from localjudge import toxicity_scorer
    from localjudge.schemas import exactly
    from localjudge.scorers.hallucination import HallucinationVerdict, HallucinationVerdicts
    from localjudge.transformers_judge import TransformersJudge

    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    n_vocab = max(AutoConfig.from_pretrained(path).get_text_config(decoder=True).vocab_size, len(tokenizer))
    before = rss_mb()
    start = time.perf_counter()
    llg = llguidance.hf.from_tokenizer(tokenizer, n_vocab=n_vocab)
    index_s = time.perf_counter() - start
    index_mb = rss_mb() - before

    schema = exactly(HallucinationVerdict, 3, HallucinationVerdicts)
    grammar = llguidance.LLMatcher.grammar_from_json_schema(
        json.dumps({**schema.model_json_schema(), "x-guidance": {"whitespace_flexible": False}})
    )
    matcher = llguidance.LLMatcher(llg, grammar)
    bitmask = llguidance.torch.allocate_token_bitmask(1, llg.vocab_size)
    start = time.perf_counter()
    llguidance.torch.fill_next_token_bitmask(matcher, bitmask, 0)
    first_mask_ms = (time.perf_counter() - start) * 1000
    answer = json.dumps({"verdicts": [{"verdict": "no", "reason": "The context says so, in plain words."}] * 3},
                        separators=(",", ":"))
    steps, spent = 0, 0.0
    for token in llg.tokenize_str(answer):  # no SentencePiece prefix space
        if not matcher.consume_token(token):
            break
        start = time.perf_counter()
        llguidance.torch.fill_next_token_bitmask(matcher, bitmask, 0)
        spent += time.perf_counter() - start
        steps += 1

    logits = torch.randn(8, n_vocab)
    packed = bitmask.repeat(8, 1)
    bits = torch.arange(32, dtype=torch.int32)
    start = time.perf_counter()
    for _ in range(20):
        allowed = ((packed.unsqueeze(-1) >> bits) & 1).bool().view(8, -1)[:, :n_vocab]
        logits.masked_fill(~allowed, float("-inf"))
    apply_ms = (time.perf_counter() - start) / 20 * 1000
    assert steps > 20, f"the replay stopped after {steps} tokens"
    del llg, matcher

    judge = TransformersJudge.load(path)  # torch's threads: 2, set above
    scorer = toxicity_scorer(CappedJudge(judge, 48))  # capped, so the row times compare across vocabularies
    times = []
    for text in ("You are an idiot. Go away.", "Thanks, that was helpful."):
        with Stopwatch() as watch:
            scorer.run({"input": "q", "output": text})
        times.append(watch.seconds)
    return {
        "vocab": n_vocab, "index s": round(index_s, 2), "index MB": round(index_mb),
        "first mask ms": round(first_mask_ms, 2), "mask ms/step": round(spent / max(steps, 1) * 1000, 3),
        "apply ms/step": round(apply_ms, 2), "first row s": round(times[0], 2), "next row s": round(times[1], 2),
        "peak RSS MB": round(peak_rss_mb()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    manifest = json.loads((MODELS / "fixtures" / "manifest.json").read_text())
    models = {"smollm2-135m (default)": DEFAULT_MODEL}
    models |= {f["name"]: MODELS / "fixtures" / f["path"] for f in manifest["families"]
               if f["name"] != "mistral-nemo-template"}
    env = {**os.environ, "TORCHDYNAMO_DISABLE": "1", "TOKENIZERS_PARALLELISM": "false"}
    rows = []
    for name, path in models.items():
        out = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True, env=env)
        if out.returncode:
            raise SystemExit(f"{name}: {out.stderr[-2000:]}")
        rows.append({"model": name, **json.loads(out.stdout.strip().splitlines()[-1])})
        print(name, rows[-1], flush=True, file=sys.stderr)
    rows.sort(key=lambda r: r["vocab"])
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
