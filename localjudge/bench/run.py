"""Accuracy against human labels: a scorer on a labeled benchmark, next to baselines.

`run_bench` scores each benchmark with its scorer (through `evaluate`, so runs resume) and
measures, on the rows the judge scored, how well the score separates the labels: ROC-AUC and
balanced accuracy, each with a stratified bootstrap 95% interval, for the hard score
(`<name>_score`) and the probability score (`<name>_prob_score`). The same rows get three
baselines that read no model: the majority class, word overlap between output and context
(context scorers only) and output length. A judge whose AUC does not exceed the best
baseline's is flagged ``NO``.

Orientation: every score is read so that higher means the label is 1. Label 1 is the
scorer's positive class (`Scorer.positive`: hallucinated, faithful, toxic), the direction its
score grows. Word overlap (for scorers whose prompts show a context) is oriented by the
scorer's direction: overlap as is where a high score is good (faithful), 1 - overlap where it is
bad (hallucinated); output length is used as is for every scorer (longer = label 1), so a
length AUC below 0.5 means shorter outputs are more often positive.
Balanced accuracy predicts label 1 when the score is at least half the scale (`THRESHOLD`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localjudge.bench.calibration_fit import fit_report
from localjudge.bench.claim_checks import claims_rule, count_claim_sources, route_rows
from localjudge.bench.cost import CountingJudge, cost_of
from localjudge.bench.data import Benchmark, load_benchmark, select_benchmarks
from localjudge.bench.metrics import (
    balanced_accuracy,
    best_threshold,
    bootstrap_ci,
    expected_calibration_error,
    majority_baseline,
    output_length,
    reliability_bins,
    roc_auc,
    split_halves,
    word_overlap,
)
from localjudge.bench.report import run_identity, write_report
from localjudge.bench.types import (
    JUDGE,
    JUDGE_PROB,
    THRESHOLD,
    BenchReport,
    BenchResult,
    Bin,
    Calibration,
    Estimate,
    ScoreRow,
    Series,
)
from localjudge.evaluation import ResultStore, evaluate, write_table
from localjudge.judge import Judge
from localjudge.result import ScoreResult
from localjudge.scorers import WORDS_PER_CLAIM, build_scorer
from localjudge.scoring import Scorer

if TYPE_CHECKING:
    from datasets import Dataset

log = logging.getLogger(__name__)


def _estimate(metric: Callable[..., float | None], scores: list[float], labels: list[int],
              n_boot: int, seed: int) -> Estimate:
    value = metric(scores, labels) if scores else None
    ci = bootstrap_ci(metric, scores, labels, n=n_boot, seed=seed) if value is not None else None
    return Estimate(value, *(ci or (None, None)))


def _verdict(auc: Estimate, best: float | None) -> str:
    if auc.value is None or best is None:
        return "n/a"
    if auc.value <= best:
        return "NO"
    return "YES" if auc.low is not None and auc.low > best else "UNCLEAR"


def _at_threshold(scores: list[float], labels: list[int]) -> float | None:
    return balanced_accuracy(scores, labels, THRESHOLD)


def measure(series: Series, baselines: dict[str, dict[int, float]], judged: dict[str, list[int]],
            n_boot: int = 1000, seed: int = 0) -> list[ScoreRow]:
    """The table of one benchmark: judge rows (flagged against the best baseline AUC on the same
    rows) then baseline rows (on the hard score's rows). `baselines` and `judged` give each
    baseline's value and each judge score's row indices, by row index."""
    table = []
    for name, rows in judged.items():
        scores, y = series[name]
        auc = _estimate(roc_auc, scores, y, n_boot, seed)
        best = max([0.5] + [a for b in baselines.values()
                            if (a := roc_auc([b[i] for i in rows], y)) is not None]) if auc.value is not None else None
        table.append(ScoreRow(name, "judge", len(y), auc, _estimate(_at_threshold, scores, y, n_boot, seed),
                              _verdict(auc, best), best))
    y = series[JUDGE][1]
    majority = majority_baseline(y)
    if majority is not None:
        half = Estimate(0.5, 0.5, 0.5)
        table.append(ScoreRow("majority class", "baseline", len(y), half, half,
                              note=f"always {majority.label}; plain accuracy {majority.accuracy:.2f}"))
    for name, values in baselines.items():
        scores = [values[i] for i in judged[JUDGE]]
        threshold = name != "output length"
        table.append(ScoreRow(name, "baseline", len(y), _estimate(roc_auc, scores, y, n_boot, seed),
                              _estimate(_at_threshold, scores, y, n_boot, seed) if threshold else None))
    return table


def calibration(scores: list[float], labels: list[int], n_boot: int = 1000, seed: int = 0) -> Calibration:
    """A judge score read as a probability of label 1: its ECE and reliability bins, and a
    threshold tuned on one stratified half of the rows and reported on the other."""

    bins = [Bin(*b) for b in reliability_bins(scores, labels)]
    tune, test = split_halves(labels, seed)
    tuned = best_threshold([scores[i] for i in tune], [labels[i] for i in tune]) if tune else None
    held_out = Estimate(None)
    if tuned is not None and test:
        t = tuned[0]

        def at_tuned(s: Sequence[float], y: Sequence[int]) -> float | None:
            return balanced_accuracy(s, y, t)

        held_out = _estimate(at_tuned, [scores[i] for i in test], [labels[i] for i in test], n_boot, seed)
    ece = _estimate(expected_calibration_error, scores, labels, n_boot, seed)
    return Calibration(ece, bins, tuned[0] if tuned else None, tuned[1] if tuned else None, held_out,
                       len(tune), len(test))


def bench_one(judge: Judge, bench: Benchmark, dataset: Dataset, labels: list[int], *, batch_size: int = 8,
              n_boot: int = 1000, seed: int = 0, store_dir: Path | None = None,
              progress: Callable[[str, int], None] | None = None, mode: str = "pipeline",
              options: Mapping[str, Any] | None = None) -> tuple[BenchResult, Dataset]:
    """Score one benchmark's rows (from `load_benchmark`) and measure them against `labels`;
    `options`: its scorer's (see `localjudge.scorers.build_scorer`).

    Returns:
        The result and the scored dataset (the rows plus the scorer's columns).
    """
    counted = CountingJudge(judge)
    scorer = build_scorer(bench.scorer, counted, mode=mode, options=options)
    store = ResultStore(store_dir / bench.name) if store_dir is not None else None
    log.info("bench %s: %d rows with the %s scorer", bench.name, len(dataset), scorer.name)
    evaluation = evaluate(dataset, [scorer], batch_size=batch_size, columns=bench.columns, store=store,
                          progress=(lambda _, rows: progress(bench.name, rows)) if progress else None)
    results, samples = evaluation.results[scorer.name], evaluation.samples[scorer.name]
    kept = [i for i, r in enumerate(results) if r.scored]
    # A row decided without the analyze step (empty output, no claims) has no label to be
    # unsure about: its prob score is its hard score. Others without a prob score are left out.
    shortcut = {i for i in kept if results[i].analyze_step_result is None}
    has_prob = any(r.prob_score is not None for r in results)
    judged = {JUDGE: kept}
    if has_prob:
        judged[JUDGE_PROB] = [i for i in kept if results[i].prob_score is not None or i in shortcut]
    if mode == "ensemble":  # each mode's probability beside their mean, on the mean's rows
        for part in ENSEMBLE_PARTS:
            judged[f"{part} prob score"] = [i for i in judged.get(JUDGE_PROB, [])
                                            if _part_probability(results[i], part) is not None]
    baselines = _baselines(scorer, {i: samples[i] for i in kept})

    def values(name: str, i: int) -> float:
        r = results[i]
        if name.endswith(" prob score") and name.split()[0] in ENSEMBLE_PARTS:
            return _part_probability(r, name.split()[0]) / scorer.scale  # type: ignore[operator]  # (rows with one)
        value = r.score if name == JUDGE or r.prob_score is None else r.prob_score
        return value / scorer.scale  # type: ignore[operator]  # scored rows only

    series: Series = {name: ([values(name, i) for i in rows], [labels[i] for i in rows])
                      for name, rows in judged.items()}
    for name, by_row in baselines.items():
        series[name] = ([by_row[i] for i in kept], [labels[i] for i in kept])
    table = measure(series, baselines, judged, n_boot, seed) if kept else []
    unscored = sum(r.failed for r in results)
    not_scorable = sum(r.not_scorable for r in results)
    reasons = Counter((r.error or "")[:100] for r in results if r.failed)
    notes = _notes(scorer.positive, len(results), unscored, judged, shortcut, has_prob, table)
    if not_scorable:
        notes.append(f"{not_scorable} of {len(results)} rows are not scorable (a step of the scorer declared them "
                     "so: not failures); every figure leaves them out.")
    sources = count_claim_sources(results, samples)
    if sources.get("claims"):
        notes.append(f"Claims ({sources['claims']} on {sources['rows']} rows): {sources.get('from output', 0)} "
                     f"use only the output's words, {sources.get('from question', 0)} also the question's, "
                     f"{sources.get('from neither', 0)} have words found in neither; {sources.get('capped rows', 0)} "
                     "row(s) reached the claim cap.")
    if sources.get("terse rows"):
        notes.append(f"{sources['terse rows']} terse output(s) (at most {WORDS_PER_CLAIM} words) were judged as "
                     "one claim read with the question, with no claims step.")
    calibrated = {name: calibration(*series[name], n_boot=n_boot, seed=seed)
                  for name in judged if len(set(series[name][1])) == 2}
    rule = claims_rule(build_scorer(bench.scorer, judge, options=options))  # the pipeline's route, in either mode
    routes = [] if rule is None or not kept else route_rows(
        rule, {i: s for i in kept if (s := samples[i]) is not None}, judged, values, labels,
        lambda scores, y: _estimate(roc_auc, scores, y, n_boot, seed))
    result = BenchResult(bench.name, scorer.name, f"{scorer.version}@{scorer.prompt_hash}", scorer.positive,
                         len(results), sum(labels), len(kept), unscored, dict(reasons.most_common(5)), table,
                         notes, series, sources, calibrated, routes, not_scorable,
                         cost_of(mode, len(results), evaluation.summary[scorer.name], counted.calls))
    return result, evaluation.dataset


ENSEMBLE_PARTS = ("pipeline", "direct")  # an ensemble row's two modes (`localjudge.scorers.judged.ensemble`)


def _part_probability(result: ScoreResult, part: str) -> float | None:
    """The probability one mode of an ensemble row put into the mean (its `analyze` side)."""
    sides = result.analyze_step_result
    side = sides.get(part) if isinstance(sides, dict) else None
    return side.get("probability") if isinstance(side, dict) else None


# The texts word overlap compares, by what a scorer shows: (the judged text, what it is checked against).
OVERLAPS = (({"output", "context"}, ("output", "context")),  # hallucination, faithfulness...
            ({"ground_truth", "context"}, ("ground_truth", "context")),  # context recall
            ({"output", "ground_truth"}, ("output", "ground_truth")))  # answer similarity


def _baselines(scorer: Scorer, samples: dict[int, Any]) -> dict[str, dict[int, float]]:
    """The model-free scores of the scored rows: word overlap (for a scorer whose prompts show a
    context or a ground truth, and whose score has a direction, oriented by it) and output length."""
    baselines: dict[str, dict[int, float]] = {}
    pair = next((pair for shown, pair in OVERLAPS if shown <= scorer.shown_fields), None)
    if pair is not None and scorer.higher_is_better is not None:
        text, against = pair
        overlap = {i: word_overlap(getattr(s, text) or "", getattr(s, against)) for i, s in samples.items()}
        name = "word overlap" if pair == ("output", "context") else f"word overlap ({text.replace('_', ' ')}, " \
            f"{against.replace('_', ' ')})"
        if scorer.higher_is_better:
            baselines[name] = overlap
        else:
            baselines[f"1 - {name}"] = {i: 1.0 - v for i, v in overlap.items()}
    baselines["output length"] = {i: output_length(s.output) for i, s in samples.items()}
    return baselines


def _notes(positive: str, rows: int, unscored: int, judged: dict[str, list[int]],
           shortcut: set[int], has_prob: bool, table: list[ScoreRow]) -> list[str]:
    notes = []
    kept = judged[JUDGE]
    if unscored:
        notes.append(f"{unscored} of {rows} rows are unscored; every figure, baselines included, leaves them out.")
    if not has_prob:
        notes.append("The judge gave no label probabilities, so there is no prob score.")
    else:
        if shortcut:
            notes.append(f"{len(shortcut)} row(s) were decided without the analyze step (empty output or no "
                         "claims); their prob score is their hard score.")
        missing = len(kept) - len(judged[JUDGE_PROB])
        if missing:
            notes.append(f"{missing} scored row(s) have no prob score and are left out of its line.")
    if not kept:
        notes.append("No row was scored: there is nothing to measure.")
    elif any(r.auc.value is None for r in table if r.kind == "judge"):
        notes.append("Only one label among the scored rows: AUC and balanced accuracy are undefined.")
    length = next((row.auc for row in table if row.name == "output length"), None)
    if length is not None and length.high is not None and length.high < 0.5:  # clearly below chance
        reverse = 1 - length.value  # type: ignore[operator]
        notes.append(f"Output length AUC {length.value:.2f} (interval below 0.5): shorter outputs are more often "
                     f"{positive}. That reverse rule reaches {reverse:.2f}; it is not "
                     "counted as a baseline, since its direction was read off these labels.")
        for row in table:
            if row.kind == "judge" and row.auc.value is not None and row.auc.value <= reverse:
                notes.append(f"The {row.name} ({row.auc.value:.2f}) does not beat that reverse length rule either.")
    return notes


def run_bench(judge: Judge, benchmarks: Sequence[str | Benchmark] | None = None, *,
              scorers: Sequence[str] | None = None, limit: int | None = None, batch_size: int = 8,
              out_dir: str | Path | None = None, n_boot: int = 1000, seed: int = 0, resume: bool = True,
              html: bool = True, progress: Callable[[str, int], None] | None = None,
              mode: str = "pipeline", scorer_options: Mapping[str, Mapping[str, Any]] | None = None,
              fit_calibration: str | Path | None = None) -> BenchReport:
    """Measure `judge` on benchmarks against their labels and write the report.

    Args:
        judge: The judge (any `Judge`; tests pass a `FakeJudge`).
        benchmarks: Built-in names or `Benchmark` values (see `custom_benchmark`); default:
            every built-in benchmark of `scorers` (or all).
        scorers: Keep to benchmarks of these scorers.
        limit: Use the first N rows of each benchmark (built-in files stay balanced).
        batch_size: Rows per judge call.
        out_dir: Where report.md, report.json, the plots, report.html, the scored rows
            (`scored/<benchmark>.jsonl`) and the resume logs (`.progress/`) go; None writes nothing.
        n_boot: Bootstrap resamples per interval.
        seed: Bootstrap seed.
        resume: Reuse and extend the resume logs under `out_dir`.
        html: Also write a self-contained report.html.
        progress: Called with (benchmark name, rows just finished).
        mode: The scorers' mode: ``"pipeline"``, ``"direct"`` (see `localjudge.scorers.judged.direct`) or
            ``"ensemble"`` (both; `localjudge.scorers.judged.ensemble`). Each benchmark's `BenchResult.cost`
            says what it cost (judge calls, rows/s), to compare the modes.
        scorer_options: Each scorer's options, by scorer name (``{"rubric": {"criteria": [...]}}``;
            see `localjudge.scorers.build_scorer`).
        fit_calibration: Also fit a calibration map per scorer, written to this JSON file and reported
            cross-validated (`localjudge.bench.calibration_fit`); `ValueError`, after the report, if none.
    """
    chosen = select_benchmarks(benchmarks, scorers)
    loaded = [load_benchmark(bench, limit) for bench in chosen]  # every data error before the first model call
    started = time.time()
    out = Path(out_dir) if out_dir is not None else None
    results = []
    for bench, (dataset, labels) in zip(chosen, loaded, strict=True):
        result, scored = bench_one(judge, bench, dataset, labels, batch_size=batch_size, n_boot=n_boot, seed=seed,
                                   store_dir=out / ".progress" if out is not None and resume else None,
                                   progress=progress, mode=mode, options=(scorer_options or {}).get(bench.scorer))
        results.append(result)
        if out is not None:
            write_table(scored, out / "scored" / f"{bench.name}.jsonl")
    identity = run_identity(judge, chosen, results, limit=limit, seed=seed, n_boot=n_boot, started=started)
    report = BenchReport(results, identity)
    if fit_calibration is not None:
        report = fit_report(report, fit_calibration, mode=mode, n_boot=n_boot, seed=seed)
    if out is not None:
        report = replace(report, files={**report.files, **write_report(report, out, html=html)})
    if fit_calibration is not None and not report.calibration_maps:
        raise ValueError(f"no calibration written to {fit_calibration}: {'; '.join(report.calibration_notes)}")
    return report
