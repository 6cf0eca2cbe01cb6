"""Which runs a sampling ratio picks: Mastra's `hashToUnitInterval` of a run's id.

One function, shared by live scoring's sampler (`localjudge.live.sampling`) and the runs read from
Mastra's storage (`localjudge.mastra_store`), so a rate picks the same runs in both and in Mastra.
"""

from __future__ import annotations

import hashlib


def hash_to_unit_interval(key: str) -> float:
    """Mastra's `hashToUnitInterval`: a stable value in [0, 1) for `key` (sha256, 48 bits)."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:6], "big") / 2**48
