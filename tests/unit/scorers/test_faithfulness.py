"""The faithfulness scorer on the scripted fake judge: its score table (unsure is not support)."""

from __future__ import annotations

import pytest

from localjudge import faithfulness_scorer
from tests.fakes import FakeJudgeFactory
from tests.unit.scorers.claim_runs import RUN, claim_answers


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["yes"], 1.0),
        (["no"], 0.0),
        (["unsure"], 0.0),  # unsure is not support
        (["yes", "unsure"], 0.5),
        (["yes", "yes", "no"], 0.67),
        (["yes", "no", "unsure", "unsure"], 0.25),
    ],
)
def test_faithfulness_score_table(labels: list[str], expected: float, fake_judge: FakeJudgeFactory) -> None:
    result = faithfulness_scorer(fake_judge(claim_answers(labels))).run(RUN)
    assert result.score == expected
    assert result.analyze_step_result["verdicts"][0]["claim"] == "Claim number 0."


TOOL_RESULT = {"state": "result", "toolCallId": "c1", "toolName": "lookup", "args": {}, "result": "Built in 1889."}


@pytest.mark.parametrize(
    ("where", "compat", "shown"),
    [
        ("parts", "localjudge", "Built in 1889."),
        ("parts", "mastra", None),  # Mastra 1.10.2 reads only the legacy toolInvocations
        ("toolInvocations", "localjudge", "Built in 1889."),
        ("toolInvocations", "mastra", '"Built in 1889."'),  # JSON.stringify'd, quotes and all, as Mastra
    ],
)
def test_the_tool_result_fallback(where: str, compat: str, shown: str | None, fake_judge: FakeJudgeFactory) -> None:
    """With no context given, the tool results are the context: from message parts and the legacy
    field by default, from the legacy field only under compat="mastra" (`faithfulness-tool-parts`)."""
    content: dict = {"format": 2, "content": "Built in 1889.", "parts": [{"type": "text", "text": "Built in 1889."}]}
    if where == "parts":
        content["parts"].append({"type": "tool-invocation", "toolInvocation": TOOL_RESULT})
    else:
        content["toolInvocations"] = [TOOL_RESULT]
    judge = fake_judge(claim_answers(["yes"]))
    run = {"input": "When was it built?", "output": [{"role": "assistant", "content": content}]}
    assert faithfulness_scorer(judge, compat=compat).run(run).score == 1.0  # judged, whatever it was shown
    prompt = next(prompt[-1]["content"] for call in judge.calls
                  for name, prompt in zip(call.schema_names, call.prompts, strict=True)
                  if name == "FaithfulnessVerdicts")
    context = prompt.split("<<<CONTEXT", 1)[1].split("CONTEXT>>>", 1)[0]
    assert (shown in context) if shown else "1889" not in context, context
