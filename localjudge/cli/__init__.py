"""The `localjudge` command line: `score`, `sweep`, `bench`, `view` (one module each, over `shared`).

Importing the package is light (the pytest plugin lives here and loads in every pytest run of a
project that installs localjudge): the commands, which bring numpy and matplotlib with the
bench, load when `main` or `build_parser` is first called.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `localjudge` command (the console script's entry point)."""
    from localjudge.cli.main import main as run  # heavy: every command's module

    return run(argv)


def build_parser() -> argparse.ArgumentParser:
    """The `localjudge` argument parser."""
    from localjudge.cli.main import build_parser as build  # heavy: every command's module

    return build()


__all__ = ["build_parser", "main"]
