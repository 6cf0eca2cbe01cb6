#!/usr/bin/env bash
# The project's checks, as CI runs them: lint (ruff), types (mypy), then the tests (pytest; any
# arguments go to pytest, e.g. -m "not slow" for the fast tier). Run after scripts/setup.sh.
# Where scripts/setup_vllm.sh has built .venv-vllm, the vLLM tier (tests marked `vllm`: the vLLM
# engine end to end) runs there afterwards; without arguments only, so a chosen subset stays one.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check localjudge tests scripts examples benchmarks
.venv/bin/mypy localjudge
.venv/bin/python -m pytest "$@"
if [ "$#" -eq 0 ]; then
    if [ -x .venv-vllm/bin/python ]; then
        .venv-vllm/bin/python -m pytest -m vllm -p no:cacheprovider
    else
        echo "check.sh: no .venv-vllm (scripts/setup_vllm.sh builds it): the vLLM tier did not run" >&2
    fi
fi
