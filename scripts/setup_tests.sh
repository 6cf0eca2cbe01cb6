#!/usr/bin/env bash
# Set up everything the test tiers need, in three lanes side by side: scripts/setup.sh (.venv, the
# default model, the family fixtures) then, in that .venv, scripts/setup_ray.sh (the Ray tier) and
# scripts/setup_postgres.sh (Debian's PostgreSQL and psycopg: the Mastra-storage tier);
# scripts/setup_vllm.sh (.venv-vllm: the vLLM and server tiers); scripts/setup_node.sh (Node 22 and
# Mastra's packages: the differential and storage tiers). The lanes write to different folders.
# Each set-up's output goes to build/NAME.log; a failure prints its log's tail. Idempotent, as
# each set-up is.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
start=$SECONDS
lanes=("setup setup_ray setup_postgres" "setup_vllm" "setup_node")
run_lane() {  # run_lane NAME...: these set-ups one after another, stopping at a failure
    local name
    for name in "$@"; do
        local began=$SECONDS
        if bash "scripts/$name.sh" >"build/$name.log" 2>&1; then
            echo "setup_tests.sh: $name.sh done in $((SECONDS - began)) s (build/$name.log)"
        else
            echo "setup_tests.sh: $name.sh failed; the end of build/$name.log:" >&2
            tail -n 30 "build/$name.log" >&2
            return 1
        fi
    done
}
pids=()
for lane in "${lanes[@]}"; do
    # shellcheck disable=SC2086  # a lane is a list of names
    run_lane $lane &
    pids+=("$!")
done
failed=0
for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
done
echo "setup_tests.sh: set-ups took $((SECONDS - start)) s"
exit "$failed"
