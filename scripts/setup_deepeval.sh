#!/usr/bin/env bash
# Set up .venv-deepeval: DeepEval 4.3.1 alone (no torch, no localjudge), the real client the serve
# tier points at `localjudge serve` (tests/serve/test_deepeval_client.py runs
# examples/deepeval_judge.py in it). Its own venv: DeepEval pins click<8.4, which the main .venv's
# huggingface-hub cannot share. ~45 s, ~190 MB. Idempotent: does nothing when DeepEval 4.3.1 is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=.venv-deepeval
if "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('deepeval') == '4.3.1'" 2>/dev/null; then
    echo "setup_deepeval.sh: $VENV has deepeval 4.3.1"
    exit 0
fi
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q deepeval==4.3.1
DEEPEVAL_TELEMETRY_OPT_OUT=YES "$VENV/bin/python" -c "import deepeval, openai; print('deepeval', deepeval.__version__, 'in $VENV')"
