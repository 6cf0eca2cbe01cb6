"""`localjudge bench`: measure a judge against human labels, next to baselines.

Built-in benchmarks (200 rows each, 100 per label; see localjudge/bench/bench_data/README.md):
  begin (faithfulness), halueval_qa and truthfulqa (hallucination), davidson and toxigen
  (toxicity; content warning: hateful and offensive text).

    localjudge bench --model models/smollm2-135m-instruct --limit 40
    localjudge bench --model M --scorer toxicity --benchmark toxigen
    localjudge bench --model M --mode direct --out-dir bench-direct
    localjudge bench --model M --data mine.jsonl --scorer faithfulness --label-col human --positive yes
    localjudge bench --model M --data mine.jsonl --scorer toxicity --positive 1 --fit-calibration cal.json

For each benchmark the report gives ROC-AUC and balanced accuracy (at half the scale), with
95% bootstrap intervals, for the judge's hard score and its label-probability score, and the
same figures for the majority class, word overlap and output length on the same rows. A judge
that does not beat the best baseline is marked NO. Calibration: each judge score's expected
calibration error (with a reliability plot) and the balanced accuracy of a threshold tuned on
one half of the rows, measured on the other. Claim scorers: how many claims use only the
output's words, and the judge's AUCs on each route alone (terse outputs, one claim by rule;
longer ones, through the claims step), next to output length's. Written to --out-dir: report.md,
report.json, report.html, PNG plots, scored/<benchmark>.jsonl and .progress/ (rerunning the
same command resumes). The column flags apply to --data only.

--fit-calibration FILE also fits, per scorer, a map from its prob score to the rate of label 1
on these rows (Platt scaling: two numbers, for the 40-300 labeled rows a user has), reports its
AUC and ECE before and after, cross-validated, and writes it to FILE (JSON) for
`localjudge score --calibration FILE`, which refuses it for another judge or scorer version.

With --data, label 1 is the row whose --label-col equals --positive, and it must be the
scorer's positive class: hallucinated (hallucination), faithful (faithfulness) or toxic
(toxicity).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from localjudge.bench import (
    BENCHMARKS,
    BenchReport,
    custom_benchmark,
    load_benchmark,
    rank_modes,
    run_bench,
    select_benchmarks,
    summary_table,
)
from localjudge.cli import model_flags, shared
from localjudge.cli.model_flags import add_model_flags
from localjudge.cli.outputs import check_output_dir, check_output_file, hold_run
from localjudge.cli.shared import (
    Bars,
    CliError,
    add_column_flags,
    add_scorer_option_flag,
    check_scorers,
    columns_of,
    parse_scorer_options,
)
from localjudge.cli.summary import markdown_table
from localjudge.judge import Judge


def _names(text: str | None) -> list[str] | None:
    """Comma-separated names as a list; None when none are given."""
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    return names or None


class _Bars:
    """One progress bar per benchmark (the CLI's `Bars`, keyed by benchmark name)."""

    def __init__(self, totals: dict[str, int], enabled: bool) -> None:
        self.bars = {name: Bars(total, enabled) for name, total in totals.items()}

    def __call__(self, benchmark: str, rows: int) -> None:
        self.bars[benchmark](benchmark, rows)

    def close(self) -> None:
        for bars in self.bars.values():
            bars.close()


def run_bench_command(args: argparse.Namespace, judge: Judge | None = None) -> int:
    """Run `localjudge bench`; `judge` replaces the model given by --model (tests pass a fake)."""
    shared.load_modules(getattr(args, "scorer_module", None) or [])  # before any scorer name is read
    scorers = _names(args.scorer)
    if args.data:
        if args.benchmark:
            raise CliError("give either --data (your own labeled file) or --benchmark, not both")
        if not scorers or len(scorers) != 1:
            raise CliError("--data needs exactly one --scorer")
        if args.positive is None:
            raise CliError("--data needs --positive: the label value of the scorer's positive class")
        columns = columns_of(args)
        benchmarks = [custom_benchmark(args.data, scorer=scorers[0], label_col=args.label_col,
                                       positive=args.positive, columns=columns, name=args.name)]
        scorers = None
    else:
        benchmarks = select_benchmarks(_names(args.benchmark), scorers)
    if args.limit is not None and args.limit < 1:
        raise CliError("--limit must be at least 1")
    measured = list(dict.fromkeys(b.scorer for b in benchmarks))
    options = parse_scorer_options(args.scorer_option, measured)
    check_scorers([(name, 1.0, args.mode) for name in measured], options)  # before the model loads
    totals = {b.name: len(load_benchmark(b, args.limit)[1]) for b in benchmarks}  # data errors before the model
    check_output_dir(args.out_dir, "--out-dir")
    if args.fit_calibration is not None:
        check_output_file(args.fit_calibration, (".json",), "--fit-calibration")
    with hold_run(args.out_dir, f"--out-dir {args.out_dir}"):
        if judge is None:
            judge = model_flags.build_judge(args)
        bars = _Bars(totals, not getattr(args, "quiet", False))
        try:
            report = run_bench(judge, benchmarks, scorers=scorers, limit=args.limit, batch_size=args.batch_size,
                               out_dir=args.out_dir, n_boot=args.bootstrap, seed=args.seed,
                               resume=not args.no_resume, html=not args.no_html, progress=bars, mode=args.mode,
                               scorer_options=options, fit_calibration=args.fit_calibration)
        finally:
            bars.close()
    print(markdown_table(summary_table(report)))
    print(f"wrote {report.files['report.md']} (and report.json, plots) in {args.out_dir}", file=sys.stderr)
    for line in fitted_lines(report):
        print(line, file=sys.stderr)
    for ranking in filter(None, map(rank_modes, report.results)):  # --mode ensemble: what these labels say
        print(f"modes on {ranking.line()}", file=sys.stderr)
    return 0


def fitted_lines(report: BenchReport) -> list[str]:
    """One line per calibration map written (its cross-validated ECE and AUC before -> after) and
    per scorer that got none."""
    def value(figure: dict[str, float | None]) -> str:
        return "n/a" if figure["value"] is None else f"{figure['value']:.2f}"

    lines = [f"calibration of {m.scorer} ({m.fit['rows']} rows): ECE {value(m.fit['ece_before'])} -> "
             f"{value(m.fit['ece_after'])}, AUC {value(m.fit['auc_before'])} -> {value(m.fit['auc_after'])} "
             f"(cross-validated); written to {report.files['calibration']}" for m in report.calibration_maps]
    return lines + report.calibration_notes


def add_bench_parser(sub: Any) -> None:
    """Add the `bench` command to the `localjudge` subparsers."""
    parser = sub.add_parser(
        "bench",
        help="measure a judge against human labels (ROC-AUC, balanced accuracy, baselines, plots)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_flags(parser)
    parser.add_argument("--scorer", default=None,
                        help="comma-separated: keep to these scorers' benchmarks; with --data, exactly one")
    parser.add_argument("--benchmark", default=None,
                        help=f"comma-separated built-in benchmarks: {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--limit", type=int, default=None,
                        help="first N rows of each benchmark (built-in files stay balanced for even N)")
    parser.add_argument("--batch-size", type=int, default=8, help="rows per judge call (default: 8)")
    shared.add_mode_flag(parser)
    add_scorer_option_flag(parser)
    shared.add_scorer_module_flag(parser)
    parser.add_argument("--out-dir", default="bench-results", metavar="DIR", help="default: bench-results")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default: 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    parser.add_argument("--no-resume", action="store_true", help="do not read or write DIR/.progress/")
    parser.add_argument("--no-html", action="store_true", help="skip report.html")
    parser.add_argument("--fit-calibration", default=None, metavar="FILE",
                        help="also fit a calibration map per scorer (prob score -> rate of label 1, Platt scaling), "
                             "report it cross-validated and write it to FILE (.json) for score --calibration")
    own = parser.add_argument_group("your own labeled file (instead of the built-in benchmarks)")
    own.add_argument("--data", default=None, metavar="FILE", help="JSONL, JSON, CSV, parquet or a dataset folder")
    own.add_argument("--label-col", default="label", help="column with the human label (default: label)")
    own.add_argument("--positive", default=None, metavar="VALUE",
                     help="label value of the scorer's positive class (hallucinated / faithful / toxic)")
    own.add_argument("--name", default=None, help="benchmark name in the report (default: the file's stem)")
    add_column_flags(parser)
    parser.set_defaults(func=run_bench_command)
