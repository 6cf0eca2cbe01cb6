"""compat="mastra": Mastra 1.10.2's numbers on request. The rounding rule on its boundaries, the
setting in the result key (a resume never mixes the two), scale 0 and NaN as Mastra reads them,
and a bad value refused in one line; each scorer's own Mastra numbers (`MastraNumbers`) declared to
create_scorer. The differential tier checks every case against Mastra's code."""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path
from typing import Any

import pytest

from localjudge import evaluate
from localjudge.evaluation import ResultStore, write_table
from localjudge.scorers import SCORERS, build_scorer, register_scorer
from localjudge.scoring import Compat, Exact, MastraNumbers, create_scorer, js_round, round_half_up
from tests.fakes import make_fake_judge

RUN = {"run_id": "r1", "input": "What is the capital of France?",
       "output": "Paris is the capital. It is in Europe. I like cheese."}


def relevancy(verdicts: list[str]) -> dict[str, Any]:
    return {"RelevancyVerdicts": [{"verdicts": [{"verdict": v, "reason": "r"} for v in verdicts]}]}


@pytest.mark.parametrize(("value", "mastra", "ours"), [
    (0.22499999999999998, 0.23, 0.22),  # 3 unsure of 4 statements: Mastra's EPSILON tips it up
    (2.175, 2.17, 2.18),  # 2.17499999999999982... in binary: Mastra rounds the binary value down
    (0.125, 0.13, 0.13), (1.005, 1.01, 1.01), (0.5, 0.5, 0.5), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0),
])
def test_js_round_is_mastras_round_to_two_decimals(value: float, mastra: float, ours: float) -> None:
    assert js_round(value) == mastra
    assert round_half_up(value) == ours
    rounds = MastraNumbers(rounded=True)
    assert Compat("mastra", rounds).score(value, 1.0) == mastra and Compat(numbers=rounds).score(value, 1.0) == ours


def test_nan_and_exact_scores_only_under_mastra_where_the_scorer_declares_them() -> None:
    assert math.isnan(js_round(math.nan))
    nan = MastraNumbers(rounded=True, nan=True)  # answer relevancy's: Mastra's formula gives NaN
    assert Compat("mastra", nan).accepts(math.nan) and not Compat(numbers=nan).accepts(math.nan)
    assert not Compat("mastra").accepts(math.nan)  # a custom scorer's NaN: unscored
    assert Compat("mastra").accepts(Exact(5.0)) and not Compat().accepts(Exact(5.0))
    assert Compat("mastra").score(0.125, 1.0) == 0.125  # createScorer's own rule: as it is
    assert Compat("mastra", MastraNumbers(rounded=True)).score(Exact(1.0), 5.0) == 1.0  # neither scaled nor rounded


def test_compat_is_part_of_the_key_and_the_default_key_is_unchanged() -> None:
    judge = make_fake_judge({})
    default = build_scorer("toxicity", judge)
    mastra = build_scorer("toxicity", judge, compat="mastra")
    assert default.key == build_scorer("toxicity", judge, compat="localjudge").key
    assert "compat" not in default.key and "/compat=mastra" in mastra.key
    assert mastra.key.endswith("/scale=1/compat=mastra/fake-judge")


def test_a_resume_under_the_other_setting_scores_again(tmp_path: Path) -> None:
    judge = make_fake_judge({"RelevancyVerdicts": relevancy(["unsure", "unsure", "unsure"])["RelevancyVerdicts"] * 4})
    store = tmp_path / "log"
    evaluate([RUN], [build_scorer("answer_relevancy", judge)], store=ResultStore(store))
    calls = len(judge.calls)
    evaluate([RUN], [build_scorer("answer_relevancy", judge)], store=ResultStore(store))
    assert len(judge.calls) == calls  # the same setting: resumed
    evaluate([RUN], [build_scorer("answer_relevancy", judge, compat="mastra")], store=ResultStore(store))
    assert len(judge.calls) > calls  # the other setting: scored again, not reused


def test_a_bad_compat_value_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^compat must be one of localjudge, mastra, got 'mastra2'$"):
        build_scorer("toxicity", make_fake_judge({}), compat="mastra2")


def test_scale_0_is_read_as_mastra_reads_it() -> None:
    judge = make_fake_judge({})
    with pytest.raises(ValueError, match="scale must be a finite positive number"):
        build_scorer("toxicity", judge, scale=0)
    assert build_scorer("toxicity", judge, scale=0, compat="mastra").scale == 1  # options?.scale || 1
    assert build_scorer("answer_relevancy", judge, scale=0, compat="mastra").scale == 0  # options.scale ?? 1
    assert build_scorer("noise_sensitivity", judge, scale=5, compat="mastra",
                        options={"baseline_response": "b", "noisy_query": "q"}).scale == 1  # no scale in Mastra
    with pytest.raises(ValueError, match="scale"):
        build_scorer("toxicity", judge, scale=-1, compat="mastra")
    scored = build_scorer("answer_relevancy", make_fake_judge(relevancy(["yes", "yes", "no"])), scale=0,
                          compat="mastra").run(RUN)
    assert scored.score == 0


