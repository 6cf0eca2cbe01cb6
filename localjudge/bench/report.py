"""Writing a bench report: report.md, report.json and a self-contained report.html, with the
PNG plots (`localjudge.bench.plots`) linked and inlined."""

from __future__ import annotations

import base64
import hashlib
import json
import platform
import re
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from html import escape
from importlib import metadata
from pathlib import Path
from typing import Any

from localjudge.bench.cost import cost_text
from localjudge.bench.data import Benchmark
from localjudge.bench.plots import draw_plots
from localjudge.bench.types import JUDGE, JUDGE_PROB, THRESHOLD, BenchReport, BenchResult, Estimate
from localjudge.judge import Judge
from localjudge.scorers import WORDS_PER_CLAIM

FLAG = re.compile(r"\b(NO|UNCLEAR)\b")  # verdicts shown in bold: the judge did not clearly win
# distributions, as installed (this package's is localjudge-evals; it imports as localjudge)
LIBRARIES = ("localjudge-evals", "torch", "transformers", "outlines", "datasets", "numpy", "matplotlib")
READING = (
    "Scores are oriented so that higher means label 1 (the scorer's positive class). ROC-AUC: "
    "0.5 is chance, 1 is perfect, below 0.5 the reverse rule predicts. Balanced accuracy: mean "
    f"of the true positive and true negative rates, predicting label 1 when the score is at "
    f"least {THRESHOLD:g} of the scale. Intervals: 95% stratified bootstrap. Beats baselines? "
    "YES: the judge's AUC interval lies above the best baseline AUC on the same rows; UNCLEAR: "
    "higher, but inside the interval; NO: not higher."
)


CALIBRATION = (
    "Calibration: each judge score read as the probability of label 1. ECE (expected calibration error): "
    "over ten equal-width bins, the row-weighted mean gap between the share of label 1 and the mean score; "
    "0 is calibrated (the reliability plot shows the bins). Tuned threshold: the one with the best balanced "
    "accuracy on a stratified half of the rows (seeded), then measured on the other half: what a threshold "
    "chosen on your own labeled data would give."
)
FITTED = (
    "Calibration maps fitted on these labels (Platt scaling on the log-odds: sigmoid(a * logit(prob score) + b), "
    "one per scorer, its benchmarks' rows pooled), written to the calibration file for `localjudge score "
    "--calibration`. AUC and ECE are cross-validated: {folds}; before is the prob score, after the calibrated "
    "probability, on the same rows, with 95% bootstrap intervals."
)
ROUTES = (
    f"By route: a terse output (at most {WORDS_PER_CLAIM} words) is one claim by rule, a longer one goes "
    "through the claims step. Where the label goes with output length, an AUC over both can come from the "
    "route, not judgment: each route alone, next to output length."
)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def run_identity(judge: Judge, benchmarks: Sequence[Benchmark], results: Sequence[BenchResult], *,
                 limit: int | None, seed: int, n_boot: int, started: float) -> dict[str, Any]:
    """What makes a bench run reproducible: judge, prompt versions, libraries, data, seed, time."""
    return {
        "judge": judge.identity,
        "scorers": {r.scorer: r.scorer_version for r in results},
        "libraries": {name: _version(name) for name in LIBRARIES},
        "python": platform.python_version(),
        "benchmarks": {
            b.name: {"scorer": b.scorer, "path": str(b.path), "sha256": _sha256(b.path),
                     "label_col": b.label_col, "positive": b.positive}
            for b in benchmarks
        },
        "limit": limit,
        "seed": seed,
        "bootstrap_resamples": n_boot,
        "threshold": THRESHOLD,
        "started_utc": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        "elapsed_seconds": round(time.time() - started, 3),
    }


def fmt(estimate: Estimate | None) -> str:
    """``0.83 [0.77, 0.89]``; ``n/a`` when undefined, ``-`` when not applicable."""
    if estimate is None:
        return "-"
    if estimate.value is None:
        return "n/a"
    if estimate.low is None:
        return f"{estimate.value:.2f}"
    return f"{estimate.value:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"


