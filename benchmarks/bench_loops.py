"""How often free text loops, with and without the repetition guard, on one model.

The same model and rows, scored twice in one process: with the judge's repetition guard off, then
on (`TransformersJudge(..., repeat_guard=...)`). For every string the judge wrote (claims,
verdict reasons, statements, the final reason) it counts those that contain a loop — a run of at
least 3 words said twice in a row, or of 1-2 words four times (`localjudge.engines.transformers.row_grammars.repeats`,
checked at every word) — and reports, per setting: strings written, looping strings (share),
rows whose final reason loops, unscored rows (cut off), generated tokens and seconds.

Usage:
    .venv/bin/python benchmarks/bench_loops.py [--model DIR] [--data FILE] [--benchmark NAME --limit N]
        [--scorers hallucination,faithfulness,toxicity] [--threads N]

Default: the default model on examples/example.jsonl (the quick start's rows). Run it alone:
another busy process skews the seconds (the loop counts do not depend on timing).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from typing import Any

from measure import DEFAULT_MODEL, EXAMPLE_DATA, markdown_table, set_offline_env, set_torch_threads


def strings(value: Any) -> Iterator[str]:
    """Every string inside a step result."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def loops(text: str) -> bool:
    """Whether a loop ends anywhere in `text` (the guard's test, at every word)."""
    from localjudge.repetition import repeats

    words = text.split()
    return any(repeats(" ".join(words[:end])) for end in range(2, len(words) + 1))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="local model directory (default: SmolLM2-135M)")
    parser.add_argument("--data", default=str(EXAMPLE_DATA), help="rows (any table file; default: the example)")
    parser.add_argument("--benchmark", default=None, help="a built-in benchmark instead of --data")
    parser.add_argument("--limit", type=int, default=None, help="first N rows")
    parser.add_argument("--scorers", default="hallucination,faithfulness,toxicity", help="comma-separated")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    set_offline_env()
    set_torch_threads(args.threads)
    from localjudge import evaluate
    from localjudge.bench import BENCHMARKS, load_benchmark
    from localjudge.engines.transformers import TransformersJudge
    from localjudge.evaluation import Columns, read_table
    from localjudge.scorers import SCORERS

    if args.benchmark:
        bench = BENCHMARKS[args.benchmark]
        dataset, _ = load_benchmark(bench, args.limit)
        columns, names = bench.columns, [bench.scorer]
    else:
        dataset = read_table(args.data)
        if args.limit:
            dataset = dataset.select(range(min(args.limit, len(dataset))))
        columns = Columns(run_id="run_id" if "run_id" in dataset.column_names else None)
        names = [n.strip() for n in args.scorers.split(",") if n.strip()]
    loaded = TransformersJudge.load(args.model, repeat_guard=False)
    table = []
    for guard in (False, True):
        judge = TransformersJudge(loaded.model, loaded.tokenizer, identity=f"loops-{guard}", repeat_guard=guard)
        scorers = [SCORERS[name](judge) for name in names]
        start = time.perf_counter()
        ev = evaluate(dataset, scorers, batch_size=args.batch_size, columns=columns)
        seconds = time.perf_counter() - start
        written = looping = reason_loops = unscored = tokens = 0
        for name in names:
            for result in ev.results[name]:
                tokens += result.new_tokens
                unscored += not result.scored
                texts = [*strings(result.preprocess_step_result), *strings(result.analyze_step_result)]
                texts += [result.reason] if result.reason else []
                written += len(texts)
                looping += sum(loops(t) for t in texts)
                reason_loops += bool(result.reason and loops(result.reason))
        rows = len(dataset) * len(names)
        table.append({"repeat guard": "on" if guard else "off", "rows x scorers": rows, "strings": written,
                      "looping strings": f"{looping} ({looping / max(written, 1):.0%})",
                      "looping reasons": f"{reason_loops}/{rows}", "unscored": unscored,
                      "generated tokens": tokens, "seconds": round(seconds, 1)})
    print(f"model {args.model}; {'benchmark ' + args.benchmark if args.benchmark else args.data}; "
          f"scorers {', '.join(names)}")
    print(markdown_table(table))


if __name__ == "__main__":
    main()
