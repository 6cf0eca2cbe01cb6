"""The one planner (issue 45): a user's hooks run once per row on every local path, and a results
log written before the planner (840b565) resumes with nothing judged again."""

from __future__ import annotations

import dataclasses
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from localjudge import evaluate, hallucination_scorer, toxicity_scorer
from localjudge.evaluation import ResultStore, read_table, score_runs, write_table
from localjudge.judge import Judge
from localjudge.scoring import Scorer
from tests.fakes import FakeJudgeFactory

ROWS = [{"input": f"question {i}", "output": f"answer {i} " * (i + 1)} for i in range(5)]
WRITTEN = Path(__file__).parent / "data" / "resume_840b565"  # rows.jsonl, log/, scored.jsonl


def noting(scorer: Scorer, calls: Counter[str]) -> Scorer:
    """`scorer` with `prepare_run` and `get_context`, each counting its calls by (hook, run id)."""

    def prepare_run(run: Any) -> Any:
        calls[f"prepare_run {run.get('run_id')}"] += 1
        return run

    def get_context(run: Any) -> None:
        calls[f"get_context {run.get('run_id')}"] += 1

    return dataclasses.replace(scorer, prepare_run=prepare_run, get_context=get_context)


def once_each(rows: int) -> Counter[str]:
    """Each hook once per row, by run id (`evaluate`'s: the row number)."""
    return Counter(f"{hook} {i}" for i in range(rows) for hook in ("prepare_run", "get_context"))


def test_hooks_run_once_per_row_under_evaluate(fake_judge: FakeJudgeFactory, tmp_path: Path) -> None:
    calls: Counter[str] = Counter()
    scorer = noting(toxicity_scorer(fake_judge()), calls)
    evaluate(ROWS[:3], [scorer], batch_size=2, store=ResultStore(tmp_path / "log"))
    assert calls == once_each(3)
    calls.clear()  # three rows done, two new: each read once (the done ones for their keys only)
    evaluate(ROWS, [scorer], batch_size=2, store=ResultStore(tmp_path / "log"))
    assert calls == once_each(len(ROWS))


def test_hooks_run_once_per_row_under_score_runs(fake_judge: FakeJudgeFactory) -> None:
    calls: Counter[str] = Counter()
    runs = [{**row, "run_id": str(i)} for i, row in enumerate(ROWS)]
    score_runs(runs, [noting(toxicity_scorer(fake_judge()), calls)], batch_size=2)
    assert calls == once_each(len(ROWS))


def test_a_log_written_before_the_planner_resumes_with_nothing_judged(fake_judge: FakeJudgeFactory,
                                                                      tmp_path: Path) -> None:
    """The fixture was written by `evaluate` at 840b565 (batch size 2, the fake judge, row 4 without
    context: hallucination's invalid_run, never stored)."""
    shutil.copytree(WRITTEN / "log", tmp_path / "log")
    judge = fake_judge()
    result = evaluate(read_table(WRITTEN / "rows.jsonl"), scorers(judge), batch_size=2,
                      store=ResultStore(tmp_path / "log"))
    assert judge.calls == []
    assert (result.summary["hallucination"].resumed, result.summary["toxicity"].resumed) == (4, 5)
    write_table(result.dataset, tmp_path / "scored.jsonl")
    assert (tmp_path / "scored.jsonl").read_bytes() == (WRITTEN / "scored.jsonl").read_bytes()
    assert (tmp_path / "log" / "rank-0.jsonl").read_bytes() == (WRITTEN / "log" / "rank-0.jsonl").read_bytes()


def scorers(judge: Judge) -> list[Scorer]:
    return [hallucination_scorer(judge), toxicity_scorer(judge)]
