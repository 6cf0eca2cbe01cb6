"""Bias and answer relevancy (one verdict per statement of the output), on the scripted fake
judge: each formula against the values Mastra's formula gives, and each edge case."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import answer_relevancy_scorer, bias_scorer
from localjudge.judge import Generation
from tests.fakes import FakeJudgeFactory, toxicity_statements


def sentences(n: int) -> str:
    return " ".join(f"Statement number {i}." for i in range(1, n + 1))


def verdicts(labels: list[str]) -> dict[str, Any]:
    return {"verdicts": [{"verdict": label, "reason": "r"} for label in labels]}


# Mastra's bias: #yes / #opinions x scale (its judge lists only opinions: here "fact" leaves the count).
@pytest.mark.parametrize(("labels", "scale", "expected"), [
    (["yes", "no", "fact"], 1.0, 0.5),
    (["yes", "yes"], 1.0, 1.0),
    (["no"], 1.0, 0.0),
    (["fact", "fact"], 1.0, 0.0),  # no opinions: Mastra's n = 0 gives 0
    (["yes", "no", "no", "fact"], 10.0, 3.33),
])
def test_bias_is_biased_opinions_over_opinions(labels: list[str], scale: float, expected: float,
                                               fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(BiasVerdicts=verdicts(labels))
    result = bias_scorer(judge, scale=scale).run({"input": "q", "output": sentences(len(labels))})
    assert result.score == expected and result.error is None
    assert [v["statement"] for v in result.analyze_step_result["verdicts"]] == \
        [f"Statement number {i}." for i in range(1, len(labels) + 1)]


# Mastra's answer relevancy: (#yes + uncertaintyWeight x #unsure) / n x scale.
@pytest.mark.parametrize(("labels", "weight", "scale", "expected"), [
    (["yes", "unsure", "no"], 0.3, 1.0, 0.43),
    (["yes", "yes"], 0.3, 1.0, 1.0),
    (["unsure"], 0.5, 1.0, 0.5),
    (["no", "no"], 0.3, 10.0, 0.0),
    (["unsure", "unsure", "yes", "no"], 0.3, 10.0, 4.0),
    (["unsure"], 0.0, 1.0, 0.0),
])
def test_answer_relevancy_counts_unsure_statements_at_their_weight(
        labels: list[str], weight: float, scale: float, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(RelevancyVerdicts=verdicts(labels))
    scorer = answer_relevancy_scorer(judge, scale=scale, uncertainty_weight=weight)
    assert scorer.run({"input": "What?", "output": sentences(len(labels))}).score == expected


def test_one_verdict_per_statement_is_asked(fake_judge: FakeJudgeFactory) -> None:
    from localjudge.samples.runs import Sample
    from localjudge.scorers import answer_relevancy, bias

    for factory, module, family in ((bias_scorer, bias, "BiasVerdicts"),
                                    (answer_relevancy_scorer, answer_relevancy, "RelevancyVerdicts")):
        judge = fake_judge()
        factory(judge).run({"input": "Tell me.", "output": sentences(3)})
        (call,) = [c for c in judge.calls if c.schema_names == (family,)]
        assert toxicity_statements(call.prompts[0]) == [f"Statement number {i}." for i in (1, 2, 3)]
        schema = module.analyze_schema(Sample("r", "Tell me.", sentences(3)), {}).model_json_schema()
        assert (schema["properties"]["verdicts"]["minItems"], schema["properties"]["verdicts"]["maxItems"]) == (3, 3)


def test_an_empty_output_scores_zero_without_the_judge(fake_judge: FakeJudgeFactory) -> None:
    for factory in (bias_scorer, answer_relevancy_scorer):
        judge = fake_judge()
        result = factory(judge).run({"input": "q", "output": "  "})
        assert result.score == 0 and not judge.calls


def test_answer_relevancy_without_an_input_is_unscored(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = answer_relevancy_scorer(judge).run({"input": "", "output": "An answer."})
    assert result.score is None and result.error_kind == "unscorable" and "needs an input" in (result.error or "")
    assert not judge.calls


@pytest.mark.parametrize("bad", [-0.1, 1.5, True, "0.3"])
def test_the_uncertainty_weight_is_checked(bad: Any, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="uncertainty_weight must be a number from 0 to 1"):
        answer_relevancy_scorer(fake_judge(), uncertainty_weight=bad)


def test_probability_scores_from_the_verdict_labels(fake_judge: FakeJudgeFactory) -> None:
    """Relevancy: mean of P(yes) + weight x P(unsure). Bias: mean over opinions of P(yes)
    against P(no); statements judged facts leave the mean."""
    import json

    relevancy = Generation(text=json.dumps(verdicts(["yes", "unsure"])), finished=True, new_tokens=9,
                           label_probs=({"yes": 0.8, "unsure": 0.2, "no": 0.0},
                                        {"yes": 0.1, "unsure": 0.5, "no": 0.4}))
    result = answer_relevancy_scorer(fake_judge(RelevancyVerdicts=relevancy)).run(
        {"input": "q", "output": sentences(2)})
    assert result.prob_score == round((0.8 + 0.3 * 0.2 + 0.1 + 0.3 * 0.5) / 2, 4)
    bias = Generation(text=json.dumps(verdicts(["yes", "fact", "no"])), finished=True, new_tokens=9,
                      label_probs=({"yes": 0.6, "no": 0.2, "fact": 0.2}, {"yes": 0.0, "no": 0.1, "fact": 0.9},
                                   {"yes": 0.25, "no": 0.75, "fact": 0.0}))
    result = bias_scorer(fake_judge(BiasVerdicts=bias)).run({"input": "q", "output": sentences(3)})
    assert result.prob_score == round((0.75 + 0.25) / 2, 4)


def test_direct_mode_asks_one_question(fake_judge: FakeJudgeFactory) -> None:
    for factory, higher in ((bias_scorer, False), (answer_relevancy_scorer, True)):
        scorer = factory(fake_judge(), mode="direct", scale=5)
        assert scorer.higher_is_better is higher
        assert scorer.run({"input": "q", "output": "Some answer."}).score == 5


@pytest.mark.slow
def test_bias_and_answer_relevancy_on_the_real_model(real_judge) -> None:
    """The default model on the example file: every row scored (with a probability score) or
    unscored with its reason; a second run (of two rows, batched apart from the others) gives
    the same results."""
    import json
    from pathlib import Path

    from localjudge import evaluate

    rows = [json.loads(line) for line in (Path(__file__).parent.parent / "examples" / "example.jsonl").open()]
    scorers = [bias_scorer(real_judge), answer_relevancy_scorer(real_judge)]
    first = evaluate(rows, scorers, batch_size=8)
    for name in ("bias", "answer_relevancy"):
        for result in first.results[name]:
            if result.score is None:
                assert result.error_kind and result.error, result
            elif result.analyze_step_result:
                assert result.prob_score is not None and result.reason, result
        assert sum(r.score is not None for r in first.results[name]) >= len(rows) - 2, name
    again = evaluate(rows[:2], scorers, batch_size=8)  # batched with other rows before: the same on CPU
    assert [[r.to_dict() for r in again.results[n]] for n in first.results] == \
        [[r.to_dict() for r in first.results[n][:2]] for n in first.results]


def test_bench_without_a_built_in_benchmark_for_the_scorer_says_what_to_do() -> None:
    from localjudge.bench.data import select_benchmarks

    with pytest.raises(ValueError, match="no built-in benchmark measures bias: give your own labeled file"):
        select_benchmarks(None, ["bias"])
    assert {b.scorer for b in select_benchmarks(None, ["toxicity", "bias"])} == {"toxicity"}
