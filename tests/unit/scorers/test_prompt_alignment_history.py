"""Prompt alignment's `include_conversation_history` (Mastra's `includeConversationHistory`) on
the scripted fake judge: the remembered messages shown as Mastra's transcript, oldest first,
before the prompts; off by default with the prompts and prompt hashes of before; the history in
the results' keys, so a resume never takes a result judged on another history; bad values refused."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge.evaluation.dataset_runs import score_runs
from localjudge.evaluation.store import ResultStore, result_key
from localjudge.samples import message_role
from localjudge.scorers import build_scorer
from localjudge.scorers.judged.conversation_history import HISTORY_NOTE
from localjudge.scorers.judged.prompt_alignment import prompt_alignment_scorer
from tests.fakes import FakeJudgeFactory

ANSWER = {"intent": {"rating": "fully"}, "requirements": [{"requirement": "Picks one", "met": "yes"}],
          "completeness": {"rating": "mostly"}, "appropriateness": {"rating": "fully"}}


def message(role: str, text: str, **extra: Any) -> dict[str, Any]:
    """A Mastra DB message (format 2): text parts, the last one counting (Mastra reads the last)."""
    parts = [{"type": "text", "text": t} for t in text.split("|")] if text else []
    return {"id": f"{role}-{text}", "role": role, "createdAt": "2026-01-01T00:00:00.000Z",
            "content": {"format": 2, "parts": parts, **extra}}


REMEMBERED = [
    message("user", "Hello there."),
    message("assistant", "Hi! How can I help?"),
    message("user", "Suggest a fruit for breakfast."),
    message("assistant", "Draft|A) an apple or B) a pear?"),  # two text parts: Mastra shows the last
    message("assistant", "", parts=[{"type": "tool-invocation"}]),  # no text: left out
    message("user", "Quick, please."),
]
TRANSCRIPT = ["user: Hello there.", "assistant: Hi! How can I help?", "user: Suggest a fruit for breakfast.",
              "assistant: A) an apple or B) a pear?", "user: Quick, please."]


def agent_run(remembered: list[dict[str, Any]], run_id: str = "r1") -> dict[str, Any]:
    return {"run_id": run_id,
            "input": {"inputMessages": [message("user", "A")], "rememberedMessages": remembered,
                      "systemMessages": [{"role": "system", "content": "Be brief."}], "taggedSystemMessages": {}},
            "output": [message("assistant", "An apple it is.")]}


def analyze_prompt(judge: Any) -> str:
    return str(judge.calls[0].prompts[0][-1]["content"])


def test_the_history_is_shown_as_mastras_transcript_before_the_prompts(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(AlignmentAnalysis=ANSWER)
    result = prompt_alignment_scorer(judge, include_conversation_history=True).run(agent_run(REMEMBERED))
    assert result.error is None and result.score == 0.94
    text = analyze_prompt(judge)
    history = "<<<HISTORY\n" + "\n".join(TRANSCRIPT) + "\nHISTORY>>>"
    assert text.startswith(history + "\n<<<SYSTEM\nBe brief.")  # Mastra: the history, then the prompts
    assert text.index("<<<REQUEST\nA\n") < text.index("RESPONSE>>>\n" + HISTORY_NOTE)  # the note after the response
    assert history in result.generate_reason_prompt  # Mastra's reason prompt shows it too
    last_three = fake_judge(AlignmentAnalysis=ANSWER)  # the last 3 messages, then those without text left out
    prompt_alignment_scorer(last_three, include_conversation_history=3).run(agent_run(REMEMBERED))
    assert analyze_prompt(last_three).startswith("<<<HISTORY\n" + "\n".join(TRANSCRIPT[-2:]) + "\nHISTORY>>>")
    mastra_shape = fake_judge(AlignmentAnalysis=ANSWER)
    prompt_alignment_scorer(mastra_shape, include_conversation_history={"maxMessages": 3}).run(agent_run(REMEMBERED))
    assert analyze_prompt(mastra_shape) == analyze_prompt(last_three)


def prompts(judge: Any) -> list[Any]:
    return [call.prompts for call in judge.calls]


@pytest.mark.parametrize("mode", ["pipeline", "direct"])
def test_without_remembered_messages_the_prompts_are_the_ones_of_before(mode: str,
                                                                       fake_judge: FakeJudgeFactory) -> None:
    """On, a run with no history (none remembered, a plain string, a list of chat messages: Mastra
    reads history only from an agent input's rememberedMessages) is asked as with the option off;
    off (the default), a run's remembered messages are never shown."""
    chat = {"input": [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."},
                      {"role": "user", "content": "A"}], "output": "An apple."}
    for run in (agent_run([]), chat, {"input": "A", "output": "An apple."}):
        off, on = fake_judge(AlignmentAnalysis=ANSWER), fake_judge(AlignmentAnalysis=ANSWER)
        prompt_alignment_scorer(off, mode=mode).run(run)
        prompt_alignment_scorer(on, mode=mode, include_conversation_history=True).run(run)
        assert prompts(on) == prompts(off) and "HISTORY" not in analyze_prompt(off)
    off = fake_judge(AlignmentAnalysis=ANSWER)
    prompt_alignment_scorer(off, mode=mode).run(agent_run(REMEMBERED))
    assert not any("Suggest a fruit" in str(p) for p in prompts(off))


# The prompt hashes of every mode before the option existed: off, nothing a judge sees changed.
BEFORE = {("pipeline", "user"): "f320161f2801", ("pipeline", "system"): "00beeefb7bcb",
          ("pipeline", "both"): "d16a2117d4a3", ("direct", "user"): "dcfced31c788",
          ("direct", "system"): "d182e50ceab9", ("direct", "both"): "9e17c93e7a45"}


@pytest.mark.parametrize(("mode", "evaluation_mode"), list(BEFORE))
def test_off_by_default_the_prompt_hash_is_the_one_of_before(mode: str, evaluation_mode: str,
                                                            fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    default = prompt_alignment_scorer(judge, mode=mode, evaluation_mode=evaluation_mode)
    for off in (False, 0):
        scorer = prompt_alignment_scorer(judge, mode=mode, evaluation_mode=evaluation_mode,
                                         include_conversation_history=off)
        assert scorer.key == default.key and scorer.shown_fields == default.shown_fields
    assert default.prompt_hash == BEFORE[(mode, evaluation_mode)]
    assert not any(f.startswith("raw.") for f in default.shown_fields)
    on = [prompt_alignment_scorer(judge, mode=mode, evaluation_mode=evaluation_mode, include_conversation_history=n)
          for n in (True, 2)]
    assert len({default.key, *(s.key for s in on)}) == 3  # on, and each length, keyed apart


def test_runs_differing_only_in_history_never_share_a_result(fake_judge: FakeJudgeFactory, tmp_path: Any) -> None:
    judge = fake_judge(AlignmentAnalysis=ANSWER)
    scorer = prompt_alignment_scorer(judge, include_conversation_history=True)
    first, other = agent_run(REMEMBERED), agent_run(REMEMBERED[:2])
    assert result_key(scorer.key, scorer.sample(first), scorer.shown_fields) != result_key(
        scorer.key, scorer.sample(other), scorer.shown_fields)
    score_runs([first], [scorer], store=ResultStore(tmp_path / "log"))
    asked = len(judge.calls)
    score_runs([first], [scorer], store=ResultStore(tmp_path / "log"))
    assert len(judge.calls) == asked, "the same run and history: resumed"
    score_runs([other], [scorer], store=ResultStore(tmp_path / "log"))
    assert len(judge.calls) == asked + 2, "another history: judged again (analyze and reason)"
    assert "user: Suggest a fruit" not in str(judge.calls[-2].prompts[0][-1]["content"])


@pytest.mark.parametrize("value", [-1, 2.5, "yes", None, [3], {"max_messages": 3}, {"maxMessages": -2}])
def test_a_bad_value_is_one_clear_error(value: Any, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="include_conversation_history must be true, false or a number") as error:
        build_scorer("prompt_alignment", fake_judge(), options={"include_conversation_history": value})
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("message", "role"), [
    ({"role": "assistant"}, "assistant"),
    ({"role": "signal", "type": "user", "content": {"metadata": {"signal": {"tagName": "system", "type": "x"}}}},
     "system"),
    ({"role": "signal", "type": "user", "content": {"metadata": {"signal": {"type": "tool"}}}}, "tool"),
    ({"role": "signal", "type": "user", "content": "text"}, "user"),
    ({"role": "signal"}, None),
    ({"role": 3}, None),
])
def test_a_messages_role_is_mastras_effective_role(message: dict[str, Any], role: str | None) -> None:
    """Mastra's getEffectiveMessageRole: a signal message reads as the role it carries (the run
    reader refuses a ``signal`` role today, so this is the history reader's own contract)."""
    assert message_role(message) == role
