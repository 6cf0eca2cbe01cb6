#!/usr/bin/env bash
# The project's checks, as CI runs them: lint (ruff), types (mypy), then each test tier as its own
# pytest step, with its 20 slowest tests and its wall time. Run after scripts/setup.sh.
#
#   unit      tests/unit: the scripted fake judge, no torch (fails if a unit test imports it)
#   engines   tests/engines: torch and transformers, no trained model (random-weight fixtures)
#   model     tests/model: the default model (models/smollm2-135m-instruct)
#   families  tests/families: every model family's fixture (models/fixtures)
#   vllm      tests marked `vllm` (tests/vllm/ and any other), in .venv-vllm where
#             scripts/setup_vllm.sh built it; without it, skipped with a note (an error if asked for)
#   server    tests/server: the server engine against a real vLLM server it starts from .venv-vllm
#             (two starts; a server killed mid-run, then resume); without .venv-vllm, skipped with
#             a note (an error if asked for). After the vllm tier, it compares its scores with
#             that tier's (handed over in $LOCALJUDGE_TIER_OUT, a temporary folder)
#   differential  tests/differential: Mastra's published scorers (Node.js) beside localjudge's on the
#             same judge answers, where scripts/setup_node.sh set up tests/differential/node;
#             without it, skipped with a note (an error if asked for)
#   ray       tests/ray: `localjudge score --ray` on a local Ray cluster the tier starts, where
#             scripts/setup_ray.sh installed the ray extra; without it, skipped with a note (an
#             error if asked for)
#   llama     tests/llama_server: the server engine's llama-cpp dialect against a real llama.cpp
#             llama-server it starts from .llama-server (a server killed mid-run, then resume; the
#             agreement with the transformers engine printed). scripts/setup_llama_server.sh builds it
#             (~10+ min on 2 cores), which --setup does not run (CI's budget: docs/servers.md); without
#             it, skipped with a note (an error if asked for)
#   serve     tests/serve: `localjudge serve` on the default model, started by the tier, with real clients:
#             Mastra's own scorers under Node (tests/differential/node, scripts/setup_node.sh), the
#             openai client; a client gone mid-stream, SIGTERM. Without the Node folder, skipped with
#             a note (an error if asked for)
#   storage   tests/storage: a Mastra app's stored runs (a LibSQL file, a PostgreSQL server the tier
#             starts) scored and read back through Mastra's storage API, where scripts/setup_node.sh
#             and scripts/setup_postgres.sh set it up; without them, skipped with a note (an error if
#             asked for)
#
#   bash scripts/check.sh                   # lint, types, every tier
#   bash scripts/check.sh --setup           # the same, running scripts/setup_tests.sh beside it:
#                                           # each tier starts once its own set-ups are done (CI)
#   bash scripts/check.sh unit              # lint, types and the unit tier only: no model runs
#   bash scripts/check.sh unit engines -x   # those tiers; arguments from the first one starting
#                                           # with "-" on go to each tier's pytest
set -euo pipefail
cd "$(dirname "$0")/.."

# The machine first: a failure can then be tied to a CPU (bf16 kernels differ between CPUs with and
# without AMX: docs/engines.md "Determinism")
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
cpu_flags=$(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' | grep -E '^(avx512(f|_bf16|_fp16|_vnni)|amx_[a-z0-9]+)$' | paste -sd ' ' || true)
echo "check.sh: CPU: ${cpu_model:-unknown}, $(nproc) cores; ${cpu_flags:-no AVX-512 or AMX}"

SETUP=0  # --setup: the set-ups run beside the tiers, which wait for theirs (build/ready/NAME)
if [ "${1:-}" = "--setup" ]; then
    SETUP=1
    shift
fi

TIERS=(unit differential engines model families ray vllm server llama storage serve)
# A run of several tiers runs them on two workers side by side, single-threaded (OMP_NUM_THREADS=1;
# vLLM binds its own): on 2 cores the vLLM compile and the 135M model's decoding are each mostly
# one core's work (docs/development.md "CI time by tier"). Each worker takes the first tier of
# ORDER that no worker has taken and that can start now (its set-ups done; the server tier once
# the vLLM tier, which hands it its scores, has ended): the longest first, so that the two end
# near together. CHECK_SERIAL=1: one tier after another, output streamed, as a single tier always
# runs.
ORDER=(model vllm families ray serve unit server llama engines storage differential)
# The set-ups (scripts/setup_tests.sh) each tier needs before it can start
declare -A NEEDS=(
    [unit]="setup setup_chromium" [differential]="setup setup_node" [engines]="setup setup_fixtures" [model]="setup"
    [families]="setup setup_fixtures" [vllm]="setup setup_vllm" [server]="setup setup_vllm" [llama]="setup"
    [storage]="setup setup_node setup_postgres" [ray]="setup setup_ray" [serve]="setup setup_node setup_deepeval"
)
chosen=()
while [ "$#" -gt 0 ] && [[ "$1" != -* ]]; do
    case " ${TIERS[*]} " in
        *" $1 "*) chosen+=("$1") ;;
        *) echo "check.sh: unknown tier '$1' (tiers: ${TIERS[*]})" >&2; exit 2 ;;
    esac
    shift
