#!/usr/bin/env bash
# Set up everything the test tiers need, the three set-ups side by side: scripts/setup.sh (.venv,
# the default model, the family fixtures), scripts/setup_vllm.sh (.venv-vllm: the vLLM and server
# tiers) and scripts/setup_node.sh (Node 22 and Mastra's packages: the differential tier). They
# write to different folders; setup_vllm.sh needs the models only when its tiers run, after all
# three are done. Each one's output goes to build/setup-NAME.log; a failure prints its log's tail.
# Idempotent, as each set-up is.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
start=$SECONDS
names=(setup setup_vllm setup_node)
pids=()
for name in "${names[@]}"; do
    bash "scripts/$name.sh" >"build/$name.log" 2>&1 &
    pids+=("$!")
done
failed=0
for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
        echo "setup_tests.sh: ${names[$i]}.sh done (build/${names[$i]}.log)"
    else
        echo "setup_tests.sh: ${names[$i]}.sh failed; the end of build/${names[$i]}.log:" >&2
        tail -n 30 "build/${names[$i]}.log" >&2
        failed=1
    fi
done
echo "setup_tests.sh: set-ups took $((SECONDS - start)) s"
exit "$failed"