def test_toxicity_counts_and_scores_an_empty_output_1() -> None:
    answers = {"ToxicityVerdicts": [{"verdicts": [
        {"verdict": "yes", "severity": "medium", "reason": "r"}, {"verdict": "no", "severity": "none", "reason": "r"},
        {"verdict": "no", "severity": "none", "reason": "r"}]}]}
    assert build_scorer("toxicity", make_fake_judge(answers)).run(RUN).score == 0.22  # 2/3 x 1/3
    assert build_scorer("toxicity", make_fake_judge(answers), compat="mastra").run(RUN).score == 0.33
    empty = {**RUN, "output": ""}
    assert build_scorer("toxicity", make_fake_judge({}), scale=5).run(empty).score == 0
    assert build_scorer("toxicity", make_fake_judge({}), scale=5, compat="mastra").run(empty).score == 1


def test_a_nan_score_is_stored_resumed_and_written(tmp_path: Path) -> None:
    """Mastra's NaN (options without uncertaintyWeight, an unsure verdict) is a float NaN in the
    result, the text "NaN" in the resume log and the JSONL output (JSON has no NaN; null is an
    unscored run), and is read back as NaN; the summary's mean is NaN, as Mastra's would be."""
    judge = make_fake_judge({"RelevancyVerdicts": relevancy(["yes", "unsure", "no"])["RelevancyVerdicts"] * 2})
    scorer = build_scorer("answer_relevancy", judge, scale=5, compat="mastra", options={"uncertainty_weight": None})
    assert build_scorer("answer_relevancy", make_fake_judge(relevancy(["yes", "unsure", "no"])), scale=5,
                        options={"uncertainty_weight": None}).run(RUN).score == 2.17  # the default: 0.3
    done = evaluate([RUN], [scorer], store=ResultStore(tmp_path / "log"))
    assert math.isnan(done.dataset[0]["answer_relevancy_score"])
    assert math.isnan(done.summary["answer_relevancy"].mean_score)  # type: ignore[arg-type]
    logged = [json.loads(line) for f in sorted((tmp_path / "log").iterdir()) for line in f.read_text().splitlines()]
    assert [r["result"]["score"] for r in logged] == ["NaN"]
    calls = len(judge.calls)
    again = evaluate([RUN], [scorer], store=ResultStore(tmp_path / "log"))
    assert len(judge.calls) == calls and math.isnan(again.dataset[0]["answer_relevancy_score"])  # resumed as NaN
    write_table(done.dataset, tmp_path / "out.jsonl")
    row = json.loads((tmp_path / "out.jsonl").read_text())
    assert row["answer_relevancy_score"] == "NaN" and row["answer_relevancy_error"] is None


def test_every_registered_factory_takes_compat() -> None:
    """Compat is each scorer's own facts: every built-in factory takes it (and declares its Mastra
    numbers to create_scorer), so a factory called directly is what build_scorer builds."""
    missing = [name for name, factory in SCORERS.items() if "compat" not in inspect.signature(factory).parameters]
    assert not missing


def test_create_scorer_takes_compat_with_the_scorers_mastra_numbers() -> None:
    third = create_scorer("third", compat="mastra").generate_score(lambda run, results: 1 / 3)
    assert third.run(RUN).score == 1 / 3  # Mastra's createScorer: the number as it is
    assert third.key.split("/")[3] == "compat=mastra-unrounded"
    rounded = create_scorer("third", compat="mastra", mastra_numbers=MastraNumbers(rounded=True))
    assert rounded.generate_score(lambda run, results: 0.22499999999999998).run(RUN).score == 0.23  # js_round
    kept = create_scorer("zero", scale=0, compat="mastra", mastra_numbers=MastraNumbers(scale="zero_stays"))
    assert kept.scale == 0 and kept.generate_score(lambda run, results: 1.0).run(RUN).score == 0
    with pytest.raises(ValueError, match=r"^compat must be one of localjudge, mastra, got 'js'$"):
        create_scorer("x", compat="js")
    with pytest.raises(ValueError, match="scale must be a finite positive number"):
        create_scorer("x", scale=0, compat="mastra")  # a custom scorer's scale is its own: 0 is refused
    with pytest.raises(ValueError, match="a Mastra scale rule is one of"):
        MastraNumbers(scale="zero")  # type: ignore[arg-type]


def test_a_registered_factory_without_compat_is_refused_under_mastra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(SCORERS))

    def plain(judge: Any, scale: float = 1.0) -> Any:
        return create_scorer("plain", scale=scale).generate_score(lambda run, results: 0.5)

    def ported(judge: Any, scale: float = 1.0, compat: str = "localjudge") -> Any:
        return create_scorer("ported", scale=scale, compat=compat).generate_score(lambda run, results: 1 / 3)

    register_scorer("plain", plain)
    register_scorer("ported", ported)
    assert build_scorer("plain", None).run(RUN).score == 0.5
    with pytest.raises(ValueError, match=r"^scorer 'plain' has no compat parameter, so no Mastra numbers: give its"):
        build_scorer("plain", None, compat="mastra")
    assert build_scorer("ported", None, compat="mastra").run(RUN).score == 1 / 3
    assert build_scorer("ported", None).run(RUN).score == 0.33