done
asked=${#chosen[@]}
[ "$asked" -eq 0 ] && chosen=("${TIERS[@]}")
extra=("$@")

LOGS=$(mktemp -d)  # each tier's log, the tiers' times, what one tier hands the next, the workers' claims
trap 'rm -rf "$LOGS"' EXIT
setup_pid=""
if [ "$SETUP" = 1 ]; then
    rm -rf build/ready
    bash scripts/setup_tests.sh &
    setup_pid=$!
fi
check_start=$SECONDS

await() {  # await NAME...: with --setup, wait until these set-ups are done; fail if one failed
    [ "$SETUP" = 1 ] || return 0
    local name
    for name in "$@"; do
        until [ -e "build/ready/$name" ]; do
            if { [ -e "build/ready/$name.failed" ] || ! kill -0 "$setup_pid" 2>/dev/null; } \
                    && [ ! -e "build/ready/$name" ]; then
                echo "check.sh: the set-up $name.sh did not finish (scripts/setup_tests.sh, build/$name.log)" >&2
                return 1
            fi
            sleep 1
        done
    done
}

lint() {  # ruff and mypy, once .venv is there; fails if either does (called as `lint || ...`,
    # where bash's set -e does not reach inside the function: each result is checked here)
    local code=0
    await setup || return 1
    .venv/bin/ruff check localjudge tests scripts examples benchmarks || code=1
    .venv/bin/mypy localjudge || code=1
    return "$code"
}
if [ -z "${LOCALJUDGE_TIER_OUT:-}" ]; then  # what one tier hands the next (the vLLM tier's scores)
    LOCALJUDGE_TIER_OUT=$LOGS/handover
    mkdir -p "$LOCALJUDGE_TIER_OUT"
fi
export LOCALJUDGE_TIER_OUT
run_tier() {  # run_tier NAME PYTEST-COMMAND...: time it; "no tests selected" (exit 5) is not a failure
    local name=$1 start=$SECONDS code=0
    shift
    echo "check.sh: tier $name: $*"
    "$@" || code=$?
    local took=$((SECONDS - start))
    if [ "$code" -eq 5 ]; then
        echo "check.sh: tier $name selected no tests"
        code=0
    fi
    echo "$name: ${took} s" >>"$LOGS/timings"
    echo "check.sh: tier $name: ${took} s (exit $code)"
    return "$code"
}

# run_if_set_up NAME NEEDS MISSING PYTEST-COMMAND...: a tier that needs a set-up of its own (the
# file NEEDS, which MISSING says how to make): without it, a note, or an error if it was asked for
run_if_set_up() {
    local name=$1 needs=$2 missing=$3
    shift 3
    if [ -x "$needs" ]; then
        run_tier "$name" "$@"
    elif [ "$asked" -gt 0 ]; then
        echo "check.sh: $missing: cannot run the $name tier" >&2
        return 1
    else
        echo "check.sh: $missing: the $name tier did not run" >&2
    fi
}

# each tier's own pytest options: its 20 slowest tests; no shared cache (two workers run side by side)
pytest_opts=(-p no:cacheprovider --durations=20)
tier() {  # tier NAME: run one tier, once its set-ups are done
    local tier=$1
    # shellcheck disable=SC2086  # a list of names
    await ${NEEDS[$tier]} || return 1
    [ "$SETUP" = 1 ] && echo "check.sh: tier $tier starts at $((SECONDS - check_start)) s"
    case $tier in
        vllm)
            run_if_set_up vllm .venv-vllm/bin/python "no .venv-vllm (scripts/setup_vllm.sh builds it)" \
                .venv-vllm/bin/python -m pytest tests -m vllm "${pytest_opts[@]}" ${extra[@]+"${extra[@]}"}
            ;;
        server)  # -rP: the start times and agreement the tests print
            run_if_set_up server .venv-vllm/bin/python "no .venv-vllm (scripts/setup_vllm.sh builds it)" \
                .venv-vllm/bin/python -m pytest tests/server "${pytest_opts[@]}" -rP ${extra[@]+"${extra[@]}"}
            ;;
        llama)  # -rP: the start times and agreement the tests print
            run_if_set_up llama .llama-server/bin/llama-server \
                "no .llama-server (scripts/setup_llama_server.sh builds it)" \
                .venv/bin/python -m pytest tests/llama_server -m llama "${pytest_opts[@]}" -rP ${extra[@]+"${extra[@]}"}
            ;;
        ray)  # -m ray: inside the tier a missing ray fails instead of skipping
            run_if_set_up ray .venv/bin/ray "no ray in .venv (scripts/setup_ray.sh installs it)" \
                .venv/bin/python -m pytest tests/ray -m ray "${pytest_opts[@]}" ${extra[@]+"${extra[@]}"}
            ;;
        storage)  # -m storage: inside the tier a missing PostgreSQL or psycopg fails instead of skipping
            run_if_set_up storage tests/differential/node/node_modules/.bin/node \
                "no tests/differential/node (scripts/setup_node.sh sets it up)" \
                .venv/bin/python -m pytest tests/storage -m storage "${pytest_opts[@]}" ${extra[@]+"${extra[@]}"}
            ;;
        serve)  # -m serve: inside the tier a missing Node folder fails instead of skipping
            run_if_set_up serve tests/differential/node/node_modules/.bin/node \
                "no tests/differential/node (scripts/setup_node.sh sets it up)" \
                .venv/bin/python -m pytest tests/serve -m serve "${pytest_opts[@]}" ${extra[@]+"${extra[@]}"}
            ;;
        differential)  # -m differential: inside the tier a missing Node folder fails instead of skipping
            run_if_set_up differential tests/differential/node/node_modules/.bin/node \
                "no tests/differential/node (scripts/setup_node.sh sets it up)" \
                .venv/bin/python -m pytest tests/differential -m differential "${pytest_opts[@]}" ${extra[@]+"${extra[@]}"}
            ;;
        *)
            run_tier "$tier" .venv/bin/python -m pytest "tests/$tier" "${pytest_opts[@]}" ${extra[@]+"${extra[@]}"}
            ;;
    esac
}

