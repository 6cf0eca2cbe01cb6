#!/usr/bin/env bash
# Every GPU check in one unattended run, within a time bound: LIMIT seconds (default 1200, i.e.
# 20 minutes on one H200). For a CUDA machine where scripts/setup.sh has run with a CUDA build of
# torch in .venv (or PYTHON=... names another interpreter). No internet is needed: the 7B-class
# models are real architectures with random bf16 weights (benchmarks/gpu/configs/), and the
# tokenizers come from the family fixtures in models/fixtures/.
#
# Prerequisites are checked first, one line each. Then the stages, in this order, each within
# its own budget and what is left of LIMIT; a stage that would start with under 30 s left is
# skipped and reported. A failing stage does not stop the others. Everything lands under $OUT
# (default gpu-check/); the last lines are a summary (ok / FAILED / stopped at its bound / skipped).
#   1. correctness (benchmarks/gpu/gpu_correctness.py, 360 s): every family's 7B-class
#      architecture in bf16, all three scorers end to end (every row scored or unscored with its
#      reason); the first family sharded over every visible GPU when there are two or more; the
#      out-of-memory back-off provoked by a 256-row call with ~3 GiB free
#   2. the slow tier on CUDA (300 s): SmolLM2 and every family fixture in float32, all three
#      scorers, the own decode loop == generate, prefix cache == full prompt, resume, GGUF
#   3. speed (benchmarks/gpu/gpu_speed.py, 330 s): Qwen2.5-7B and Llama-3.1-8B, toxicity, batch 8
#      and 64, the own loop and generate; timed by whole judge calls
#   4. bf16 batch invariance (benchmarks/gpu/gpu_invariance.py, 90 s): scores and verdicts changed
#      between batch 1 and 8 (probability scores move by rounding: their largest change is shown)
#   5. the two engines side by side (benchmarks/gpu/gpu_engines.py, what is left): needs vllm in
#      the same environment (pip install -e '.[vllm]'), else skipped with one line saying so
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${OUT:-gpu-check}
LIMIT=${LIMIT:-1200}
END=$((SECONDS + LIMIT))
mkdir -p "$OUT"

missing=0
need() {  # need WHAT HINT COMMAND...: one line if COMMAND fails
    local what=$1 hint=$2
    shift 2
    if ! "$@" >/dev/null 2>&1; then
        echo "missing: $what ($hint)"
        missing=1
    fi
}
need "$PY" "run scripts/setup.sh, or set PYTHON" test -x "$PY"
need "a CUDA device visible to torch" "a CUDA build of torch: pip install torch, then pip install -e ." \
    "$PY" -c "import torch; assert torch.cuda.is_available()"
need "localjudge and its stack (transformers, llguidance, accelerate)" "pip install -e '.[test]'" \
    "$PY" -c "import localjudge, transformers, llguidance, accelerate, pytest"
need "the family fixtures in models/fixtures/" "python scripts/get_family_fixtures.py" \
    test -f models/fixtures/manifest.json
need "the default model in models/smollm2-135m-instruct" "python scripts/get_default_model.py" \
    test -f models/smollm2-135m-instruct/config.json
if [ "$missing" -ne 0 ]; then
    exit 2
fi
"$PY" -c "import torch; print('GPUs:', ', '.join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())), '| torch', torch.__version__)"
HAVE_VLLM=0
"$PY" -c "import vllm" 2>/dev/null && HAVE_VLLM=1

summary=()
status=0
stage() {  # stage NAME BUDGET COMMAND...: run within min(BUDGET, time left); output to $OUT/NAME.txt
    local name=$1 budget=$2
    shift 2
    local left=$((END - SECONDS))
    if [ "$left" -lt 30 ]; then
        summary+=("skipped  $name: the ${LIMIT} s bound was reached")
        return
    fi
    local bound=$((budget < left ? budget : left))
    echo "== $name (at most $bound s)"
    local started=$SECONDS
    timeout --kill-after=15 "$bound" "$@" >"$OUT/$name.txt" 2>&1
    local rc=$?
    tail -4 "$OUT/$name.txt"
    local took=$((SECONDS - started))
    if [ "$rc" -eq 0 ]; then
        summary+=("ok       $name (${took} s)")
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        summary+=("stopped  $name at its ${bound} s bound (partial output in $OUT/$name.txt)")
        status=1
    else
        summary+=("FAILED   $name (exit $rc, ${took} s; see $OUT/$name.txt)")
        status=1
    fi
}

GPU=benchmarks/gpu
stage correctness 360 "$PY" $GPU/gpu_correctness.py
stage slow-tier 300 "$PY" -m pytest -m slow -q -x -p no:cacheprovider \
    tests/model/test_transformers_judge.py tests/model/test_scorers.py tests/families tests/engines/test_decode.py
stage speed-qwen2.5-7b 165 "$PY" $GPU/gpu_speed.py --config $GPU/configs/qwen2.5-7b-instruct \
    --tokenizer models/fixtures/qwen2 --batch-sizes 8,64 --rows 256 --max-seconds 30 \
    --json "$OUT/speed-qwen2.5-7b.json"
stage speed-llama-3.1-8b 165 "$PY" $GPU/gpu_speed.py --config $GPU/configs/llama-3.1-8b-instruct \
    --tokenizer models/fixtures/llama3 --batch-sizes 8,64 --rows 256 --max-seconds 30 \
    --json "$OUT/speed-llama-3.1-8b.json"
stage invariance 90 "$PY" $GPU/gpu_invariance.py --config $GPU/configs/qwen2.5-7b-instruct \
    --tokenizer models/fixtures/qwen2 --rows 24
if [ "$HAVE_VLLM" -eq 1 ]; then
    stage engines 600 "$PY" $GPU/gpu_engines.py --config $GPU/configs/qwen2.5-7b-instruct \
        --tokenizer models/fixtures/qwen2 --batch-sizes 8,64 --rows 256 --max-seconds 30 \
        --json "$OUT/engines-qwen2.5-7b.json"
else
    summary+=("skipped  engines: vllm is not installed in $PY's environment (pip install -e '.[vllm]')")
fi

echo "== summary ($((SECONDS)) s of the ${LIMIT} s bound; output in $OUT/)"
printf '%s\n' "${summary[@]}"
exit $status
