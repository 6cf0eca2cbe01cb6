#!/usr/bin/env bash
# Build .venv-llama: a separate virtual environment holding llama-cpp-python, the CPU peer
# measured by `benchmarks/peers/bench_llama.py replay` (same GGUF file, same prompts, its own
# JSON-schema grammar). It is never a dependency of localjudge: it lives only here.
#
# PyPI carries llama-cpp-python as a source package only: pip compiles llama.cpp with the
# system's C/C++ compiler and CMake (about 10 minutes on 2 cores). Native CPU flags
# (GGML_NATIVE) are left on, as a user building it on their own machine would get.
# Idempotent: rerunning it skips what is already there.
# Usage: bash benchmarks/peers/setup_llama_peer.sh        (PYTHON=python3.11 to pick the interpreter)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
VENV=.venv-llama
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q "llama-cpp-python==0.3.36"
fi
"$VENV/bin/python" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
