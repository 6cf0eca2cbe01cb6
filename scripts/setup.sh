#!/usr/bin/env bash
# Set up localjudge on a fresh machine: a virtual environment in .venv with the CPU build of
# torch 2.13.0 (installed first, so nothing pulls a CUDA build), the package with its test
# extra and the default judge model in models/smollm2-135m-instruct. (The model-family test
# fixtures are scripts/setup_fixtures.sh's; the browser tests' Chromium, scripts/setup_chromium.sh's.)
# Idempotent: rerunning it skips what is already there.
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
