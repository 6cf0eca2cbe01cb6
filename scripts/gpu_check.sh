#!/usr/bin/env bash
# Every GPU check in one unattended run, on a CUDA machine where `scripts/setup.sh` has run with
# a CUDA build of torch in .venv (the default model and the family fixtures in models/).
# Writes everything under $OUT (default gpu-check/); a failing step does not stop the others.
#   1. the slow tier on CUDA (float32): SmolLM2 and every family fixture, all three scorers end
#      to end, prefix cache == full prompt (logits), batched == one-by-one, resume, GGUF
#   2. per family, a random-weight 7B-class architecture in bf16 (scripts/gpu/): all three
#      scorers end to end and speed at batch 8 and 64 (scripts/gpu_speed.py)
#   3. per family, bf16 batch-size invariance: results changed between batch 1 and 8
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
"$PY" -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'" || exit 2
status=0
"$PY" -m pytest -m slow -q tests/test_real_model.py tests/test_families_real.py >"$OUT/slow-tier.txt" 2>&1 || status=1
tail -3 "$OUT/slow-tier.txt"
declare -A FAMILY=([qwen2.5-7b-instruct]=qwen2 [llama-3.1-8b-instruct]=llama3 [qwen3-8b]=qwen3
    [mistral-7b-instruct-v0.3]=mistral [gemma-2-9b-it]=gemma2 [gemma-3-12b-it]=gemma3-vlm
    [phi-3.5-mini-instruct]=phi3)
for config in "${!FAMILY[@]}"; do
    tokenizer="models/fixtures/${FAMILY[$config]}"
    for scorer in hallucination faithfulness toxicity; do
        "$PY" scripts/gpu_speed.py --config "scripts/gpu/$config" --tokenizer "$tokenizer" --scorer "$scorer" \
            --batch-sizes 8,64 --rows 128 --max-seconds 40 --json "$OUT/speed-$config-$scorer.json" \
            >"$OUT/speed-$config-$scorer.txt" 2>&1 || status=1
    done
    "$PY" scripts/gpu_invariance.py --config "scripts/gpu/$config" --tokenizer "$tokenizer" \
        >"$OUT/invariance-$config.json" 2>"$OUT/invariance-$config.err" || status=1
    echo "$config: $(tail -1 "$OUT/invariance-$config.json")"
done
exit $status
