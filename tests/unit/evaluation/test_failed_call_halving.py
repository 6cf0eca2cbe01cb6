"""One failure rule for merged judge calls (issue 57 N4): a call that raises is retried in halves
down to one row, as out of memory is, so only the row the engine fails on stays unscored, with a
one-line error; the innocent rows batched beside it are scored, and stay scored on the next run."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from localjudge import evaluate
from localjudge.evaluation import ResultStore
from localjudge.judge import ChatPrompt, Generation
from tests.fakes import FakeJudgeFactory
from tests.unit.evaluation.test_schedule import ANSWERS, ROWS, judged, scorers


class Poisoned:
    """A judge whose engine raises on any call holding a prompt about row 2 (and records each call)."""

    identity = "poisoned"

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, []  # type: ignore[var-annotated]

    def generate(self, prompts: list[ChatPrompt], schemas: list[Any], *, max_new_tokens: int) -> list[Generation]:
        self.calls.append(len(prompts))
        if any("question 2" in str(p[-1]["content"]) for p in prompts):
            raise RuntimeError("CUDA error: device-side assert triggered\nCompile with TORCH_USE_CUDA_DSA")
        return self.inner.generate(prompts, schemas, max_new_tokens=max_new_tokens)


def test_a_call_that_raises_costs_only_the_row_that_makes_it_fail(fake_judge: FakeJudgeFactory, tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    clean = evaluate(ROWS, scorers(judged(fake_judge(ANSWERS))), batch_size=8)
    judge = Poisoned(judged(fake_judge(ANSWERS)))
    store = ResultStore(tmp_path / "log")
    with caplog.at_level(logging.WARNING):
        result = evaluate(ROWS, scorers(judge), batch_size=8, store=store)  # type: ignore[arg-type]
    for name, results in result.results.items():
        for i, got in enumerate(results):
            if i == 2:
                assert got.error_kind == "judge_failed", (name, got)
                assert got.error == ("judge failed: RuntimeError: CUDA error: device-side assert triggered "
                                     "Compile with TORCH_USE_CUDA_DSA")
            else:
                assert got == clean.results[name][i], (name, i)
    assert "Traceback" not in caplog.text and "retrying as" in caplog.text
    again = Poisoned(judged(fake_judge(ANSWERS)))
    rerun = evaluate(ROWS, scorers(again), batch_size=8, store=ResultStore(tmp_path / "log"))  # type: ignore[arg-type]
    assert {n: s.resumed for n, s in rerun.summary.items()} == \
        {n: sum(1 for i, r in enumerate(clean.results[n]) if i != 2 and r.error_kind != "invalid_run")
         for n in rerun.summary}  # every innocent row kept; only row 2 asked again
    assert [r.error_kind for r in rerun.results["hallucination"]][2] == "judge_failed"
