"""`localjudge view SOURCE [--out PAGE.html]`: scored rows as one self-contained HTML page.

SOURCE is a results file (`localjudge score --out`, JSONL or parquet), a bench `--out-dir` or a
sweep `out_dir`. The page opens offline (no server, no network): a sortable, filterable table
of rows with unscored rows first, a row's claims, verdicts and reason on click, and a score
histogram per scorer. Filters can be given in the address, e.g. `view.html#scorer=toxicity`,
`#unscored=1`, `#q=eiffel`, `#sort=score&dir=desc`. By default the page is written next to
the source: `FILE.jsonl.html` for a file, `FOLDER/view.html` for a folder; a page named
otherwise than `.html` is refused (it would overwrite a results file given as --out). A file in
a folder that does not read is left out, with a warning and a note on the page.
"""

from __future__ import annotations

import argparse
from typing import Any

from localjudge.cli.outputs import check_output_file
from localjudge.view import PAGE_SUFFIXES, write_view


def run_view(args: argparse.Namespace) -> int:
    if args.out is not None:  # a results file given as the page would be overwritten with HTML
        check_output_file(args.out, PAGE_SUFFIXES, "--out")
    print(write_view(args.source, args.out))
    return 0


def add_view_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "view",
        help="write a self-contained HTML page of scored rows (a results file, bench or sweep folder)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", help="results file (.jsonl, .parquet), bench --out-dir or sweep out_dir")
    parser.add_argument("--out", default=None, help="page to write (default: FILE.jsonl.html or FOLDER/view.html)")
    parser.set_defaults(func=run_view)