def summary_table(report: BenchReport) -> list[dict[str, str]]:
    """One line per benchmark: judge AUCs, the best baseline and the verdicts."""
    lines = []
    for r in report.results:
        judge = {row.name: row for row in r.table if row.kind == "judge"}
        best = max((row for row in r.table if row.kind == "baseline"), key=lambda row: row.auc.value or 0.0,
                   default=None)
        lines.append({
            "benchmark": r.benchmark, "scorer": r.scorer, "scored": f"{r.scored}/{r.rows}",
            "judge AUC": fmt(judge[JUDGE].auc) if JUDGE in judge else "n/a",
            "prob AUC": fmt(judge[JUDGE_PROB].auc) if JUDGE_PROB in judge else "n/a",
            "best baseline (AUC)": (f"{best.name} ({best.auc.value:.2f})"
                                    if best and best.auc.value is not None else "-"),
            "beats baselines? (judge / prob)": " / ".join(
                judge[name].beats_baselines or "n/a" if name in judge else "n/a" for name in (JUDGE, JUDGE_PROB)),
            "prob ECE": fmt(r.calibration[JUDGE_PROB].ece) if JUDGE_PROB in r.calibration else "n/a",
        })
    return lines


def result_table(result: BenchResult) -> list[dict[str, str]]:
    """The per-benchmark table: judge scores, then baselines."""
    return [{
        "score": row.name, "kind": row.kind, "n": str(row.n), "ROC-AUC [95% CI]": fmt(row.auc),
        f"balanced acc. @{THRESHOLD:g} [95% CI]": fmt(row.balanced_accuracy),
        "beats baselines?": row.beats_baselines or "", "note": row.note,
    } for row in result.table]


def calibration_table(result: BenchResult) -> list[dict[str, str]]:
    """Per judge score: its ECE, and the threshold tuned on one half, reported on the other."""
    return [{
        "score": name, "ECE [95% CI]": fmt(c.ece),
        "tuned threshold": "n/a" if c.threshold is None else f"{c.threshold:.2f}",
        "bal. acc. (tuning half)": "n/a" if c.tuned_balanced_accuracy is None else f"{c.tuned_balanced_accuracy:.2f}",
        "bal. acc. (held-out half) [95% CI]": fmt(c.held_out_balanced_accuracy),
        "rows (tune / test)": f"{c.n_tune} / {c.n_test}",
    } for name, c in result.calibration.items()]


def _figure(figure: dict[str, float | None]) -> str:
    return fmt(Estimate(figure["value"], figure["low"], figure["high"]))


def fitted_table(report: BenchReport) -> list[dict[str, str]]:
    """Per calibration map fitted: what it was fitted on, its numbers, and AUC and ECE before and
    after, cross-validated."""
    return [{
        "scorer": m.scorer, "mode": m.mode, "rows (label 1)": f"{m.fit['rows']} ({m.fit['positives']})",
        "a, b": f"{m.a:.3f}, {m.b:.3f}", "AUC before": _figure(m.fit["auc_before"]),
        "AUC after": _figure(m.fit["auc_after"]), "ECE before": _figure(m.fit["ece_before"]),
        "ECE after": _figure(m.fit["ece_after"]),
    } for m in report.calibration_maps]


def _fitted_text(report: BenchReport) -> list[str]:
    """The calibration section's paragraph, then its notes (scorers that got no map)."""
    if not report.calibration_maps and not report.calibration_notes:
        return []
    folds = report.calibration_maps[0].fit["cross_validation"] if report.calibration_maps else "-"
    return [FITTED.format(folds=folds), *report.calibration_notes]


def route_table(result: BenchResult) -> list[dict[str, str]]:
    """Claim scorers: the judge's AUCs and output length's on each route's rows alone."""
    return [{"route": r.route, "rows (label 1)": f"{r.n} ({r.positives})", "judge AUC": fmt(r.judge_auc),
             "prob AUC": fmt(r.prob_auc) if r.prob_auc else "n/a", "output length AUC": fmt(r.length_auc)}
            for r in result.routes]


def _markdown_table(lines: list[dict[str, str]]) -> str:
    if not lines:
        return "(nothing measured)"
    head = list(lines[0])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(out + ["| " + " | ".join(FLAG.sub(r"**\1**", line[h]).replace("|", "\\|") for h in head) + " |"
                            for line in lines])


def _heading(result: BenchResult) -> str:
    return (f"{result.benchmark} ({result.scorer} scorer, {result.scorer_version}; "
            f"label 1 = {result.positive_means})")


def _counts(result: BenchResult) -> str:
    apart = f", {result.not_scorable} not scorable" if result.not_scorable else ""
    cost = f" {cost_text(result.cost)}" if result.cost is not None else ""
    return (f"{result.rows} rows ({result.positives} labeled 1), {result.scored} scored, "
            f"{result.unscored} unscored{apart}.{cost}")


def _rows_used(identity: dict[str, Any]) -> str:
    limit = identity["limit"]
    return "all rows of each benchmark" if limit is None else f"the first {limit} rows of each benchmark"


