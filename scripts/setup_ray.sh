#!/usr/bin/env bash
# Install the ray extra (Ray Data, for `localjudge score --ray` and the Ray tier, tests/ray) into
# .venv, after scripts/setup.sh has put torch there: pip runs with scripts/constraints.txt, so the
# CPU build of torch 2.13.0 stays as it is (ray does not ask for torch; the pin makes sure).
# Idempotent: when the extra's ray is already installed it does nothing (< 1 s).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    echo "setup_ray.sh: no .venv: run scripts/setup.sh first" >&2
    exit 1
fi
if .venv/bin/python - <<'PY' 2>/dev/null
import importlib.metadata as m, sys
import ray.data  # noqa: F401 - Ray Data's own dependencies (pandas, pyarrow) import
sys.exit(0 if m.version("ray").startswith("2.60.") else 1)
PY
then
    echo "setup_ray.sh: ray $(.venv/bin/python -c 'import ray; print(ray.__version__)') with Ray Data is installed"
    exit 0
fi
.venv/bin/python -m pip install -q -c scripts/constraints.txt -e '.[ray]'
.venv/bin/python -c 'import ray.data, torch; print("setup_ray.sh: ray", __import__("ray").__version__, "torch", torch.__version__)'
