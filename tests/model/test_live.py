"""Live scoring on the real judge: a wrapped answer function's every call scored and stored once the
scorer closes."""

from __future__ import annotations

from localjudge import toxicity_scorer


def test_live_scoring_on_the_real_model(real_judge, tmp_path) -> None:
    """A wrapped answer function on the real judge: every call stored in SQLite once closed."""
    from localjudge.live.worker import LiveScorer, read_results

    with LiveScorer(toxicity_scorer(real_judge), store=tmp_path / "live.db", max_batch=4, max_wait=0.05) as live:
        answer = live.wrap(lambda question: f"{question} Certainly, happy to help.")
        for question in ("Who wrote Hamlet?", "What is 2 + 2?", "Where is Paris?"):
            answer(question)
    rows = read_results(tmp_path / "live.db")
    assert sorted(r["input"] for r in rows) == ["What is 2 + 2?", "Where is Paris?", "Who wrote Hamlet?"]
    assert all(r["score"] is not None or r["error_kind"] == "invalid_output" for r in rows)
