"""Mastra's own scorers (@mastra/evals 1.10.2 under @mastra/core 1.71.0) judging through
`localjudge serve` on the default model, the model given as a Mastra user gives an
OpenAI-compatible endpoint. Mastra writes each step's JSON schema into the prompt and streams
the answer; on a vLLM server the same scorers scored 0 of 24 judgments on this model
(docs/benchmarks/speed.md). Here every judgment is scored, twice with the same numbers."""

from __future__ import annotations

import pytest

from tests.serve.conftest import example_rows, mastra
from tests.serve.serve_process import ServeProcess

SCORERS = ["hallucination", "faithfulness", "toxicity", "gluten"]


def test_every_mastra_judgment_is_scored_twice_alike(request: pytest.FixtureRequest, serve: ServeProcess) -> None:
    rows = example_rows(1)
    first = mastra(request, serve.url, rows, SCORERS)
    failed = [r for r in first if "score" not in r]
    assert not failed, failed
    assert len(first) == len(rows) * len(SCORERS)
    for result in first:
        assert result["reason"], result  # the reason step (text) answered too
    second = mastra(request, serve.url, rows, SCORERS)
    assert [(r["run_id"], r["scorer"], r["score"], r["reason"]) for r in second] == \
        [(r["run_id"], r["scorer"], r["score"], r["reason"]) for r in first]