def render_markdown(report: BenchReport, plots: dict[str, list[str]]) -> str:
    ident = report.identity
    parts = [
        "# localjudge bench", "",
        f"Judge: `{ident['judge']}`  ", f"Started {ident['started_utc']} (UTC), {ident['elapsed_seconds']:.1f} s; "
        f"seed {ident['seed']}, {ident['bootstrap_resamples']} bootstrap resamples; {_rows_used(ident)}.", "",
        READING, "", "## Summary", "", _markdown_table(summary_table(report)), "",
    ]
    fitted = _fitted_text(report)
    if fitted:
        parts += ["## Calibration maps", "", fitted[0], "", _markdown_table(fitted_table(report)), "",
                  *(f"- {note}" for note in fitted[1:]), ""]
    for result in report.results:
        parts += [f"## {_heading(result)}", "", _counts(result), "", _markdown_table(result_table(result)), ""]
        if result.calibration:
            parts += [CALIBRATION, "", _markdown_table(calibration_table(result)), ""]
        if result.routes:
            parts += [ROUTES, "", _markdown_table(route_table(result)), ""]
        parts += [f"- {note}" for note in result.notes]
        parts += [f"- unscored ({count}): {reason}" for reason, count in result.errors.items()]
        parts += ["", *(f"![{name}]({name})" for name in plots.get(result.benchmark, ())), ""]
    return "\n".join(parts)


def _html_table(lines: list[dict[str, str]]) -> str:
    if not lines:
        return "<p>(nothing measured)</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in lines[0])
    body = "".join(
        "<tr>" + "".join(f"<td class='{'flag' if FLAG.search(v) else ''}'>{escape(v)}</td>"
                         for v in line.values()) + "</tr>" for line in lines)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_html(report: BenchReport, plots: dict[str, list[str]], out_dir: Path) -> str:
    """One self-contained page: the tables and the PNGs inlined as base64."""
    ident = report.identity
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>localjudge bench</title><style>"
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}.flag{color:#b00;font-weight:bold}"
        "img{max-width:49%}</style></head><body><h1>localjudge bench</h1>",
        f"<p>Judge: <code>{escape(ident['judge'])}</code><br>Started {ident['started_utc']} (UTC), "
        f"{ident['elapsed_seconds']:.1f} s; seed {ident['seed']}, {ident['bootstrap_resamples']} bootstrap "
        f"resamples; {_rows_used(ident)}.</p>",
        f"<p>{escape(READING)}</p><h2>Summary</h2>", _html_table(summary_table(report)),
    ]
    fitted = _fitted_text(report)
    if fitted:
        parts += [f"<h2>Calibration maps</h2><p>{escape(fitted[0])}</p>", _html_table(fitted_table(report)),
                  "<ul>", *(f"<li>{escape(note)}</li>" for note in fitted[1:]), "</ul>"]
    for result in report.results:
        parts += [f"<h2>{escape(_heading(result))}</h2><p>{escape(_counts(result))}</p>",
                  _html_table(result_table(result))]
        if result.calibration:
            parts += [f"<p>{escape(CALIBRATION)}</p>", _html_table(calibration_table(result))]
        if result.routes:
            parts += [f"<p>{escape(ROUTES)}</p>", _html_table(route_table(result))]
        parts.append("<ul>")
        parts += [f"<li>{escape(note)}</li>" for note in result.notes]
        parts += [f"<li>unscored ({count}): {escape(reason)}</li>" for reason, count in result.errors.items()]
        parts.append("</ul>")
        for name in plots.get(result.benchmark, ()):
            data = base64.b64encode((out_dir / name).read_bytes()).decode("ascii")
            parts.append(f"<img alt='{escape(name)}' src='data:image/png;base64,{data}'>")
    return "\n".join(parts + ["</body></html>"])


def write_report(report: BenchReport, out_dir: Path, *, html: bool = True) -> dict[str, str]:
    """Write the plots, report.md, report.json and (optionally) report.html; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = draw_plots(report, out_dir)
    files = {"report.md": str(out_dir / "report.md"), "report.json": str(out_dir / "report.json")}
    files.update({name: str(out_dir / name) for names in plots.values() for name in names})
    files.update({f"scored/{r.benchmark}.jsonl": str(out_dir / "scored" / f"{r.benchmark}.jsonl")
                  for r in report.results if (out_dir / "scored" / f"{r.benchmark}.jsonl").exists()})
    if html:
        files["report.html"] = str(out_dir / "report.html")
        (out_dir / "report.html").write_text(render_html(report, plots, out_dir), encoding="utf-8")
    (out_dir / "report.md").write_text(render_markdown(report, plots), encoding="utf-8")
    data = {**report.to_dict(), "files": {**report.files, **files}}
    (out_dir / "report.json").write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return files
