"""Which live calls a scorer scores: Mastra's sampling, decided by the run's id, and its filter.

As Mastra's `runScorer`: a scorer's `filter` is asked first (it fails closed: a filter that
raises skips the run), then its sampling. A ratio is decided by hashing the run's trace id
(``trace_id`` / ``traceId``), else its run id: ``sha256(key)``'s first 6 bytes as a number in
[0, 1), compared with the rate (Mastra's `hashToUnitInterval`, `localjudge.samples.hash_to_unit_interval`,
which runs read from Mastra's storage are sampled by too). So every scorer at one rate picks the
same runs, and the same run is picked on every replay, on any machine and in Mastra.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from localjudge.samples import hash_to_unit_interval

log = logging.getLogger(__name__)

RunFilter = Callable[[Mapping[str, Any]], Any]  # the run -> whether it qualifies for scoring


def sampling_key(run: Mapping[str, Any]) -> str:
    """What a ratio samples by: the run's trace id, else its run id (as Mastra's)."""
    for name in ("trace_id", "traceId", "run_id", "runId"):
        value = run.get(name)
        if value is not None and value != "":
            return str(value)
    return ""


class Sampler:
    """Decides, run by run, whether a scorer scores it: ``{"type": "ratio", "rate": r}`` (by the
    hash of the run's trace or run id: `hash_to_unit_interval`), ``{"type": "every", "n": n}``
    (calls 1, n+1, 2n+1, ...: localjudge's) or ``{"type": "none"}`` (every run); `filter`, a
    function of the run, is asked first. Thread-safe; the same runs give the same decisions."""

    def __init__(self, spec: Mapping[str, Any] | float | None = None, *, filter: RunFilter | None = None) -> None:
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
        if filter is not None and not callable(filter):
            raise TypeError(f"a live filter is a function of the run returning True to score it, got {filter!r}")
        self.spec = spec
        self.filter = filter
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self, run: Mapping[str, Any]) -> bool:
        if self.filter is not None and not self._qualifies(run):
            return False
        if self.spec["type"] == "ratio":
            return hash_to_unit_interval(sampling_key(run)) < self.spec["rate"]
        if self.spec["type"] == "every":
            with self._lock:
                self._count += 1
                return (self._count - 1) % self.spec["n"] == 0
        return True

    def _qualifies(self, run: Mapping[str, Any]) -> bool:
        """The filter's answer; False (fail closed, logged) when it raises."""
        try:
            return bool(self.filter(run))  # type: ignore[misc]
        except Exception as error:  # noqa: BLE001 - a user's filter: skip the run, never break the app
            log.warning("live scoring: the filter raised on run %s (%s); not scoring it", sampling_key(run), error)
            return False
