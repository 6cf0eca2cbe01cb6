"""The Ray tier: `localjudge score --ray` and `evaluate_on_ray` on a local Ray cluster that the tier
starts once (`ray.init(num_cpus=2, include_dashboard=False)`, usage stats off) and every test shares.

Needs the ray extra (scripts/setup_ray.sh). Without it the tier is skipped with a note; asked for
explicitly (``-m ray``), it fails instead.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A local Ray cluster of 2 CPUs for the whole tier, shut down at its end."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        why = "ray is not installed: run scripts/setup_ray.sh (the ray extra)"
        markexpr = request.config.getoption("markexpr", "") or ""
        if "ray" in markexpr and "not ray" not in markexpr:
            pytest.fail(why)
        pytest.skip(why)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()
