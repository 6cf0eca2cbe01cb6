"""Do the reasons cite the context? The reason step with the texts (input, output, context, as
Mastra's) against the old one that saw only the score and the verdicts, on one benchmark.

    python scripts/bench_reasons.py --model models/qwen2.5-coder-0.5b-instruct --limit 12

Per variant: rows scored, reasons that quote the context (share a run of 3 words with it, after
lower-casing and dropping punctuation), reasons that quote the output, mean length, reasons at
the schema's length cap, and seconds. The same claims and verdicts feed both variants (the
first two steps run once; only the reason step differs), so the difference is the prompt's.
The benchmarks offered are those whose scorer shows the judge a context (its `shown_fields`).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from typing import Any

from measure import Stopwatch, markdown_table, set_torch_threads

from localjudge import FakeJudge
from localjudge.bench.data import BENCHMARKS, load_benchmark
from localjudge.evaluate import rows_to_runs
from localjudge.runs import Sample
from localjudge.schemas import Reason
from localjudge.scorers import SCORERS
from localjudge.scorers.verdicts import verdict_lines
from localjudge.steps import JudgeStep, Results

OLD_SYSTEM = ("You explain an evaluation score in one or two plain sentences. Base the explanation only "
              "on the score and the verdicts given. Do not repeat the instructions.")
WORD = re.compile(r"[a-z0-9]+")


def trigrams(text: str) -> set[tuple[str, ...]]:
    words = WORD.findall(text.lower())
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def old_reason(name: str, scale: float) -> JudgeStep:
    """The reason step before it saw the texts: score and verdict lines only."""
    subject = "statement" if name == "hallucination" else "claim"

    def prompt(run: Sample, results: Results) -> str:
        lines = verdict_lines(results["analyze_step_result"]["verdicts"], subject)
        return (f"{name.capitalize()} score: {results['score']:g} on a scale from 0 to {scale:g}.\n"
                f"Verdicts:\n{lines}\nExplain the score in one or two sentences.")

    return JudgeStep(instructions=OLD_SYSTEM, prompt=prompt, schema=Reason, finish=lambda r, s, p: p["reason"])


def measure(label: str, results: list[Any], samples: list[Sample], seconds: float) -> dict[str, Any]:
    cap = Reason.model_json_schema()["properties"]["reason"]["maxLength"]
    scored = [(r, s) for r, s in zip(results, samples, strict=True) if r.scored and r.reason
              and not r.reason.startswith("[no reason")]
    judged = [(r, s) for r, s in scored if r.analyze_step_result is not None]  # not decided by rule
    cites = sum(bool(trigrams(r.reason) & trigrams(" ".join(s.context or ()))) for r, s in judged)
    quotes = sum(bool(trigrams(r.reason) & trigrams(s.output)) for r, s in judged)
    return {
        "variant": label, "rows": len(results), "judged": len(judged),
        "cite context": f"{cites}/{len(judged)}", "quote output": f"{quotes}/{len(judged)}",
        "mean chars": round(sum(len(r.reason) for r, _ in judged) / max(len(judged), 1)),
        "at cap": sum(len(r.reason) >= cap - 2 for r, _ in judged), "seconds": round(seconds, 1),
    }


def with_context() -> list[str]:
    """The benchmarks whose scorer shows the judge a context (read off a scorer on a fake judge)."""
    return [name for name, bench in BENCHMARKS.items()
            if "context" in SCORERS[bench.scorer](FakeJudge({})).shown_fields]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--benchmark", default="halueval_qa", choices=with_context())
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--show", type=int, default=0, help="print the first N rows' reasons of each variant")
    args = parser.parse_args()

    bench = BENCHMARKS[args.benchmark]
    dataset, _ = load_benchmark(bench, args.limit)
    runs = rows_to_runs(dataset, bench.columns)
    from localjudge.transformers_judge import TransformersJudge

    set_torch_threads(args.threads)
    judge = TransformersJudge.load(args.model)
    scorer = SCORERS[bench.scorer](judge)
    samples = [scorer.sample(run) for run in runs]

    with Stopwatch() as steps:  # claims and verdicts once; then each reason variant on them
        upto = dataclasses.replace(scorer, reason_step=None)
        base = [r for i in range(0, len(samples), args.batch_size)
                for r in upto.run_batch(samples[i:i + args.batch_size])]
    rows = []
    for label, step in (("verdicts only (old)", old_reason(scorer.name, scorer.scale)),
                        ("texts + verdicts (new)", scorer.reason_step)):
        results = []
        with Stopwatch() as watch:
            for i in range(0, len(samples), args.batch_size):
                chunk = list(zip(samples[i:i + args.batch_size], base[i:i + args.batch_size], strict=True))
                pinned = dataclasses.replace(scorer, reason_step=step, preprocess_step=_replay("preprocess", chunk),
                                             analyze_step=_replay("analyze", chunk))
                results += pinned.run_batch([s for s, _ in chunk])
        rows.append(measure(label, results, samples, watch.seconds))
        for result in results[: args.show]:
            print(f"[{label}] {result.run_id}: {result.reason}")
    print(f"{bench.name} ({bench.scorer}), {len(samples)} rows, model {judge.identity}; "
          f"claims + verdicts {steps.seconds:.1f} s")
    print(markdown_table(rows))


def _replay(name: str, chunk: list[tuple[Sample, Any]]) -> Any:
    """A function step giving back the first run's result for this step (no judge call)."""
    by_id = {s.run_id: getattr(r, f"{name}_step_result") for s, r in chunk}

    def step(run: Sample, results: Results) -> Any:
        if by_id.get(run.run_id) is None:
            raise ValueError(f"no {name} result in the first run")
        return by_id[run.run_id]

    return step


if __name__ == "__main__":
    main()
