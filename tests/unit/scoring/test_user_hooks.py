"""A user's hook that raises or gives a bad value costs its own row only, never the batch.

Every hook a custom scorer takes (a function step, a judge step's prompt, schema, `finish` and
`by_rule`, the score function, `shortcut`, `prob_score`) runs per row behind one guard: the row is
unscored (``step_error``, the error naming the hook), the rest of the batch is scored and stored.
A step's result must be JSON data (it is stored as JSON): a set, bytes, an object, a dict that
holds itself is that row's ``step_error``, one line naming the step and the type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from localjudge import FakeJudge, JudgeStep, ResultStore, create_scorer, evaluate
from localjudge.judge import Generation
from localjudge.scoring import Scorer
from tests.fakes import FakeJudgeFactory

RUNS = [{"run_id": f"r{i}", "output": text} for i, text in enumerate(["fine", "bad", "also fine"])]


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


class Unbounded(BaseModel):
    verdict: str


def bad_on(value: Any) -> Any:
    """A hook giving `value` on the "bad" row (raising it, if an exception), None on the others."""
    def hook(*args: Any) -> Any:
        run = next(a for a in args if hasattr(a, "output"))
        if run.output != "bad":
            return None
        if isinstance(value, BaseException):
            raise value
        return value
    return hook


def or_else(hook: Any, good: Any) -> Any:
    """`hook`'s value on the bad row, `good` (called with the same arguments) on the others."""
    def both(*args: Any) -> Any:
        found = hook(*args)
        return good(*args) if found is None else found
    return both


def judged(step: JudgeStep) -> Scorer:
    judge = FakeJudge({"Verdict": lambda prompt: {"verdict": "yes"}})
    return create_scorer("hooks", judge=judge).analyze(step).generate_score(lambda run, results: 1.0)


BOOM = RuntimeError("boom")
PROMPT = JudgeStep("Judge.", lambda run, results: f"Judge {run.output}", Verdict)
LABELS = FakeJudge({"Verdict": lambda prompt: Generation('{"verdict": "yes"}', label_probs=({"yes": 0.9, "no": 0.1},))})
SCORERS = {
    "shortcut": create_scorer("hooks", shortcut=bad_on(BOOM)).generate_score(lambda run, results: 1.0),
    "preprocess step": create_scorer("hooks").preprocess(or_else(bad_on(BOOM), lambda run, results: {}))
    .generate_score(lambda run, results: 1.0),
    "analyze step": create_scorer("hooks").analyze(or_else(bad_on(BOOM), lambda run, results: {}))
    .generate_score(lambda run, results: 1.0),
    "score": create_scorer("hooks").generate_score(or_else(bad_on(BOOM), lambda run, results: 1.0)),
    "analyze step (prompt)": judged(JudgeStep("Judge.", or_else(bad_on(BOOM), PROMPT.prompt), Verdict)),
    "analyze step (schema)": judged(JudgeStep("Judge.", PROMPT.prompt, or_else(bad_on(BOOM), lambda r, x: Verdict))),
    "analyze step (finish)": judged(JudgeStep("Judge.", PROMPT.prompt, Verdict,
                                              finish=or_else(bad_on(BOOM), lambda run, results, answer: answer))),
    "analyze step (by_rule)": judged(JudgeStep("Judge.", PROMPT.prompt, Verdict, by_rule=bad_on(BOOM))),
    "prob_score": create_scorer("hooks", judge=LABELS, prob_score=lambda results, probs: 1 / 0
                                if "bad" in json.dumps(results) else 0.5)
    .analyze(JudgeStep("Judge.", lambda run, results: f"Judge {run.output}", Verdict,
                       finish=lambda run, results, answer: {**answer, "output": run.output}))
    .generate_score(lambda run, results: 1.0),
}


@pytest.mark.parametrize("hook", list(SCORERS))
def test_a_raising_hook_costs_its_row_only(hook: str) -> None:
    fine, bad, also = SCORERS[hook].run_batch(RUNS)
    assert fine.scored and also.scored, (fine.error, also.error)
    assert bad.error_kind == "step_error" and bad.error is not None
    where = hook.split(" (")[0]
    assert bad.error.startswith(f"{where}: ") and ("boom" in bad.error or "ZeroDivisionError" in bad.error)