is_chosen() { case " ${chosen[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

can_start() {  # can_start TIER: its set-ups are done (or failed or lost: then the tier fails at
    # once), and the server tier's vLLM tier has ended
    local name
    if [ "$1" = server ] && is_chosen vllm && [ ! -e "$LOGS/ended/vllm" ]; then
        return 1
    fi
    [ "$SETUP" = 1 ] || return 0
    kill -0 "$setup_pid" 2>/dev/null || return 0
    # shellcheck disable=SC2086  # a list of names
    for name in ${NEEDS[$1]}; do
        [ -e "build/ready/$name" ] || [ -e "build/ready/$name.failed" ] || return 1
    done
}

worker() {  # worker [lint]: take tiers (see ORDER) until none is left, each tier's log printed
    # whole when it ends; after a failure (here or in the other worker) take no more
    if [ "${1:-}" = lint ]; then
        lint >"$LOGS/lint.log" 2>&1 || { cat "$LOGS/lint.log"; touch "$LOGS/failed"; return 1; }
        flock "$LOGS/print" cat "$LOGS/lint.log"
    fi
    local t picked left code
    while [ ! -e "$LOGS/failed" ]; do
        picked="" left=0
        for t in "${ORDER[@]}"; do
            is_chosen "$t" && [ ! -e "$LOGS/taken/$t" ] || continue
            left=1
            if can_start "$t" && mkdir "$LOGS/taken/$t" 2>/dev/null; then
                picked=$t
                break
            fi
        done
        if [ -z "$picked" ]; then
            [ "$left" = 1 ] || return 0
            sleep 1
            continue
        fi
        code=0
        tier "$picked" >"$LOGS/$picked.log" 2>&1 || code=$?
        flock "$LOGS/print" cat "$LOGS/$picked.log"
        touch "$LOGS/ended/$picked"
        if [ "$code" -ne 0 ]; then
            touch "$LOGS/failed"
            return "$code"
        fi
    done
    return 1
}

code=0
if [ "${#chosen[@]}" -gt 1 ] && [ "${CHECK_SERIAL:-0}" != 1 ]; then
    start=$SECONDS
    echo "check.sh: two workers side by side, taking the tiers in this order as they can start: ${ORDER[*]}; each tier's log when it ends"
    export OMP_NUM_THREADS=1
    mkdir -p "$LOGS/taken" "$LOGS/ended"
    worker lint &
    a=$!
    worker &
    b=$!
    wait "$a" || code=$?
    wait "$b" || code=$?
    echo "workers (wall): $((SECONDS - start)) s" >>"$LOGS/timings"
else
    lint || code=$?
    if [ "$code" -eq 0 ]; then
        for t in "${chosen[@]}"; do
            tier "$t" || { code=$?; break; }
        done
    fi
fi
if [ -n "$setup_pid" ]; then
    wait "$setup_pid" || code=1
fi
echo "check.sh: wall time by tier: $(paste -sd ';' "$LOGS/timings" 2>/dev/null | sed 's/;/, /g')"
exit "$code"
