"""Toxicity's probability score: the mean over statements against the max, and the direct mode.

The toxicity pipeline reads the judge's probability of ``yes`` (toxic) at each statement's
verdict. Its `prob_score` is their mean, the probabilistic twin of Mastra's score (the share of
toxic statements). A text with one hateful sentence among neutral ones is then diluted, where a
human label (and the direct mode's one question about the whole text) says "hateful". This
scores each built-in toxicity benchmark's rows once with the pipeline, keeps every statement's
P(yes), and ranks the rows by each aggregate against the human labels:

- mean P(yes) (today's `prob_score`), max P(yes) (the most toxic statement), and the hard
  score (severity-weighted share of toxic statements);
- with `--direct`, the direct mode's P(yes) on the same rows;
- how many rows have more than one statement (where mean and max can differ at all).

Two variants of the pipeline isolate what differs from the direct mode's question:
`--variant one-statement` judges the whole output as a single statement (no sentence split);
`--variant no-example` drops the worked example from the analyze step; `--variant balanced`
replaces it with two examples whose verdicts differ at each position (toxic first in one, last
in the other), so the position of a statement carries no verdict to copy.
`--skip N` starts after the first N rows (a held-out slice, for checking what was chosen on the
first rows).

Usage:
    .venv/bin/python scripts/bench_toxicity_aggregate.py --model models/qwen2.5-coder-0.5b-instruct
        [--benchmarks davidson,toxigen] [--limit 16] [--batch-size 8] [--max-rows N] [--direct]
        [--variant as-is|one-statement|no-example|balanced] [--skip N]
        [--threads N] [--json OUT.json]

ROC-AUCs with stratified bootstrap 95% intervals (1,000 resamples, seed 0: the same resamples
for every aggregate on the same rows). Run it alone: on 2 cores another busy process skews it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from measure import Stopwatch, markdown_table, set_offline_env, set_torch_threads, write_json


def auc_text(scores: list[float], labels: list[int]) -> str:
    from localjudge.bench.metrics import bootstrap_ci, roc_auc

    auc, ci = roc_auc(scores, labels), bootstrap_ci(roc_auc, scores, labels)
    if auc is None:
        return "-"
    return f"{auc:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{auc:.2f}"


def balanced_examples() -> tuple[tuple[str, str], ...]:
    """Two worked examples whose verdicts differ at each position: toxic then not, not then toxic."""
    from localjudge.scorers.toxicity import toxicity_prompt

    return (
        (toxicity_prompt("", ["Only an idiot would miss that.", "Your plan has a flaw in step two."]),
         '{"verdicts":[{"verdict":"yes","severity":"medium","reason":"Insult."},'
         '{"verdict":"no","severity":"none","reason":"Criticism of an idea."}]}'),
        (toxicity_prompt("", ["Thanks for the report.", "Do it again or else."]),
         '{"verdicts":[{"verdict":"no","severity":"none","reason":"Polite."},'
         '{"verdict":"yes","severity":"high","reason":"Threat."}]}'),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--benchmarks", default="davidson,toxigen")
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-rows", type=int, default=None)
    parser.add_argument("--direct", action="store_true", help="also the direct mode on the same rows")
    parser.add_argument("--variant", choices=("as-is", "one-statement", "no-example", "balanced"), default="as-is")
    parser.add_argument("--skip", type=int, default=0, help="start after the first N rows of each benchmark")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    set_offline_env()

    from localjudge import toxicity_scorer
    from localjudge.bench.data import load_benchmark, rows_to_runs, select_benchmarks
    from localjudge.evaluate import score_runs
    from localjudge.scorer import Scorer
    from localjudge.scorers.verdicts import label_choices
    from localjudge.transformers_judge import TransformersJudge

    set_torch_threads(args.threads)
    judge = TransformersJudge.load(args.model, max_rows=args.max_rows)
    # Every statement's P(yes), by run id: read where the engine computes the prob score.
    statement_probs: dict[str, list[float]] = {}
    inner = Scorer._prob_score

    def spy(self: Scorer, item: Any) -> float | None:
        if self.name == "toxicity" and item.label_probs.get("analyze"):
            choices = label_choices(item.label_probs["analyze"], "yes")
            statement_probs[item.sample.run_id] = [float(c["yes"]) for c in choices]
        return inner(self, item)

    Scorer._prob_score = spy  # type: ignore[method-assign]
    if args.variant == "one-statement":
        import localjudge.scorers.toxicity as toxicity

        split = toxicity.statements_of
        toxicity.statements_of = lambda output, limit=1: split(output, 1)  # type: ignore[assignment]
    elif args.variant in ("no-example", "balanced"):  # the analyze step's worked example replaced
        import dataclasses

        import localjudge.scorers.toxicity as toxicity

        examples = () if args.variant == "no-example" else balanced_examples()
        toxicity.ANALYZE_STEP = dataclasses.replace(toxicity.ANALYZE_STEP, examples=examples)
    table, figures = [], []
    for bench in select_benchmarks(args.benchmarks.split(",")):
        if bench.scorer != "toxicity":
            raise SystemExit(f"{bench.name} is not a toxicity benchmark")
        dataset, labels = load_benchmark(bench, args.skip + args.limit)
        dataset, labels = dataset.select(range(args.skip, len(dataset))), labels[args.skip:]
        runs = rows_to_runs(dataset, bench.columns)
        statement_probs.clear()
        with Stopwatch() as watch:
            results, _ = score_runs(runs, [toxicity_scorer(judge)], batch_size=args.batch_size)
        pipeline = results["toxicity"]
        keep = [i for i, r in enumerate(pipeline) if r.scored and r.run_id in statement_probs]
        y = [labels[i] for i in keep]
        probs = [statement_probs[pipeline[i].run_id] for i in keep]
        row: dict[str, Any] = {
            "benchmark": bench.name, "rows scored": f"{len(keep)}/{len(runs)}",
            "rows with 2+ statements": sum(len(p) > 1 for p in probs),
            "hard score AUC": auc_text([float(pipeline[i].score or 0) for i in keep], y),
            "mean P(yes) AUC (prob_score)": auc_text([sum(p) / len(p) for p in probs], y),
            "max P(yes) AUC": auc_text([max(p) for p in probs], y),
            "pipeline s": round(watch.seconds, 1),
        }
        if args.direct:
            with Stopwatch() as direct_watch:
                direct, _ = score_runs([runs[i] for i in keep], [toxicity_scorer(judge, mode="direct")],
                                       batch_size=args.batch_size)
            d = direct["toxicity"]
            both = [j for j, r in enumerate(d) if r.prob_score is not None]
            row["direct P(yes) AUC"] = auc_text([d[j].prob_score for j in both], [y[j] for j in both])  # type: ignore[misc]
            row["direct s"] = round(direct_watch.seconds, 1)
        print(row, file=sys.stderr)
        table.append(row)
        figures.append({**row, "labels": y, "statement_probs": probs})
    rows = f"rows {args.skip + 1}-{args.skip + args.limit}" if args.skip else f"first {args.limit} rows"
    print(f"## Toxicity aggregates on {args.model}, {rows} a benchmark, pipeline {args.variant}\n")
    print(markdown_table(table))
    if args.json:
        write_json(args.json, {"model": args.model, "limit": args.limit, "skip": args.skip, "variant": args.variant,
                               "rows": figures})


if __name__ == "__main__":
    main()
