"""Summarization's `source` and `source_extractor`, Mastra's `source` / `sourceExtractor`
(@mastra/evals scorers/llm/summarization: `getSourceText`): the extractor on an agent-shaped run,
then the static source, then the run's input; what the judge is shown and what is keyed."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import evaluate
from localjudge.scorers.judged.summarization import summarization_scorer
from tests.fakes import FakeJudgeFactory

DOC = "The plant opened in 1990. It employs 200 people."
AGENT_INPUT = {"inputMessages": [{"role": "user", "content": "Summarise the attached report."}],
               "rememberedMessages": [], "systemMessages": [], "taggedSystemMessages": {}}
AGENT_OUTPUT = [{"id": "m1", "role": "assistant", "createdAt": "2026-01-01T00:00:00Z",
                 "content": {"format": 2, "parts": [{"type": "text", "text": "The plant opened in 1990."}]}}]


def shown_source(judge: Any) -> str:
    """The source block of the first (judgement) prompt."""
    prompt = str(judge.calls[0].prompts[0][-1]["content"])
    return prompt.split("<<<SOURCE\n", 1)[1].split("\nSOURCE>>>", 1)[0]


def from_run(given: Any, output: Any) -> str:
    assert given is AGENT_INPUT or given == AGENT_INPUT  # Mastra's agent input, as given
    return DOC


def test_the_extractor_gives_the_source_of_an_agent_run(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = summarization_scorer(judge, source_extractor=from_run).run({"input": AGENT_INPUT, "output": AGENT_OUTPUT})
    assert result.score is not None and shown_source(judge) == DOC


def test_a_static_source_replaces_the_input_and_is_keyed(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorer = summarization_scorer(judge, source=DOC)
    assert scorer.run({"input": "Summarise it.", "output": "The plant opened in 1990."}).score is not None
    assert shown_source(judge) == DOC
    assert scorer.sample({"input": "q", "output": "o"}).input == DOC  # what is keyed and judged


def test_the_extractor_is_skipped_for_a_plain_run_then_the_source_then_the_input(fake_judge: FakeJudgeFactory) -> None:
    def never(given: Any, output: Any) -> str:
        raise AssertionError("called on a run that is not agent-shaped")
    judge = fake_judge()
    summarization_scorer(judge, source_extractor=never, source="Static source.").run(
        {"input": "Summarise.", "output": "Static."})
    assert shown_source(judge) == "Static source."
    plain = fake_judge()
    summarization_scorer(plain, source_extractor=never).run({"input": DOC, "output": "The plant opened in 1990."})
    assert shown_source(plain) == DOC  # neither applies: the input is the source


def test_an_extractor_giving_no_text_leaves_that_run_unscored(fake_judge: FakeJudgeFactory) -> None:
    runs = [{"input": AGENT_INPUT, "output": AGENT_OUTPUT}]
    evaluation = evaluate(runs, [summarization_scorer(fake_judge(), source_extractor=lambda i, o: 42)])
    assert evaluation.results["summarization"][0].error_kind == "invalid_run"
    assert "source_extractor gave int, not the source text" in str(evaluation.results["summarization"][0].error)


@pytest.mark.parametrize("options, message", [({"source": 3}, "source must be text"),
                                              ({"source_extractor": "doc"}, "source_extractor must be a function")])
def test_bad_options_are_one_line_errors(fake_judge: FakeJudgeFactory, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        summarization_scorer(fake_judge(), **options)
