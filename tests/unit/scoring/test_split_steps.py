"""A judge step split into parts (`JudgeStep.split` / `join`, issue 46 item 3): one row's work asked
as several prompts of the same judge call, the answers joined in part order into the row's one
step result; a bad part, split or join costs that row only, naming the part; the scheduler merges
split steps with other scorers' as any other call."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from localjudge import Generation, create_scorer
from localjudge.judge import ChatPrompt
from localjudge.samples import Sample
from localjudge.scoring import JudgeStep, Results, Strict, exactly, join_lists, part_of, run_together, spans
from tests.fakes import FakeJudgeFactory

SIZE = 4  # items per prompt


class Mark(Strict):
    verdict: Literal["yes", "no"]


class Marks(Strict):
    verdicts: Annotated[list[Mark], Field(min_length=1, max_length=SIZE)]


def items_of(sample: Sample) -> list[str]:
    return sample.output.split()


def prompt(sample: Sample, results: Results) -> str:
    items = items_of(sample)
    start, end = part_of(results, len(items))
    return "\n".join(f"{i}. {w}" for i, w in enumerate(items[start:end], start + 1))


def schema(sample: Sample, results: Results) -> type[BaseModel]:
    start, end = part_of(results, len(items_of(sample)))
    return exactly(Mark, end - start, Marks)


def split(sample: Sample, results: Results) -> list[tuple[int, int]]:
    return spans(len(items_of(sample)), SIZE)


def attach(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    return {"verdicts": [{"item": w, **v} for w, v in zip(items_of(sample), parsed["verdicts"], strict=True)]}


STEP = JudgeStep(instructions="Mark each word.", prompt=prompt, schema=schema, finish=attach, split=split)


def share_of_yes(sample: Sample, results: Results) -> float:
    verdicts = results["analyze_step_result"]["verdicts"]
    return sum(v["verdict"] == "yes" for v in verdicts) / len(verdicts)


def scorer(judge: Any, step: JudgeStep = STEP) -> Any:
    return create_scorer("marks", judge=judge).analyze(step).generate_score(share_of_yes)


def marked(prompt: ChatPrompt) -> dict[str, Any]:
    """A verdict per numbered word: ``yes`` for words starting with ``t``."""
    words = re.findall(r"^\d+\. (\S+)$", str(prompt[-1]["content"]), re.M)
    return {"verdicts": [{"verdict": "yes" if w.startswith("t") else "no"} for w in words]}


WORDS = "alpha tango bravo charlie delta echo foxtrot golf tee hotel"  # 10 words: parts of 4, 4 and 2


def test_a_split_row_is_asked_in_parts_of_one_call_and_joined_in_order(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(Marks=marked)
    result = scorer(judge).run({"output": WORDS})
    (call,) = judge.calls  # every part in the one call of the step
    assert call.schema_names == ("Marks",) * 3
    assert [re.findall(r"^(\d+)\.", str(p[-1]["content"]), re.M) for p in call.prompts] == [
        ["1", "2", "3", "4"], ["5", "6", "7", "8"], ["9", "10"]]
    verdicts = result.analyze_step_result["verdicts"]
    assert [(v["item"], v["verdict"]) for v in verdicts] == [
        (w, "yes" if w.startswith("t") else "no") for w in WORDS.split()]  # each verdict on its own word
    assert result.score == 0.2  # 2 of 10, not of one part
    assert result.analyze_prompt is not None and result.analyze_prompt.startswith("[part 1 of 3]\n1. alpha")
    assert "[part 3 of 3]\n9. tee\n10. hotel" in result.analyze_prompt


def test_a_row_within_one_part_is_asked_as_before(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(Marks=marked)
    result = scorer(judge).run({"output": "tango one"})
    assert len(judge.calls[0].prompts) == 1 and result.analyze_prompt == "1. tango\n2. one"
    assert result.score == 0.5


def test_label_probabilities_and_tokens_are_joined_in_part_order(fake_judge: FakeJudgeFactory) -> None:
    def answer(prompt: ChatPrompt) -> Generation:
        n = len(marked(prompt)["verdicts"])
        first = int(re.findall(r"^(\d+)\.", str(prompt[-1]["content"]), re.M)[0])
        return Generation(f'{{"verdicts":{[{"verdict": "no"}] * n}}}'.replace("'", '"'), new_tokens=n,
                          label_probs=tuple({"yes": first * 10 + k, "no": 0} for k in range(n)))

    seen: list[Any] = []

    def prob(results: Results, label_probs: Any) -> float:
        seen.extend(p["yes"] for p in label_probs["analyze"])
        return 0.0

    step_scorer = create_scorer("marks", judge=fake_judge(Marks=answer), prob_score=prob)
    result = step_scorer.analyze(STEP).generate_score(share_of_yes).run({"output": WORDS})
    assert seen == [10, 11, 12, 13, 50, 51, 52, 53, 90, 91]
    assert result.new_tokens == 10


def test_a_bad_part_leaves_the_row_unscored_naming_the_part(fake_judge: FakeJudgeFactory) -> None:
    def answer(prompt: ChatPrompt) -> Any:
        return "not json" if "\n9. " in "\n" + str(prompt[-1]["content"]) else marked(prompt)

    judge = fake_judge(Marks=answer)
    bad, good = scorer(judge).run_batch([{"output": WORDS}, {"output": "tango one"}])
    assert bad.score is None and bad.error_kind == "invalid_output"
    assert (bad.error or "").startswith("analyze step: part 3 of 3: invalid JSON")
    assert bad.raw_output == "not json" and good.score == 0.5


def test_join_is_the_steps_own_and_its_error_costs_the_row(fake_judge: FakeJudgeFactory) -> None:
    def reversed_parts(sample: Sample, results: Results, answers: list[dict[str, Any]]) -> dict[str, Any]:
        return join_lists(sample, results, answers[::-1])

    result = scorer(fake_judge(Marks=marked), replace(STEP, join=reversed_parts)).run(
        {"output": WORDS})
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]][:2] == ["yes", "no"]  # tee, hotel first

    def failing(sample: Sample, results: Results, answers: list[dict[str, Any]]) -> dict[str, Any]:
        raise ValueError("cannot join")

    result = scorer(fake_judge(Marks=marked), replace(STEP, join=failing)).run(
        {"output": WORDS})
    assert result.score is None and result.error == "analyze step: ValueError: cannot join"


def test_join_lists_refuses_parts_that_differ_outside_their_lists() -> None:
    sample = Sample("r", "", "")
    assert join_lists(sample, {}, [{"a": [1], "n": 2}, {"a": [3], "n": 2}]) == {"a": [1, 3], "n": 2}
    try:
        join_lists(sample, {}, [{"a": [1], "n": 2}, {"a": [3], "n": 4}])
    except ValueError as error:
        assert "'n'" in str(error)
    else:
        raise AssertionError("parts differing in 'n' were joined")


def test_a_split_that_gives_no_parts_costs_the_row(fake_judge: FakeJudgeFactory) -> None:
    step = replace(STEP, split=lambda sample, results: [])
    result = scorer(fake_judge(Marks=marked), step).run({"output": WORDS})
    assert result.score is None and result.error_kind == "step_error" and "non-empty list of parts" in (
        result.error or "")


def test_split_steps_merge_with_other_scorers_calls(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(Marks=marked)
    rows = [{"output": WORDS}, {"output": "tango one"}]
    outcomes = run_together([scorer(judge).batch_steps(rows), scorer(judge).batch_steps(rows[::-1])])
    (call,) = judge.calls  # both scorers' analyze steps, 3 + 1 prompts each, in one call
    assert len(call.prompts) == 8
    assert [[r.score for r in outcome] for outcome in outcomes] == [[0.2, 0.5], [0.5, 0.2]]  # type: ignore[union-attr]


def test_spans() -> None:
    assert spans(25, 20) == [(0, 20), (20, 25)]
    assert spans(20, 20) == [(0, 20)]
    assert spans(0, 20) == [(0, 0)]


def test_a_run_needing_more_parts_than_max_parts_is_unscored_before_any_call(fake_judge: FakeJudgeFactory) -> None:
    """Parts lift a schema's bound, not the judge's window: a run over the step's `max_parts` is
    refused in one line, the run beside it scored; at `max_parts` it is asked."""
    judge = fake_judge(Marks=marked)
    capped = scorer(judge, replace(STEP, max_parts=2))
    long_run, short_run = {"output": " ".join(["tango"] * 9)}, {"output": WORDS[:30]}  # 9 words: 3 parts
    refused, scored = capped.run_batch([long_run, short_run], on_invalid="record")
    assert refused.score is None and refused.error_kind == "unscorable"
    assert "needs 3 prompts" in (refused.error or "") and "max_parts of 2" in (refused.error or "")
    assert scored.scored and [len(c.prompts) for c in judge.calls] == [2]  # only the short run's parts asked
    assert scorer(judge, replace(STEP, max_parts=3)).run(long_run).score == 1.0
