"""`create_scorer`: Mastra's builder, with function steps, judge steps and per-step judges.

The example of docs/writing-scorers.md runs as written; a step that raises or a score outside
[0, 1] costs only its row; a judge step is one judge call per batch; a step's own judge is used
for it and named in the result keys; a scorer missing its score or its judge is refused.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest

from localjudge import FakeJudge, JudgeStep, create_scorer, evaluate, run_evals
from localjudge.scoring.schemas import Strict, text
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "writing-scorers.md"


def page_example() -> str:
    """The page's first Python block: the scorer it builds and runs."""
    return re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL).group(1)  # type: ignore[union-attr]


def test_the_documented_example_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(page_example(), str(PAGE), "exec", dont_inherit=True), namespace)  # noqa: S102 - our docs
    result = namespace["result"]
    assert (result.score, result.reason) == (1.0, "1 words: One word answers it.")
    assert result.preprocess_step_result == {"words": 1} and "<<<ANSWER" in result.analyze_prompt
    assert capsys.readouterr().out.strip() == "1.0 1 words: One word answers it."


class Label(Strict):
    verdict: Literal["good", "bad"]
    reason: text(40)  # type: ignore[valid-type]


def label_step(judge: FakeJudge | None = None) -> JudgeStep:
    return JudgeStep(instructions="Label it.", prompt=lambda run, results: f"<<<OUTPUT\n{run.output}\nOUTPUT>>>",
                     schema=Label, judge=judge)


def labeler(judge: FakeJudge) -> Any:
    def words(run: Any, results: Any) -> int:
        if "boom" in run.output:
            raise ValueError("cannot count this")
        return len(run.output.split())

    return (create_scorer("label", judge=judge)
            .preprocess(words)
            .analyze(label_step())
            .generate_score(lambda run, results: float(results["analyze_step_result"]["verdict"] == "good")))


def good(prompt: Any) -> dict[str, str]:
    return {"verdict": "good", "reason": "Fine."}


def test_a_failing_function_step_costs_only_its_row_and_judge_steps_are_batched() -> None:
    judge = FakeJudge({"Label": good})
    results = labeler(judge).run_batch([{"output": "one two"}, {"output": "boom"}, {"output": "three"}])
    assert [r.score for r in results] == [1.0, None, 1.0]
    assert results[1].error == "preprocess step: ValueError: cannot count this"
    assert [len(c.prompts) for c in judge.calls] == [2]  # one call for the two rows still in play
    assert results[0].reason is None  # no generate_reason: no reason, still scored


@pytest.mark.parametrize("bad", [1.5, -0.1, "high", None, True])
def test_a_score_outside_zero_to_one_is_unscored(bad: Any) -> None:
    scorer = create_scorer("odd").generate_score(lambda run, results: bad)
    (result,) = scorer.run_batch([{"output": "x"}])
    assert result.score is None and "not a fraction in [0, 1]" in (result.error or "")


def test_a_step_can_have_its_own_judge_and_both_are_in_the_key() -> None:
    main, other = FakeJudge({"Label": good}, identity="main"), FakeJudge({"Reason": lambda p: {"reason": "Because."}},
                                                                          identity="other")
    from localjudge.scoring.schemas import Reason

    reason = JudgeStep(instructions="Explain.", prompt=lambda run, results: f"Score {results['score']}.",
                       schema=Reason, judge=other)
    scorer = labeler(main).generate_reason(reason)
    result = scorer.run({"output": "fine"})
    assert result.reason == "Because." and result.generate_reason_prompt == "Score 1.0."
    assert [c.schema_names for c in main.calls] == [("Label",)]
    assert [c.schema_names for c in other.calls] == [("Reason",)]
    assert scorer.key.endswith("/main+other")


def test_a_custom_scorer_runs_through_evaluate_and_run_evals() -> None:
    scorer = labeler(FakeJudge({"Label": good}))
    ev = evaluate([{"input": "q", "output": "fine"}], [scorer])
    assert ev.dataset["label_score"] == [1.0]
    result = run_evals([{"input": "q"}], [scorer], lambda q: "fine")
    assert result.scores == {"label-scorer": 1.0}


def test_incomplete_scorers_are_refused_before_any_call() -> None:
    with pytest.raises(ValueError, match="has no generate_score step"):
        create_scorer("empty", judge=FakeJudge({})).run({"output": "x"})
    with pytest.raises(ValueError, match="has judge steps but no judge"):
        create_scorer("nojudge").analyze(label_step()).generate_score(lambda r, s: 1.0).run({"output": "x"})


def test_a_rule_shortcut_decides_without_the_judge() -> None:
    judge = FakeJudge({"Label": good})
    scorer = create_scorer(
        "label", judge=judge, shortcut=lambda run, results: (0.0, "Empty.") if not run.output else None
    )
    scorer = scorer.analyze(label_step()).generate_score(lambda run, results: 1.0)
    empty, full = scorer.run_batch([{"output": ""}, {"output": "fine"}])
    assert (empty.score, empty.reason, empty.prob_score) == (0.0, "Empty.", 0.0) and full.score == 1.0
    assert [len(c.prompts) for c in judge.calls] == [1]  # the judge saw only the non-empty row


def test_the_prompt_hash_never_calls_a_steps_own_judge() -> None:
    """The probe run behind `prompt_hash` answers every judge step itself, a step's own judge
    included (that judge may be a real model)."""
    own = FakeJudge({}, identity="own")  # unscripted: any call raises
    scorer = create_scorer("label", judge=FakeJudge({})).analyze(label_step(own)).generate_score(lambda r, s: 1.0)
    assert scorer.prompt_hash and own.calls == []
