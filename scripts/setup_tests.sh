#!/usr/bin/env bash
# Set up everything the test tiers need, in three lanes side by side: scripts/setup.sh (.venv, the
# default model), then in that .venv scripts/setup_fixtures.sh (the family fixtures: engines and
# families tiers), scripts/setup_ray.sh (the Ray tier) and scripts/setup_postgres.sh (Debian's
# PostgreSQL and psycopg: the Mastra-storage tier); scripts/setup_vllm.sh (.venv-vllm: the vLLM and
# server tiers); scripts/setup_node.sh (Node 22 and Mastra's packages: the differential, storage and
# serve tiers), then scripts/setup_deepeval.sh (.venv-deepeval: DeepEval, a client of the serve
# tier), then scripts/setup_chromium.sh (Debian's chromium: the unit tier's browser tests; its
# apt-get waits for setup_postgres.sh's). The lanes write to different folders. Each set-up's
# output goes to build/NAME.log; a failure prints its log's tail. Each set-up, when it ends, leaves build/ready/NAME (or
# build/ready/NAME.failed): `scripts/check.sh --setup` starts each tier as soon as its own set-ups
# are there. Idempotent, as each set-up is.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
rm -rf build/ready
mkdir -p build/ready
start=$SECONDS
lanes=("setup setup_fixtures setup_ray setup_postgres" "setup_vllm" "setup_node setup_deepeval setup_chromium")
run_lane() {  # run_lane NAME...: these set-ups one after another, stopping at a failure (which
    # marks the ones after it failed too)
    local name
    while [ "$#" -gt 0 ]; do
        name=$1
        shift
        local began=$SECONDS
        if bash "scripts/$name.sh" >"build/$name.log" 2>&1; then
            touch "build/ready/$name"
            echo "setup_tests.sh: $name.sh done in $((SECONDS - began)) s, at $((SECONDS - start)) s (build/$name.log)"
        else
            echo "setup_tests.sh: $name.sh failed; the end of build/$name.log:" >&2
            tail -n 30 "build/$name.log" >&2
            local after
            for after in "$name" "$@"; do touch "build/ready/$after.failed"; done
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
