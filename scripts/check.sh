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
#
#   bash scripts/check.sh                   # lint, types, every tier
#   bash scripts/check.sh unit              # lint, types and the unit tier only: no model runs
#   bash scripts/check.sh unit engines -x   # those tiers; arguments from the first one starting
#                                           # with "-" on go to each tier's pytest
set -euo pipefail
cd "$(dirname "$0")/.."

TIERS=(unit differential engines model families vllm server)
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

.venv/bin/ruff check localjudge tests scripts examples benchmarks
.venv/bin/mypy localjudge

timings=()
if [ -z "${LOCALJUDGE_TIER_OUT:-}" ]; then  # what one tier hands the next (the vLLM tier's scores)
    LOCALJUDGE_TIER_OUT=$(mktemp -d)
    trap 'rm -rf "$LOCALJUDGE_TIER_OUT"' EXIT
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
    timings+=("$name: ${took} s")
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
        exit 1
    else
        echo "check.sh: $missing: the $name tier did not run" >&2
    fi
}

for tier in "${chosen[@]}"; do
    case $tier in
        vllm)
            run_if_set_up vllm .venv-vllm/bin/python "no .venv-vllm (scripts/setup_vllm.sh builds it)" \
                .venv-vllm/bin/python -m pytest tests -m vllm -p no:cacheprovider --durations=20 ${extra[@]+"${extra[@]}"}
            ;;
        server)  # -rP: the start times and agreement the tests print
            run_if_set_up server .venv-vllm/bin/python "no .venv-vllm (scripts/setup_vllm.sh builds it)" \
                .venv-vllm/bin/python -m pytest tests/server -p no:cacheprovider --durations=20 -rP \
                ${extra[@]+"${extra[@]}"}
            ;;
        differential)  # -m differential: inside the tier a missing Node folder fails instead of skipping
            run_if_set_up differential tests/differential/node/node_modules/.bin/node \
                "no tests/differential/node (scripts/setup_node.sh sets it up)" \
                .venv/bin/python -m pytest tests/differential -m differential --durations=20 ${extra[@]+"${extra[@]}"}
            ;;
        *)
            run_tier "$tier" .venv/bin/python -m pytest "tests/$tier" --durations=20 ${extra[@]+"${extra[@]}"}
            ;;
    esac
done
echo "check.sh: wall time by tier: $(IFS=';'; echo "${timings[*]}" | sed 's/;/, /g')"
