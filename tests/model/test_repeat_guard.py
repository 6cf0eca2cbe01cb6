"""The repetition guard on the real SmolLM2, whose reasons loop without it ("The score is 1. The
score is 1. ..."): with the guard no string the judge writes loops, read off the shared run
(tests/model/conftest.py)."""

from __future__ import annotations

from typing import Any

from localjudge.repetition import repeats
from tests.model.conftest import SharedRun


def test_no_string_loops_on_the_real_model_with_the_guard(shared_run: SharedRun, real_judge: Any) -> None:
    """Every scorer in every mode on the shared rows: with the guard no claim, verdict reason or
    reason contains a loop. (Without it, on the quick start's rows through hallucination,
    faithfulness and toxicity, 10 of 172 strings and 7 of 24 reasons loop:
    `python benchmarks/bench_loops.py` measures it.)"""
    results = [r for rows in shared_run.results.values() for r in rows]
    texts = [r.reason or "" for r in results]
    texts += [v["reason"] for r in results for v in (r.analyze_step_result or {}).get("verdicts", [])]
    texts += [c for r in shared_run.results["hallucination", "pipeline"]
              for c in (r.preprocess_step_result or {}).get("claims", [])]
    looping = [t for t in texts if any(repeats(" ".join(t.split()[:end])) for end in range(2, len(t.split()) + 1))]
    assert real_judge.repeat_guard and looping == []
