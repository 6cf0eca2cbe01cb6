"""Progress that moves during a batch and results handed out as each batch is scored (issue 49 item 4):
the fake judge notes each call in the same list as the callbacks, so their order is what a user sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localjudge import evaluate, hallucination_scorer, toxicity_scorer
from localjudge.evaluation import ResultStore, read_table
from localjudge.judge import FakeJudge, JudgeOutOfMemory
from tests.conftest import EXAMPLES
from tests.fakes import FakeJudgeFactory

ROWS = [dict(row) for row in read_table(EXAMPLES / "example.jsonl")][:8]
HAS_CONTEXT = [row for row in ROWS if row.get("context")]


def noting(judge: FakeJudge, events: list[Any], *, most_rows: int | None = None) -> FakeJudge:
    """`judge`, noting each call as ``"call"`` in `events`; a call of more than `most_rows` rows
    raises `JudgeOutOfMemory` (noted as ``"oom"``)."""
    generate = judge.generate

    def noted(prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        if most_rows is not None and len(prompts) > most_rows:
            events.append("oom")
            raise JudgeOutOfMemory("out of memory (simulated)")
        events.append("call")
        return generate(prompts, schemas, max_new_tokens=max_new_tokens)

    judge.generate = noted  # type: ignore[method-assign]
    return judge


def test_a_bar_moves_as_each_judge_step_of_a_batch_ends(fake_judge: FakeJudgeFactory) -> None:
    """Hallucination: three judge steps (claims, verdicts, reason) on one batch; the rows are counted
    out 2, 5, 7 as they end, and the last row once the batch is stored."""
    events: list[Any] = []
    rows = HAS_CONTEXT[:6] + HAS_CONTEXT[:2]
    evaluate(rows, [hallucination_scorer(noting(fake_judge(), events))], batch_size=8,
             progress=lambda name, done: events.append(done))
    assert events == [0, "call", 2, "call", 3, "call", 2, 1]


def test_out_of_memory_retries_count_no_row_twice(fake_judge: FakeJudgeFactory) -> None:
    events: list[Any] = []
    evaluate(ROWS, [toxicity_scorer(noting(fake_judge(), events, most_rows=4))], batch_size=8,
             progress=lambda name, done: events.append(done))
    # toxicity: two judge steps; the batch of 8 halved after the error, each step of a half counts 2 rows
    # (the last row held until the batch is stored)
    assert events == [0, "oom", "call", 2, "call", 2, "call", 2, "call", 1, 1]


def test_results_come_out_as_each_batch_is_scored(fake_judge: FakeJudgeFactory) -> None:
    events: list[Any] = []
    judge = noting(fake_judge(), events)
    handed: dict[int, Any] = {}

    def on_results(name: str, pairs: Any) -> None:
        events.append("results")
        for index, result in pairs:
            assert index not in handed
            handed[index] = result

    result = evaluate(ROWS, [toxicity_scorer(judge)], batch_size=3, on_results=on_results)
    assert events.index("results") < len(events) - 1 - events[::-1].index("call")  # before the last judge call
    assert events.count("results") == 3  # one per batch of 3, 3, 2
    assert [handed[i] for i in range(len(ROWS))] == result.results["toxicity"]


def test_rows_read_without_the_judge_come_out_first(fake_judge: FakeJudgeFactory, tmp_path: Path) -> None:
    """Resumed rows and unreadable ones (hallucination without context) before any judge call."""
    evaluate(ROWS[:3], [hallucination_scorer(fake_judge())], store=ResultStore(tmp_path / "log"))
    events: list[Any] = []
    evaluate(ROWS, [hallucination_scorer(noting(fake_judge(), events))], batch_size=8,
             store=ResultStore(tmp_path / "log"), on_results=lambda name, pairs: events.append([i for i, _ in pairs]))
    unreadable = [i for i, row in enumerate(ROWS) if not row.get("context")]
    assert events[0] == sorted([0, 1, 2, *unreadable]) and events[1] == "call"
    assert sorted(i for e in events if isinstance(e, list) for i in e) == list(range(len(ROWS)))


def test_a_progress_callback_that_raises_ends_the_run_once_its_batch_is_stored(fake_judge: FakeJudgeFactory,
                                                                               tmp_path: Path) -> None:
    def stop(name: str, done: int) -> None:
        if done:
            raise RuntimeError("stopped by the caller")

    with pytest.raises(RuntimeError, match="stopped by the caller"):
        evaluate(ROWS, [toxicity_scorer(fake_judge())], batch_size=4, store=ResultStore(tmp_path / "log"),
                 progress=stop)
    assert len(ResultStore(tmp_path / "log").load()) == 4  # the first batch: scored, not lost as judge_failed
