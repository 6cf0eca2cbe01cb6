#!/usr/bin/env bash
# Build .venv-peer: a separate virtual environment holding DeepEval (the peer measured by
# `benchmarks/bench_speed.py --peer deepeval`) next to localjudge itself, so one process can run
# our scorers, the plain-generate ceiling and DeepEval's metrics on the same model object.
# DeepEval is never a dependency of localjudge: it lives only here.
#
# Order matters: torch==2.13.0 (CPU build) first, then everything with the torch pin as a
# constraint, so no package pulls a multi-GB CUDA build. DeepEval goes in with --no-deps
# after its requirements (its click pin clashes with huggingface-hub: see
# requirements-peer.txt). localjudge goes in editable with --no-deps; its own runtime
# dependencies come from the same constrained install.
# Idempotent: rerunning it skips what is already there.
# Usage: bash benchmarks/peers/setup_peer.sh        (PYTHON=python3.11 to pick the interpreter)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
VENV=.venv-peer
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install -q)
"${PIP[@]}" --upgrade pip
"${PIP[@]}" torch==2.13.0
# localjudge's own runtime dependencies (from pyproject.toml), pinned where the stack is pinned.
"${PIP[@]}" -c scripts/constraints.txt -r benchmarks/peers/requirements-peer.txt \
    "outlines>=1.2,<1.4" "llguidance>=0.7.20" "datasets>=3.0" "pydantic>=2.7" "safetensors>=0.4" \
    "gguf>=0.10" "tqdm>=4.60" "pyyaml>=6" "matplotlib>=3.7"
# DeepEval itself without its declared click<8.4 (see the note in requirements-peer.txt).
"${PIP[@]}" --no-deps deepeval==4.3.1
"${PIP[@]}" --no-deps -e .
"$VENV/bin/python" -m pip check || echo "pip check: expected only deepeval's click<8.4 pin (see requirements-peer.txt)" >&2
# DeepEval makes its folder (.deepeval) in the working directory on import: put it in /tmp.
DEEPEVAL_TELEMETRY_OPT_OUT=YES DEEPEVAL_CACHE_FOLDER="${TMPDIR:-/tmp}/localjudge-bench-deepeval" "$VENV/bin/python" -c \
    "import deepeval, localjudge, transformers, torch; print('deepeval', deepeval.__version__, 'torch', torch.__version__)"
