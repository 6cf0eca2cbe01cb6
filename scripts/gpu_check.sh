#!/usr/bin/env bash
# Every GPU check in one unattended run, on a CUDA machine where `scripts/setup.sh` has run with
# a CUDA build of torch in .venv (the default model and the family fixtures in models/).
# Writes everything under $OUT (default gpu-check/); a failing step does not stop the others.
#   1. the slow tier on CUDA (float32): SmolLM2 and every family fixture, all three scorers end
#      to end, prefix cache == full prompt (logits), batched == one-by-one, resume, GGUF
#   2. per family, a random-weight 7B-class architecture in bf16 (scripts/gpu/): all three
#      scorers end to end and speed at batch 8 and 64 (scripts/gpu_speed.py)
#   3. per family, bf16 batch-size invariance: results changed between batch 1 and 8
#   4. the two engines side by side (scripts/gpu_engines.py): the same random-weight 7B-class
#      model (Qwen2.5-7B, Llama-3.1-8B) through the transformers engine and the vLLM engine,
#      rows/s at batch 8, 64 and 256; needs vllm in the same environment (`pip install -e
#      '.[vllm]'`), else skipped with one line saying so. ~10 min per model at most.
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
if "$PY" -c "import vllm" 2>/dev/null; then
    for config in qwen2.5-7b-instruct llama-3.1-8b-instruct; do
        timeout 900 "$PY" scripts/gpu_engines.py --config "scripts/gpu/$config" \
            --tokenizer "models/fixtures/${FAMILY[$config]}" --batch-sizes 8,64,256 --rows 512 --max-seconds 60 \
            --json "$OUT/engines-$config.json" >"$OUT/engines-$config.txt" 2>"$OUT/engines-$config.err" || status=1
        tail -5 "$OUT/engines-$config.txt"
    done
else
    echo "skipped the engine comparison: vllm is not installed in $PY's environment (pip install -e '.[vllm]')"
fi
exit $status
