#!/usr/bin/env bash
# Set up localjudge on a fresh machine: a virtual environment in .venv with the CPU build of
# torch 2.13.0 (installed first, so nothing pulls a CUDA build), the package with its test
# extra and the default judge model in models/smollm2-135m-instruct. (The model-family test
# fixtures are scripts/setup_fixtures.sh's.) Idempotent: rerunning it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -c scripts/constraints.txt -e '.[test,serve]'
.venv/bin/python scripts/get_default_model.py
# Headless Chromium for the browser tests of tests/unit/view/test_results_page.py (Debian's
# package; ~20 s to install on a fresh Debian 12 machine). Skipped when one is on PATH; a note,
# not a failure, where it cannot be installed (no apt-get, not root, no network): those tests
# then fail saying so.
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
        { apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } \
            || echo "setup.sh: could not install chromium; the browser tests in tests/unit/view/test_results_page.py will fail" >&2
    else
        echo "setup.sh: no chromium on PATH and no root apt-get to install it;" \
            "the browser tests in tests/unit/view/test_results_page.py will fail" >&2
    fi
fi
