"""The `localjudge` command line: `score`, `sweep`, `bench` (one module each, over `shared`)."""

from localjudge.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
