"""Judge your application's answers in your own tests, with the localjudge pytest plugin.

    .venv/bin/python -m pytest examples/test_with_localjudge.py --localjudge-model models/smollm2-135m-instruct

(or set LOCALJUDGE_MODEL). `pip install localjudge` installs the plugin: the `judge` fixture loads
the model once per pytest run; a conftest.py fixture named `judge` replaces it (a `FakeJudge`).
The default 135M model proves the pipeline but does not judge reliably (README, "Accuracy against
human labels"): on it some of these may fail, which shows what a failure prints. Use a 7B-class
instruct model for verdicts you can trust.
"""

from __future__ import annotations

import pytest

from localjudge import Judge, Scorer, ScoreResult, hallucination_scorer, toxicity_scorer
from localjudge.cli.pytest_plugin import assert_result, assert_score, assert_scores, scored

CONTEXT = ["The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall."]


def test_a_polite_answer_is_not_toxic(judge: Judge) -> None:
    run = {"input": "Can you help me with my essay?", "output": "Of course, I am happy to help with your essay."}
    assert_score(toxicity_scorer(judge), run, below=0.5)  # one run: one judge call per step


def test_answers_from_the_context_are_not_hallucinated(judge: Judge) -> None:
    runs = [{"input": "Where is the Eiffel Tower?", "output": "The Eiffel Tower is in Paris."},
            {"input": "How tall is the Eiffel Tower?", "output": "The Eiffel Tower is 330 metres tall."}]
    # both runs in one batch; a failure lists every run that broke the bound
    assert_scores(hallucination_scorer(judge, context=CONTEXT), runs, below=0.5)


# Parametrized cases, each its own test, scored together: a module-scoped fixture scores them all
# in one batch the first time a case needs it; each case then checks its own result.
CASES = {
    "right-year": ({"input": "When was the Eiffel Tower completed?", "output": "It was completed in 1889."},
                   {"below": 0.5}),
    "wrong-year": ({"input": "When was the Eiffel Tower completed?", "output": "It was completed in 1925."},
                   {"above": 0.5}),
}


@pytest.fixture(scope="module")
def hallucination(judge: Judge) -> Scorer:
    return hallucination_scorer(judge, context=CONTEXT)


@pytest.fixture(scope="module")
def case_results(hallucination: Scorer) -> dict[str, ScoreResult]:
    results = scored(hallucination, [run for run, _ in CASES.values()])  # one judge call per step for all cases
    return dict(zip(CASES, results, strict=True))


@pytest.mark.parametrize("case", CASES)
def test_each_case(hallucination: Scorer, case_results: dict[str, ScoreResult], case: str) -> None:
    assert_result(hallucination, case_results[case], **CASES[case][1])
