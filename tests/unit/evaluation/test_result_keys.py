"""Result keys hash a run field only where the scorer shows it: unchanged for the scorers that show
only input, output and context; a changed ground truth is judged again only by a scorer that shows it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from localjudge import evaluate
from localjudge.evaluation.store import ResultStore, result_key
from localjudge.samples.runs import Sample
from tests.unit.samples.test_run_fields import BASE, assistant, sample, user
from tests.unit.scoring.test_requires import requiring, verdict_judge


def old_key(scorer_key: str, s: Sample) -> str:
    """The key before run fields beyond input, output and context existed."""
    payload = json.dumps([scorer_key, s.run_id, s.input, s.output, s.context], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def test_result_keys_hash_a_field_only_where_it_is_shown() -> None:
    a = sample(context=["Paris is in France."], ground_truth="Paris, France.", run_id="r")
    b = sample(context=["Paris is in France."], ground_truth="Lyon.", run_id="r")
    texts = {"input", "output", "context"}
    assert result_key("k", a) == result_key("k", a, texts) == old_key("k", a)  # unchanged for the old scorers
    assert result_key("k", a, texts) == result_key("k", b, texts)
    assert result_key("k", a, texts | {"ground_truth"}) != result_key("k", b, texts | {"ground_truth"})
    assert result_key("k", a, {"ground_truth"}) != old_key("k", a)
    c = sample(tool_calls=[{"tool_name": "search", "result": "one"}], run_id="r")
    d = sample(tool_calls=[{"tool_name": "search", "result": "two"}], run_id="r")
    assert result_key("k", c, texts) == result_key("k", d, texts)
    assert result_key("k", c, {"tool_calls"}) != result_key("k", d, {"tool_calls"})  # dataclasses hash as JSON
    e = sample(conversation=[user("Hi"), assistant("Hello")], run_id="r")
    assert result_key("k", e, {"conversation"}) != result_key("k", sample(run_id="r"), {"conversation"})


def test_a_changed_ground_truth_is_judged_again_only_by_a_scorer_that_shows_it(tmp_path: Any) -> None:
    rows = [{**BASE, "run_id": "1", "ground_truth": "Paris, France."}]
    judge = verdict_judge()
    shows, ignores = requiring(judge, shows="ground_truth"), requiring(judge, shows="output")
    assert "ground_truth" in shows.shown_fields and "ground_truth" not in ignores.shown_fields
    for scorer in (shows, ignores):
        store = ResultStore(tmp_path / scorer.prompt_hash)
        evaluate(rows, [scorer], store=store)
        before = len(judge.calls)
        evaluate(rows, [scorer], store=ResultStore(tmp_path / scorer.prompt_hash))
        assert len(judge.calls) == before  # the same rows: resumed
        evaluate([{**rows[0], "ground_truth": "Lyon."}], [scorer], store=ResultStore(tmp_path / scorer.prompt_hash))
        assert len(judge.calls) == before + (scorer is shows)


def test_tool_call_keys_are_the_ones_files_were_written_with() -> None:
    """A key taken with the code before tool calls carried Mastra's isError (3466f71): a tool call
    without the flag keys as it did then (an --out file written before resumes without judging
    again); with the flag set, the key changes."""
    from localjudge.samples.tool_calls import ToolCall

    calls = (ToolCall("weather", '{"city":"Paris"}', "sunny"), ToolCall("clock", "{}", None, "call"))
    before = Sample(run_id="r1", input="Weather in Paris?", output="Sunny.", tool_calls=calls)
    assert result_key("tool_call_accuracy@v1", before, {"tool_calls"}) == (
        "8e0f8b3ff665e3949a02c4eb601a0a394a6ce8fd908c575621220ae299c367b3")
    flagged = Sample(run_id="r1", input="Weather in Paris?", output="Sunny.",
                     tool_calls=(ToolCall("weather", '{"city":"Paris"}', "sunny", is_error=True), calls[1]))
    assert result_key("tool_call_accuracy@v1", flagged, {"tool_calls"}) != result_key(
        "tool_call_accuracy@v1", before, {"tool_calls"})
