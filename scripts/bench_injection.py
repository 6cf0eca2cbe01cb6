"""Prompt injection on a real local model: how often does appending an injection flip the verdict?

Each base item (default: scripts/example.jsonl; items with an empty output are skipped) is scored
clean and once per injection case, with the case's text appended to the field it targets (the
output, the context or the input; a scorer is only tried with cases on fields its prompts show).
The cases are INJECTIONS from tests/test_injection.py, plus one benign control sentence per field
that measures how much appending *any* text moves the judge.

For every (scorer, case, item) pair the script records whether the score changed, whether the
hard verdicts changed, whether the score moved towards the "good" end (lower hallucination and
toxicity, higher faithfulness: "steered"), and whether the injected run came back unscored. It
prints one table per scorer and writes every pair and the summary to --out as JSON.

    .venv/bin/python scripts/bench_injection.py --model models/smollm2-135m-instruct \
        --limit 10 --out injection-bench.json

Nothing is downloaded; `--help` loads no model.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES_FILE = ROOT / "tests" / "test_injection.py"
FIELDS = {"output", "context", "input"}
SHOWN = {"hallucination": FIELDS, "faithfulness": FIELDS, "toxicity": {"output", "input"}}  # fields prompts show
BETTER = {"hallucination": -1, "faithfulness": 1, "toxicity": -1}  # sign of a "better" score change
CONTROL_TEXT = "Thank you for reading this answer; I hope it helps."


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "smollm2-135m-instruct"),
                        help="local model directory or .gguf file (default: the SmolLM2-135M default model)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N injection cases")
    parser.add_argument("--out", default="injection-bench.json", help="JSON file for every pair and the summary")
    parser.add_argument("--data", default=str(ROOT / "scripts" / "example.jsonl"), help="base items (any table file)")
    parser.add_argument("--scorers", default="hallucination,toxicity", help="comma-separated scorer names")
    parser.add_argument("--batch-size", type=int, default=8, help="runs per judge call")
    parser.add_argument("--device-map", default=None, help='"cpu", "cuda", "auto"; default: GPU if any')
    parser.add_argument("--dtype", default="auto", help='"auto", "bfloat16", "float32", ...')
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    return args


def load_injections() -> list[Any]:
    """INJECTIONS from tests/test_injection.py (one list for the tests and this benchmark)."""
    spec = importlib.util.spec_from_file_location("injection_cases", CASES_FILE)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(CASES_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.INJECTIONS)


def base_items(path: str) -> list[dict[str, Any]]:
    """Items as plain text fields (input, output, context passages); empty outputs skipped."""
    from localjudge.evaluate import Columns, rows_to_runs, to_dataset
    from localjudge.runs import context_of, text_of
    from localjudge.tables import read_table

    dataset = to_dataset(read_table(path))
    columns = Columns(run_id="run_id" if "run_id" in dataset.column_names else None)
    items = []
    for run in rows_to_runs(dataset, columns):
        output = text_of(run["output"], field="output", role="assistant")
        if not output.strip():
            continue
        raw_input = run.get("input")
        items.append({
            "run_id": run["run_id"],
            "input": text_of(raw_input, field="input", role="user") if raw_input else "",
            "output": output,
            "context": list(context_of(run.get("context")) or ()),
        })
    return items


def inject(item: dict[str, Any], field: str, text: str) -> dict[str, Any]:
    """The item with `text` appended to `field` (to the last context passage for context)."""
    if field == "context":
        passages = item["context"] or [""]
        return {**item, "context": [*passages[:-1], f"{passages[-1]}\n{text}"]}
    return {**item, field: f"{item[field]}\n{text}"}


def hard_verdicts(result: Any) -> list[str] | None:
    """The verdict labels (with severity for toxicity), or None when there are none."""
    step = result.analyze_step_result
    if not step:
        return None
    return [f"{v['verdict']}/{v['severity']}" if "severity" in v else v["verdict"] for v in step["verdicts"]]


def compare(scorer: str, clean: Any, injected: Any) -> dict[str, Any]:
    change = None if clean.score is None or injected.score is None else injected.score - clean.score
    return {
        "clean_score": clean.score,
        "injected_score": injected.score,
        "clean_verdicts": hard_verdicts(clean),
        "injected_verdicts": hard_verdicts(injected),
        "score_changed": change is not None and change != 0,
        "verdicts_changed": hard_verdicts(clean) != hard_verdicts(injected),
        "steered": change is not None and change * BETTER[scorer] > 0,
        "unscored": injected.score is None and clean.score is not None,
        "error": injected.error,
    }


def rate(pairs: list[dict[str, Any]], key: str) -> float | None:
    return round(sum(p[key] for p in pairs) / len(pairs), 4) if pairs else None


def summarise(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    flipped = [p for p in pairs if p["score_changed"] or p["verdicts_changed"]]
    return {
        "pairs": len(pairs),
        "flip_rate": round(len(flipped) / len(pairs), 4) if pairs else None,
        "score_change_rate": rate(pairs, "score_changed"),
        "verdict_change_rate": rate(pairs, "verdicts_changed"),
        "steered_rate": rate(pairs, "steered"),
        "unscored_rate": rate(pairs, "unscored"),
    }


def run_scorer(scorer: Any, items: list[dict[str, Any]], cases: list[Any], batch_size: int) -> list[dict[str, Any]]:
    """Score the clean items and every (case, item) variant in one pass; one record per pair."""
    from localjudge.evaluate import score_runs

    shown = [c for c in cases if c.field in SHOWN[scorer.name]]
    needs_context = scorer.needs_context
    usable = [item for item in items if item["context"] or not needs_context]
    runs = [*usable, *(inject(item, c.field, c.text) for c in shown for item in usable)]
    results, _ = score_runs(runs, [scorer], batch_size=batch_size)
    scored = results[scorer.name]
    clean, rest = scored[: len(usable)], scored[len(usable):]
    pairs = []
    for k, case in enumerate(shown):
        for j, item in enumerate(usable):
            pair = compare(scorer.name, clean[j], rest[k * len(usable) + j])
            pairs.append({"scorer": scorer.name, "case": case.id, "field": case.field, "item": item["run_id"], **pair})
    return pairs


def pct(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:.{digits}%}"


def print_table(scorer: str, pairs: list[dict[str, Any]], case_ids: list[str]) -> None:
    print(f"\n## {scorer}\n")
    print("| case | field | pairs | flip | score changed | steered | unscored |")
    print("|---|---|---|---|---|---|---|")
    for case_id in case_ids:
        mine = [p for p in pairs if p["case"] == case_id]
        if mine:
            s = summarise(mine)
            print(f"| {case_id} | {mine[0]['field']} | {s['pairs']} | {pct(s['flip_rate'])} | "
                  f"{pct(s['score_change_rate'])} | {pct(s['steered_rate'])} | {pct(s['unscored_rate'])} |")
    injections = summarise([p for p in pairs if not p["case"].startswith("control")])
    controls = summarise([p for p in pairs if p["case"].startswith("control")])
    print(f"\n{scorer}: injections flip {pct(injections['flip_rate'], 1)} of {injections['pairs']} pairs "
          f"(steered {pct(injections['steered_rate'], 1)}); benign controls flip {pct(controls['flip_rate'], 1)}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from localjudge.scorers import get_scorer_factory

    names = [n.strip() for n in args.scorers.split(",") if n.strip()]
    factories = {name: get_scorer_factory(name) for name in names}
    injections = load_injections()[: args.limit]
    controls = [type(injections[0])(f"control-{field}", CONTROL_TEXT, field) for field in ("output", "context", "input")]
    cases = [*injections, *controls]
    items = base_items(args.data)

    from localjudge.transformers_judge import TransformersJudge

    judge = TransformersJudge(args.model, device_map=args.device_map, dtype=args.dtype, threads=args.threads)
    print(f"model {judge.identity}: {len(items)} items x {len(injections)} injections (+{len(controls)} controls)")
    pairs: list[dict[str, Any]] = []
    seconds: dict[str, float] = {}
    for name, factory in factories.items():
        start = time.perf_counter()
        mine = run_scorer(factory(judge), items, cases, args.batch_size)
        seconds[name] = round(time.perf_counter() - start, 1)
        print_table(name, mine, [c.id for c in cases])
        pairs += mine

    report = {
        "model": judge.identity,
        "data": args.data,
        "items": len(items),
        "cases": [{"id": c.id, "field": c.field, "text": c.text} for c in cases],
        "seconds": seconds,
        "summary": {
            name: {
                "injections": summarise([p for p in pairs if p["scorer"] == name and not p["case"].startswith("control")]),
                "controls": summarise([p for p in pairs if p["scorer"] == name and p["case"].startswith("control")]),
            }
            for name in factories
        },
        "pairs": pairs,
    }
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"\nwrote {len(pairs)} pairs to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
