"""`import localjudge` stays light: in a fresh interpreter it loads no torch, transformers,
outlines, datasets or ray, nor does `localjudge.cluster`, the Ray path's folder (which folder may
import which is tests/unit/test_architecture.py's)."""

from __future__ import annotations

import subprocess
import sys


def test_import_is_light() -> None:
    code = (
        "import localjudge, localjudge.cluster, sys; "
        "heavy = {'torch', 'transformers', 'outlines', 'datasets', 'ray'} & set(sys.modules); "
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"
