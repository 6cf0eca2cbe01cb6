"""The `localjudge` command: flags map one to one onto library calls."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from localjudge.cli.bench import add_bench_parser
from localjudge.cli.numbers import check_number_flags
from localjudge.cli.score import add_score_parser
from localjudge.cli.serve import add_serve_parser
from localjudge.cli.shared import CliError
from localjudge.cli.sweep import add_sweep_parser
from localjudge.cli.view import add_view_parser
from localjudge.engines.server import ServerError
from localjudge.engines.vllm import EngineMissingError, EngineStartError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="localjudge",
        description="Offline LLM-as-judge scoring on a locally stored model.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_score_parser(sub)
    add_sweep_parser(sub)
    add_bench_parser(sub)
    add_view_parser(sub)
    add_serve_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.WARNING,
        format="localjudge: %(levelname)s: %(message)s",
    )
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()  # ours show rows/s and ETA per scorer; datasets' own add noise
    try:
        check_number_flags(args)  # finite and bounded: inf and nan are floats to argparse
        return int(args.func(args))
    except KeyboardInterrupt:
        print("localjudge: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except (CliError, ValueError, FileNotFoundError, OSError, EngineMissingError, EngineStartError,
            ServerError) as error:
        if args.debug:
            raise
        print(f"localjudge: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
