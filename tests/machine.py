"""The CPU a test runs on, named in the assertion messages of tests whose guarantee depends on it.

vLLM's and oneDNN's bf16 kernels take other paths on a CPU with AMX than on one with AVX-512
only (docs/engines.md "Determinism"): a failure of such a test says which CPU it ran on.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

FLAGS = ("avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")


@cache
def cpu() -> str:
    """The CPU's model name and which of `FLAGS` it has, e.g. ``"AMD EPYC (avx512f avx512_bf16)"``."""
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "an unknown CPU (no /proc/cpuinfo)"
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "unknown")
    flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
    present = [flag for flag in FLAGS if flag in flags]
    return f"{model} ({' '.join(present) or 'no AVX-512 or AMX'})"


def has_amx() -> bool:
    return "amx_bf16" in cpu()
