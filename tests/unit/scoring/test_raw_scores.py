"""Custom scores kept as returned (issue 46 item 2): under ``score_returns="score"`` the number
`generate_score` returns is the score, as Mastra's ``createScorer`` keeps it: any finite number
(87.5, -1), rounded to two decimals by default and left as it is under ``compat="mastra"``
(Mastra's 1/3 is 0.3333...). NaN and infinity leave the run unscored, saying why. Downstream a
score outside [0, scale] is a plain number: means are plain means (run_evals' too), a gate
passes at a mean of its scale or more, `prob_score` is read as the score is, and the store keeps
and resumes it. The differential tier runs the same scorers under Mastra
(tests/differential/cases_custom.py, cases_run_evals.py)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import pytest

from localjudge import FakeJudge, JudgeStep, ResultStore, Scorer, create_scorer, evaluate, run_evals
from localjudge.judge import Generation
from localjudge.scorers import build_scorer
from localjudge.scoring import Strict


def constant(value: Any, *, compat: str = "localjudge", scale: float = 1.0) -> Scorer:
    """Mastra's ``createScorer(...).generateScore(() => value)``, ported."""
    return create_scorer("constant", score_returns="score", compat=compat, scale=scale).generate_score(
        lambda run, results: value)


RUN = {"input": "q", "output": "a"}


@pytest.mark.parametrize(("value", "default", "mastra"), [
    (1 / 3, 0.33, 1 / 3), (87.5, 87.5, 87.5), (-1, -1.0, -1.0), (2.675, 2.68, 2.675), (0, 0.0, 0.0),
    (1e300, 1e300, 1e300),  # past 2**52 every float is whole: kept, never an overflow
])
def test_a_custom_score_is_kept_as_returned(value: float, default: float, mastra: float) -> None:
    assert constant(value).run(RUN).score == default  # the default rounds to two decimals (`unrounded`)
    assert constant(value, compat="mastra").run(RUN).score == mastra  # Mastra's: as it is, to the bit
    assert constant(value, scale=10).run(RUN).score == default  # the score itself: the scale does not touch it


@pytest.mark.parametrize("compat", ["localjudge", "mastra"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, "0.5", None])
def test_a_score_that_is_not_a_finite_number_is_unscored_saying_why(bad: Any, compat: str) -> None:
    result = constant(bad, compat=compat).run(RUN)
    assert result.failed and result.error_kind == "step_error"
    assert result.error is not None and result.error.startswith("score: generate_score gave ")
    assert result.error.endswith("not a finite number (the score)")


def test_a_fraction_is_still_a_fraction() -> None:
    """The default contract is unchanged: a fraction in [0, 1] times the scale."""
    fraction = create_scorer("f", scale=10).generate_score(lambda run, results: 0.7)
    assert fraction.run(RUN).score == 7.0
    too_big = create_scorer("f").generate_score(lambda run, results: 87.5).run(RUN)
    assert too_big.failed and "not a fraction in [0, 1]" in (too_big.error or "")


def test_a_port_as_written_keeps_mastras_contract_under_compat() -> None:
    """Issue 60: ``createScorer(...).generateScore(() => 4)`` (a 1-5 rating) ported with only
    ``compat="mastra"`` scores 4, as Mastra; the default still reads a fraction, and an explicit
    `score_returns` wins under either setting. A built-in scorer (its own `MastraNumbers`) keeps
    reading a fraction under compat."""
    def rating(**given: Any) -> Scorer:
        return create_scorer("rating", **given).generate_score(lambda run, results: 4)

    assert rating(compat="mastra").score_returns == "score" and rating(compat="mastra").run(RUN).score == 4
    assert rating(compat="mastra", scale=5).run(RUN).score == 4  # the number itself: the scale does not touch it
    assert rating().score_returns == "fraction" and "not a fraction in [0, 1]" in (rating().run(RUN).error or "")
    refused = rating(compat="mastra", score_returns="fraction").run(RUN)
    assert refused.failed and "not a fraction in [0, 1]" in (refused.error or "")
    assert rating(score_returns="score").run(RUN).score == 4.0
    assert build_scorer("toxicity", FakeJudge({}), compat="mastra").score_returns == "fraction"
    assert build_scorer("check_includes", None, options={"expected": "a"}, compat="mastra").score_returns == "fraction"


