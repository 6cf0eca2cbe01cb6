"""Number flags are finite and bounded, or refused in one line naming the flag.

``float`` as an argparse type takes ``inf`` and ``nan`` (and 1e308): `--request-timeout inf`
ended in an OverflowError traceback deep in the socket code, and ``nan`` passed every ``<= 0``
check, naming no flag. `check_number_flags` checks every number flag a command has, before the
command runs (`localjudge.cli.main`), each against its bounds.
"""

from __future__ import annotations

import argparse
import math

from localjudge.cli.shared import CliError

MAX_SECONDS = 1e6  # a request timeout: about 11 days; more overflows the socket layer's timeval
# dest -> (flag, lowest, highest, whether the lowest itself is refused)
NUMBER_FLAGS: dict[str, tuple[str, float, float, bool]] = {
    "request_timeout": ("--request-timeout", 0.0, MAX_SECONDS, True),
    "gpu_memory_utilization": ("--gpu-memory-utilization", 0.0, 1.0, True),
    "gpus_per_judge": ("--gpus-per-judge", 0.0, 1024.0, False),
    "cpus_per_judge": ("--cpus-per-judge", 0.0, 4096.0, True),
    "mastra_sample": ("--mastra-sample", 0.0, 1.0, False),
}


def check_number_flags(args: argparse.Namespace) -> None:
    """A `CliError` (one line naming the flag) for a number flag given that is not finite or
    not within its bounds (`NUMBER_FLAGS`)."""
    for dest, (flag, low, high, above) in NUMBER_FLAGS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if not math.isfinite(value) or value > high or value < low or (above and value == low):
            raise CliError(f"{flag} must be {'above' if above else 'at least'} {low:g} and at most {high:g} "
                           f"(a finite number), got {value!r}")


__all__ = ["MAX_SECONDS", "NUMBER_FLAGS", "check_number_flags"]
