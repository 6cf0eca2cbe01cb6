#!/usr/bin/env bash
# The project's checks, as CI runs them: lint (ruff), types (mypy), then the tests (pytest; any
# arguments go to pytest, e.g. -m "not slow" for the fast tier). Run after scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check localjudge tests scripts examples
.venv/bin/mypy localjudge
.venv/bin/python -m pytest "$@"
