"""Benchmarks: labeled data files, each measuring one scorer, and loading their labels.

The built-in benchmarks live in `localjudge/bench/bench_data/<name>/<name>.jsonl` (see the README
there: sources, licenses, how each subset was drawn). A user's own labeled file becomes a
benchmark with `custom_benchmark`. Label 1 is always the scorer's positive class
(`Scorer.positive`: hallucinated, faithful, toxic).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from localjudge.evaluation import Columns, read_table, rows_to_runs
from localjudge.scorers import get_scorer_factory

if TYPE_CHECKING:
    from datasets import Dataset

DATA_DIR = Path(__file__).with_name("bench_data")


@dataclass(frozen=True)
class Benchmark:
    """A labeled data file and the scorer it measures.

    Attributes:
        name: Used in the report and in file names.
        scorer: The registered scorer's name.
        path: The data file (JSONL, JSON, CSV, parquet or a saved dataset folder).
        columns: Where input, output, context and row id live.
        label_col: The column holding the human label.
        positive: The label value meaning the scorer's positive class (hallucinated, faithful
            or toxic); every other value is the negative class.
    """

    name: str
    scorer: str
    path: Path
    columns: Columns = Columns("input", "output", "context", "id")
    label_col: str = "label"
    positive: Any = 1


BENCHMARKS = MappingProxyType({
    name: Benchmark(name, scorer, DATA_DIR / name / f"{name}.jsonl")
    for name, scorer in (("begin", "faithfulness"), ("halueval_qa", "hallucination"),
                         ("truthfulqa", "hallucination"), ("davidson", "toxicity"), ("toxigen", "toxicity"),
                         ("truthfulqa_similarity", "answer_similarity"), ("halueval_recall", "context_recall"))
})


def custom_benchmark(path: str | Path, *, scorer: str, label_col: str = "label", positive: Any = 1,
                     columns: Columns = Columns(), name: str | None = None) -> Benchmark:
    """A user's own labeled file as a benchmark (`positive`: the label value of the scorer's
    positive class: hallucinated, faithful or toxic)."""
    get_scorer_factory(scorer)
    return Benchmark(name or Path(path).stem, scorer, Path(path), columns, label_col, positive)


def select_benchmarks(benchmarks: Sequence[str | Benchmark] | None = None,
                      scorers: Sequence[str] | None = None) -> list[Benchmark]:
    """Built-in benchmarks by name (default: all), or given ones, kept to `scorers` if given."""
    for name in scorers or ():
        get_scorer_factory(name)
    if benchmarks is None:
        chosen = [b for b in BENCHMARKS.values() if not scorers or b.scorer in scorers]
        if scorers and not chosen:
            raise ValueError(f"no built-in benchmark measures {', '.join(scorers)}: give your own labeled file "
                             "(--data FILE --scorer NAME --label-col COL --positive VALUE)")
        return chosen
    chosen = []
    for entry in benchmarks:
        if isinstance(entry, str) and entry not in BENCHMARKS:
            raise ValueError(f"unknown benchmark {entry!r}; built-in: {', '.join(BENCHMARKS)}")
        bench = BENCHMARKS[entry] if isinstance(entry, str) else entry
        if scorers and bench.scorer not in scorers:
            raise ValueError(f"benchmark {bench.name!r} measures the {bench.scorer} scorer, not {', '.join(scorers)}")
        chosen.append(bench)
    names = [b.name for b in chosen]
    if not chosen or len(set(names)) != len(names):
        raise ValueError(f"give at least one benchmark, each once; got {names}")
    return chosen


def is_positive(value: Any, positive: Any) -> bool:
    """Whether a label cell holds the positive value: equal, numerically equal ("1" vs 1.0),
    or equal as text ignoring case and surrounding spaces ("Yes" vs "yes")."""
    if value == positive:
        return True
    try:
        return float(value) == float(positive)
    except (TypeError, ValueError):
        return str(value).strip().casefold() == str(positive).strip().casefold()


def load_benchmark(bench: Benchmark, limit: int | None = None) -> tuple[Dataset, list[int]]:
    """The benchmark's first `limit` rows and their 0/1 labels; a clear error (before any model
    call) for a missing file or column, a missing label, or labels of one class only."""
    dataset = read_table(bench.path)
    if limit is not None:
        dataset = dataset.select(range(min(limit, len(dataset))))
    if len(dataset) == 0:
        raise ValueError(f"{bench.path}: no rows")
    if bench.label_col not in dataset.column_names:
        raise ValueError(f"unknown label column {bench.label_col!r}; the data has: {', '.join(dataset.column_names)}")
    rows_to_runs(dataset.select(range(1)), bench.columns)  # checks the other columns
    values = dataset[bench.label_col]
    missing = [i for i, v in enumerate(values) if v is None]
    if missing:
        raise ValueError(f"{bench.path}: {len(missing)} row(s) have no {bench.label_col!r}, "
                         f"the first is row {missing[0]}")
    labels = [int(is_positive(v, bench.positive)) for v in values]
    if len(set(labels)) < 2:
        seen = ", ".join(repr(v) for v in list(dict.fromkeys(values))[:10])
        raise ValueError(f"{bench.name}: every row is {'positive' if labels[0] else 'negative'} with positive value "
                         f"{bench.positive!r} (labels seen: {seen}); accuracy needs both classes")
    return dataset, labels
