"""The bench report's PNG plots: ROC curves, score histograms by label, reliability diagrams.

Drawn with matplotlib's object API (`Figure`, rendered by Agg), so no pyplot state and no
display backend are touched; matplotlib is imported only when a plot is drawn.
"""

from __future__ import annotations

from pathlib import Path

from localjudge.bench.metrics import roc_curve
from localjudge.bench.types import JUDGE, JUDGE_PROB, THRESHOLD, BenchReport, BenchResult


def draw_plots(report: BenchReport, out_dir: Path) -> dict[str, list[str]]:
    """Every plot of every benchmark into `out_dir`; benchmark -> the file names drawn."""
    plots: dict[str, list[str]] = {}
    for result in report.results:
        for suffix, draw in (("roc", plot_roc), ("hist", plot_histograms), ("reliability", plot_reliability)):
            name = f"{result.benchmark}-{suffix}.png"
            if draw(result, out_dir / name):
                plots.setdefault(result.benchmark, []).append(name)
    return plots


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
