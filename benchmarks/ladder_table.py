"""Print the model-ladder table (docs/benchmarks/accuracy.md) from `localjudge bench` output folders.

Each argument is LABEL=DIR: a row label (model and mode) and the --out-dir of one bench run.
Per benchmark it prints the rows scored, the judge and prob AUCs with intervals, the prob
score's ECE and its balanced accuracy at a threshold tuned on the other half, the most common
hard score (many rows at one value: the judge answers alike whatever the row), the rows that
replayed the worked example (unscored, or their reason dropped), the best baseline
and, for claim scorers, the share of claims whose content words all come from the output.

    python benchmarks/ladder_table.py "SmolLM2-135M pipeline=bench-smollm2" \
        "Qwen2.5-Coder-0.5B direct=bench-qwen05-direct"
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def fmt(estimate: dict[str, Any] | None) -> str:
    if not estimate or estimate.get("value") is None:
        return "n/a"
    if estimate.get("low") is None:
        return f"{estimate['value']:.2f}"
    return f"{estimate['value']:.2f} [{estimate['low']:.2f}, {estimate['high']:.2f}]"


def scored_rows(folder: Path, result: dict[str, Any]) -> list[dict[str, Any]]:
    path = folder / "scored" / f"{result['benchmark']}.jsonl"
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def from_rows(folder: Path, result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """The prob score's calibration and the claims' sources, recomputed from the scored rows
    (the same for reports written before `bench` measured them)."""
    from collections import Counter
    from dataclasses import asdict

    from localjudge.bench.claim_checks import tally_claims
    from localjudge.bench.run import calibration

    name = result["scorer"]
    rows = scored_rows(folder, result)
    rows = [r for r in rows if r[f"{name}_score"] is not None]
    probs = [(r[f"{name}_prob_score"], r["label"]) for r in rows if r[f"{name}_prob_score"] is not None]
    prob: dict[str, Any] = {}
    if probs and len({y for _, y in probs}) == 2:
        prob = asdict(calibration([p for p, _ in probs], [y for _, y in probs]))
    sources: Counter[str] = Counter()
    for r in rows:
        step = (json.loads(r[f"{name}_steps"]) or {}).get("preprocess")
        tally_claims(sources, step, r["output"], r.get("input") or "")
    return prob, dict(sources)


def modal(folder: Path, result: dict[str, Any]) -> str:
    """The most common hard score and its rows: many rows at one value means the judge answers
    the same whatever the row (as when it replays its worked example)."""
    from collections import Counter

    name = result["scorer"]
    rows = scored_rows(folder, result)
    counts = Counter(r[f"{name}_score"] for r in rows if r[f"{name}_score"] is not None)
    if not counts:
        return "-"
    value, n = counts.most_common(1)[0]
    return f"{value:g} ({n})"


def copies(folder: Path, result: dict[str, Any]) -> str:
    """Rows unscored for replaying the worked example, and scored rows whose final reason was
    a copy (dropped: ``[no reason: the judge copied ...]``)."""
    from localjudge.scorers.judged import faithfulness, hallucination, toxicity
    from localjudge.scoring import normal

    examples = {normal(text) for text in (toxicity.REASON_EXAMPLE, hallucination.EXAMPLE.reason,
                                          faithfulness.EXAMPLE.reason)}  # as kept by code without the check
    name = result["scorer"]
    rows = scored_rows(folder, result)
    unscored = sum(r.get(f"{name}_error_kind") == "copied_example" for r in rows)
    reasons = sum(str(r.get(f"{name}_reason") or "").startswith("[no reason: the judge copied")
                  or normal(str(r.get(f"{name}_reason") or "")) in examples for r in rows)
    return f"{unscored} / {reasons}"


def row_of(label: str, folder: Path, result: dict[str, Any]) -> dict[str, str]:
    judge = {r["name"]: r for r in result["table"] if r["kind"] == "judge"}
    baselines = [r for r in result["table"] if r["kind"] == "baseline" and r["auc"]["value"] is not None]
    best = max(baselines, key=lambda r: r["auc"]["value"], default=None)
    prob, sources = from_rows(folder, result)
    from_output = (f"{sources.get('from output', 0)}/{sources['claims']}" if sources.get("claims") else "-")
    if sources.get("terse rows"):
        from_output += f" (+{sources['terse rows']} terse rows)"
    return {
        "model, mode": label,
        "benchmark (scorer)": f"{result['benchmark']} ({result['scorer']})",
        "scored": f"{result['scored']}/{result['rows']}",
        "judge AUC": fmt(judge.get("judge score", {}).get("auc")),
        "prob AUC": fmt(judge.get("judge prob score", {}).get("auc")),
        "prob ECE": fmt(prob.get("ece")),
        "prob bal. acc., tuned t (held out)": fmt(prob.get("held_out_balanced_accuracy")),
        "most common score (rows)": modal(folder, result),
        "copied example: unscored / reason": copies(folder, result),
        "best baseline AUC": f"{best['name']} {best['auc']['value']:.2f}" if best else "-",
        "claims from output": from_output,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="LABEL=DIR")
    args = parser.parse_args()
    lines = []
    for run in args.runs:
        label, _, folder = run.rpartition("=")
        report = json.loads((Path(folder) / "report.json").read_text(encoding="utf-8"))
        minutes = report["identity"]["elapsed_seconds"] / 60
        lines += [row_of(f"{label} ({minutes:.0f} min)", Path(folder), result) for result in report["results"]]
    head = list(lines[0])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for line in lines:
        print("| " + " | ".join(line[h] for h in head) + " |")


if __name__ == "__main__":
    main()