@pytest.mark.parametrize(("hook", "scorer", "message"), [
    ("shortcut", create_scorer("hooks", shortcut=bad_on("yes")).generate_score(lambda run, results: 1.0),
     "shortcut: gave str 'yes', not None or (fraction in [0, 1], reason text)"),
    ("shortcut", create_scorer("hooks", shortcut=bad_on((2.0, "why"))).generate_score(lambda run, results: 1.0),
     "shortcut: gave tuple (2.0, 'why'), not None or (fraction in [0, 1], reason text)"),
    ("prompt", judged(JudgeStep("Judge.", or_else(bad_on(["not", "text"]), PROMPT.prompt), Verdict)),
     "analyze step: the prompt function gave list ['not', 'text'], not text"),
    ("schema", judged(JudgeStep("Judge.", PROMPT.prompt, or_else(bad_on({"verdict": "str"}), lambda r, x: Verdict)))
     , "analyze step: the schema function gave dict {'verdict': 'str'}, not a pydantic model class"),
    ("schema", judged(JudgeStep("Judge.", PROMPT.prompt, or_else(bad_on(Unbounded), lambda r, x: Verdict))),
     "analyze step: schema Unbounded: unbounded string in a judge schema"),
])
def test_a_hooks_bad_value_costs_its_row_only(hook: str, scorer: Scorer, message: str) -> None:
    fine, bad, also = scorer.run_batch(RUNS)
    assert fine.scored and also.scored
    assert (bad.error_kind, bad.error) == ("step_error", message)


def cyclic() -> dict[str, Any]:
    found: dict[str, Any] = {"claims": []}
    found["claims"].append(found)
    return found


def nested(depth: int) -> list[Any]:
    found: list[Any] = []
    for _ in range(depth):
        found = [found]
    return found


class Claim:
    pass


@pytest.mark.parametrize(("value", "problem"), [
    ({"claims": {"a", "b"}}, "a set at ['claims']"),
    (b"raw", "a bytes"),
    ({"claims": [Claim()]}, "a Claim at ['claims'][0]"),
    (cyclic(), "a dict that holds itself at ['claims'][0]"),
    ({1: "one"}, "a dict key 1 (int, not text)"),
    (nested(5000), "a value nested deeper than 100 levels at [0]"),
])
def test_a_step_result_json_cannot_hold_is_its_rows_step_error(value: Any, problem: str, tmp_path: Path) -> None:
    scorer = create_scorer("hooks").preprocess(or_else(bad_on(value), lambda run, results: {"claims": ["c"]})
                                               ).generate_score(lambda run, results: 1.0)
    store = ResultStore(tmp_path / "store.jsonl")
    ev = evaluate(RUNS, [scorer], store=store, batch_size=3)
    fine, bad, also = ev.results["hooks"]
    assert fine.score == also.score == 1.0 and fine.preprocess_step_result == {"claims": ["c"]}
    assert bad.error_kind == "step_error" and bad.preprocess_step_result is None
    assert bad.error is not None and bad.error.startswith(f"preprocess step: gave {problem}")
    assert "\n" not in bad.error and "which JSON cannot hold" in bad.error
    assert len((tmp_path / "store.jsonl" / "rank-0.jsonl").read_text().splitlines()) == 3  # every row, the bad one too
    again = evaluate(RUNS, [scorer], store=ResultStore(tmp_path / "store.jsonl"), batch_size=3)
    assert again.summary["hooks"].resumed == 3


def test_a_score_function_async_or_not_and_json_data_of_every_kind_still_pass() -> None:
    async def analyze(run: Any, results: Any) -> Any:
        return {"text": "t", "n": 1, "x": 0.5, "ok": True, "none": None, "list": [1, (2, 3)], "nan": float("nan")}

    shared = ["same"]
    scorer = create_scorer("hooks").preprocess(lambda run, results: {"a": shared, "b": shared}).analyze(
        analyze).generate_score(lambda run, results: 1.0)
    (result,) = scorer.run_batch(RUNS[:1])
    assert result.score == 1.0 and result.preprocess_step_result == {"a": ["same"], "b": ["same"]}  # shared, no cycle


def test_cli_score_stores_every_row_when_a_custom_step_gives_a_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  fake_judge: FakeJudgeFactory) -> None:
    from localjudge.cli import model_flags
    from localjudge.cli.main import main
    from localjudge.scorers import SCORERS

    def factory(judge: Any, scale: float = 1.0, **options: Any) -> Scorer:
        return create_scorer("sets", judge=judge, scale=scale).preprocess(
            lambda run, results: {"x"} if run.output == "bad" else {"x": 1}).generate_score(lambda run, results: 1.0)

    monkeypatch.setitem(SCORERS, "sets", factory)
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge())
    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    data.write_text("".join(json.dumps({"input": "q", "output": o}) + "\n" for o in ("fine", "bad", "ok")))
    assert main(["--quiet", "score", "--model", "m", "--scorer", "sets", "--data", str(data), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["sets_score"] for r in rows] == [1.0, None, 1.0]
    assert rows[1]["sets_error"] == ("preprocess step: gave a set, which JSON cannot hold (step results are stored "
                                     "as JSON)")
