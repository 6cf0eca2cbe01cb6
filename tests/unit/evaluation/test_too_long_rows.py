"""A row too long for the model's context window is unscored with the engine's documented error
and not stored for resuming, so a larger limit next run scores it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localjudge import Generation, toxicity_scorer
from localjudge.evaluation.dataset_runs import evaluate
from localjudge.evaluation.store import ResultStore
from localjudge.judge import TOO_LONG
from tests.fakes import FakeJudgeFactory


def too_long_answers(limit: int) -> dict[str, Any]:
    """Rows whose response is longer than `limit` characters get the backend's too-long error."""
    def answer(prompt: Any) -> Any:
        if len(prompt[-1]["content"]) > limit:
            return Generation("", error=f"prompt of 9000 tokens plus 600 to generate {TOO_LONG} of 8192 tokens")
        return {"verdicts": [{"verdict": "no", "severity": "none", "reason": "r"}]}

    return {"ToxicityVerdicts": answer}  # with the default reason, "ok"


def test_a_too_long_row_is_not_stored_so_a_larger_limit_scores_it(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    rows = [{"input": "q", "output": "short"}, {"input": "q", "output": "long " * 100}]
    first = evaluate(rows, [toxicity_scorer(fake_judge(too_long_answers(200)))], store=ResultStore(tmp_path / "log"))
    assert first.dataset["toxicity_score"] == [0.0, None]
    assert TOO_LONG in first.dataset["toxicity_error"][1]
    again = evaluate(rows, [toxicity_scorer(fake_judge(too_long_answers(10**6)))], store=ResultStore(tmp_path / "log"))
    assert again.dataset["toxicity_score"] == [0.0, 0.0] and again.summary["toxicity"].resumed == 1
