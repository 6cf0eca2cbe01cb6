"""Writing a bench report: report.md, report.json, PNG plots and a self-contained report.html.

Plots are drawn with matplotlib's object API (`Figure`, rendered by Agg), so no pyplot state
and no display backend are touched.
"""

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

from localjudge.bench.data import Benchmark
from localjudge.bench.metrics import roc_curve
from localjudge.bench.types import JUDGE, JUDGE_PROB, THRESHOLD, BenchReport, BenchResult, Estimate
from localjudge.judge import Judge

FLAG = re.compile(r"\b(NO|UNCLEAR)\b")  # verdicts shown in bold: the judge did not clearly win
LIBRARIES = ("localjudge", "torch", "transformers", "outlines", "datasets", "numpy", "matplotlib")
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
    return (f"{result.rows} rows ({result.positives} labeled 1), {result.scored} scored, "
            f"{result.unscored} unscored.")


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
    for result in report.results:
        parts += [f"## {_heading(result)}", "", _counts(result), "", _markdown_table(result_table(result)), ""]
        if result.calibration:
            parts += [CALIBRATION, "", _markdown_table(calibration_table(result)), ""]
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
    for result in report.results:
        parts += [f"<h2>{escape(_heading(result))}</h2><p>{escape(_counts(result))}</p>",
                  _html_table(result_table(result))]
        if result.calibration:
            parts += [f"<p>{escape(CALIBRATION)}</p>", _html_table(calibration_table(result))]
        parts.append("<ul>")
        parts += [f"<li>{escape(note)}</li>" for note in result.notes]
        parts += [f"<li>unscored ({count}): {escape(reason)}</li>" for reason, count in result.errors.items()]
        parts.append("</ul>")
        for name in plots.get(result.benchmark, ()):
            data = base64.b64encode((out_dir / name).read_bytes()).decode("ascii")
            parts.append(f"<img alt='{escape(name)}' src='data:image/png;base64,{data}'>")
    return "\n".join(parts + ["</body></html>"])


def plot_roc(result: BenchResult, path: Path) -> bool:
    """ROC curves of the judge scores and the baselines; False when no curve is defined."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 5))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="chance / majority class (0.50)")
    drawn = False
    for name, (scores, labels) in result.series.items():
        curve = roc_curve(scores, labels) if scores else None
        if curve is None:
            continue
        auc = next(row.auc.value for row in result.table if row.name == name)
        style = "-" if name in (JUDGE, JUDGE_PROB) else "--"
        ax.plot(*curve, linestyle=style, label=f"{name} ({auc:.2f})")
        drawn = True
    if not drawn:
        return False
    ax.set(xlabel="false positive rate", ylabel="true positive rate", xlim=(0, 1), ylim=(0, 1.01),
           title=f"{result.benchmark}: ROC (AUC)")
    ax.legend(loc="lower right", fontsize="small")
    fig.savefig(path, dpi=90)
    return True


def plot_histograms(result: BenchResult, path: Path) -> bool:
    """Judge score histograms split by label; False when there are no judge scores."""
    from matplotlib.figure import Figure

    names = [n for n in (JUDGE, JUDGE_PROB) if result.series.get(n, ([], []))[0]]
    if not names:
        return False
    fig = Figure(figsize=(5 * len(names), 4))
    bins = [i / 20 for i in range(21)]
    for k, name in enumerate(names):
        ax = fig.add_subplot(1, len(names), k + 1)
        scores, labels = result.series[name]
        for label, colour in ((0, "tab:blue"), (1, "tab:red")):
            ax.hist([s for s, y in zip(scores, labels, strict=True) if y == label], bins=bins, alpha=0.55,
                    color=colour,
                    label=f"label {label}" + (f" ({result.positive_means})" if label else ""))
        ax.axvline(THRESHOLD, color="grey", linestyle=":")
        ax.set(xlabel=f"{name} (fraction of scale)", ylabel="rows", title=f"{result.benchmark}: {name}")
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def plot_reliability(result: BenchResult, path: Path) -> bool:
    """Reliability diagram of each calibrated judge score; False when there is none."""
    from matplotlib.figure import Figure

    if not result.calibration:
        return False
    fig = Figure(figsize=(5, 5))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="calibrated")
    for name, c in result.calibration.items():
        points = [(b.mean_prob, b.positive_rate) for b in c.bins if b.n]
        ece = "n/a" if c.ece.value is None else f"{c.ece.value:.2f}"
        ax.plot(*zip(*points, strict=True), marker="o", label=f"{name} (ECE {ece})")
    ax.set(xlabel="mean score in bin (fraction of scale)", ylabel=f"share of label 1 ({result.positive_means})",
           xlim=(0, 1), ylim=(0, 1.01), title=f"{result.benchmark}: reliability")
    ax.legend(loc="upper left", fontsize="small")
    fig.savefig(path, dpi=90)
    return True


def write_report(report: BenchReport, out_dir: Path, *, html: bool = True) -> dict[str, str]:
    """Write the plots, report.md, report.json and (optionally) report.html; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plots: dict[str, list[str]] = {}
    for result in report.results:
        for suffix, draw in (("roc", plot_roc), ("hist", plot_histograms), ("reliability", plot_reliability)):
            name = f"{result.benchmark}-{suffix}.png"
            if draw(result, out_dir / name):
                plots.setdefault(result.benchmark, []).append(name)
    files = {"report.md": str(out_dir / "report.md"), "report.json": str(out_dir / "report.json")}
    files.update({name: str(out_dir / name) for names in plots.values() for name in names})
    files.update({f"scored/{r.benchmark}.jsonl": str(out_dir / "scored" / f"{r.benchmark}.jsonl")
                  for r in report.results if (out_dir / "scored" / f"{r.benchmark}.jsonl").exists()})
    if html:
        files["report.html"] = str(out_dir / "report.html")
        (out_dir / "report.html").write_text(render_html(report, plots, out_dir), encoding="utf-8")
    (out_dir / "report.md").write_text(render_markdown(report, plots), encoding="utf-8")
    data = {**report.to_dict(), "files": files}
    (out_dir / "report.json").write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return files