class Verdict(Strict):
    verdict: Literal["yes", "no"]


def test_prob_score_is_read_as_the_score_is() -> None:
    """Under ``score_returns="score"`` a prob score is the score itself, not times the scale."""
    judge = FakeJudge({"Verdict": lambda prompt: Generation('{"verdict": "yes"}', label_probs=({"yes": 0.9},))})

    def made(returns: str) -> Scorer:
        return (create_scorer("p", judge=judge, scale=10, score_returns=returns,  # type: ignore[arg-type]
                              prob_score=lambda results, probs: probs["analyze"][0]["yes"] * 5)
                .analyze(JudgeStep("Judge.", lambda run, results: "Judge.", Verdict))
                .generate_score(lambda run, results: 0.5))

    assert made("score").run(RUN).prob_score == 4.5 and made("score").run(RUN).score == 0.5
    assert made("fraction").run(RUN).prob_score == 45.0 and made("fraction").run(RUN).score == 5.0


def test_run_evals_means_are_of_the_scores_as_kept() -> None:
    """Mastra's mean of 1/3 and 1/3 is 0.3333...; the default's is of the rounded scores (0.33)."""
    data = [{"input": "a"}, {"input": "b"}]
    default = run_evals(data, [constant(1 / 3)], target=lambda text: text)
    mastra = run_evals(data, [constant(1 / 3, compat="mastra")], target=lambda text: text)
    assert default.scores == {"constant-scorer": 0.33}
    assert mastra.scores == {"constant-scorer": 1 / 3}


def test_out_of_range_scores_downstream(tmp_path: Path) -> None:
    """A gate passes at its scale or more (87.5 does, as Mastra's gate of 1); a threshold's bounds
    stay in [0, scale], as Mastra checks them, and a mean above them passes a minimum; a summary's
    mean is the plain mean; the store keeps -1 and 87.5 and resumes them without scoring again."""
    high, low = constant(87.5, compat="mastra"), constant(-1, compat="mastra")
    checked = run_evals([{"input": "a"}], [{"scorer": high, "threshold": 1}], target=lambda text: text, gates=[high])
    assert checked.verdict == "passed" and checked.scores == {"constant-scorer": 87.5}
    with pytest.raises(ValueError, match=r"a threshold must be a number in \[0, 1\], got 50"):
        run_evals([{"input": "a"}], [{"scorer": high, "threshold": 50}], target=lambda text: text)
    assert run_evals([{"input": "a"}], [{"scorer": low, "threshold": 0}], target=lambda text: text).verdict == "scored"

    calls: list[str] = []

    def counted(run: Any, results: Any) -> float:
        calls.append(run.output)
        return {"x": 87.5, "y": -1}.get(run.output, 0)

    scorer = create_scorer("raw", score_returns="score").generate_score(counted)
    runs = [{"run_id": "1", "input": "q", "output": "x"}, {"run_id": "2", "input": "q", "output": "y"}]
    done = evaluate(runs, [scorer], store=ResultStore(tmp_path / "log"))
    assert [row["raw_score"] for row in done.dataset] == [87.5, -1.0]
    assert done.summary["raw"].mean_score == 43.25
    again = evaluate(runs, [scorer], store=ResultStore(tmp_path / "log"))
    judged = [c for c in calls if c in ("x", "y")]  # the probe (the scorer's hash) runs it too
    assert judged == ["x", "y"] and [row["raw_score"] for row in again.dataset] == [87.5, -1.0]  # resumed
