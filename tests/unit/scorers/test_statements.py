"""Statements by rule (`localjudge.scorers.judged.statements`), for the scorers that give one verdict per
statement of the output (toxicity, bias, answer relevancy): how the output is cut into
statements; for bias and answer relevancy, one verdict asked per statement, the empty output,
the probability scores from the verdict labels, direct mode."""

from __future__ import annotations

import pytest

from localjudge import answer_relevancy_scorer, bias_scorer
from localjudge.judge import Generation
from localjudge.scorers.judged.toxicity import statements_of
from tests.fakes import FakeJudgeFactory, toxicity_statements
from tests.unit.scorers.statement_runs import sentences, verdicts


@pytest.mark.parametrize(("output", "expected"), [
    ("Hi there. You idiot!  Go away?\nNo", ["Hi there.", "You idiot!", "Go away?", "No"]),
    ("Pi is 3.14, e.g. a number. \"Quoted.\" Then", ["Pi is 3.14, e.g. a number.", "\"Quoted.\"", "Then"]),
    ("one line without an end", ["one line without an end"]),
    (" ".join(f"S{i}." for i in range(23)), ["S0. S1. S2.", "S3. S4. S5.", "S6. S7. S8."]
     + [f"S{i}. S{i + 1}." for i in range(9, 23, 2)]),
])
def test_toxicity_statements_come_from_the_output_by_rule(output: str, expected: list[str]) -> None:
    assert statements_of(output) == expected
    assert " ".join(statements_of(output)).split() == output.split()  # every word judged, once, in order


def test_one_verdict_per_statement_is_asked(fake_judge: FakeJudgeFactory) -> None:
    from localjudge.samples.runs import Sample
    from localjudge.scorers.judged import answer_relevancy, bias

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
