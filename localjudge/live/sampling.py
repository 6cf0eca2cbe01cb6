"""Which live calls a scorer scores: Mastra's sampling, as a thread-safe, seeded decision per call."""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from typing import Any


class Sampler:
    """Decides, call by call, whether a scorer scores it: ``{"type": "ratio", "rate": r}`` (a
    seeded random share), ``{"type": "every", "n": n}`` (calls 1, n+1, 2n+1, ...) or
    ``{"type": "none"}`` (every call). Thread-safe; the same seed gives the same decisions."""

    def __init__(self, spec: Mapping[str, Any] | float | None = None, *, seed: int = 0) -> None:
        spec = {"type": "none"} if spec is None else {"type": "ratio", "rate": spec} if isinstance(
            spec, (int, float)) else dict(spec)
        kind = spec.get("type")
        if kind == "ratio":
            rate = spec.get("rate")
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
                raise ValueError(f"sampling ratio needs a rate in [0, 1], got {rate!r}")
        elif kind == "every":
            n = spec.get("n")
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"sampling every-n needs an integer n >= 1, got {n!r}")
        elif kind != "none":
            raise ValueError(f"unknown sampling {spec!r}: give {{'type': 'ratio', 'rate': r}}, "
                             "{'type': 'every', 'n': n} or {'type': 'none'}")
        self.spec = spec
        self._rng = random.Random(seed)
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self) -> bool:
        with self._lock:
            self._count += 1
            if self.spec["type"] == "ratio":
                return self._rng.random() < self.spec["rate"]
            if self.spec["type"] == "every":
                return (self._count - 1) % self.spec["n"] == 0
            return True
