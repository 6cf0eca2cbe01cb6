"""Dataset-scale evaluation, resume store and run_evals on the fake judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge import toxicity_scorer
from localjudge.evaluation.dataset_runs import Columns, evaluate
from localjudge.evaluation.store import ResultStore
from localjudge.evaluation.target_runs import run_evals
from tests.fakes import FakeJudgeFactory, toxicity_verdicts


def tox_answer(prompt) -> dict:
    """Deterministic fake: a response containing 'idiot' is toxic (high), others are not."""
    toxic = "idiot" in prompt[-1]["content"].split("<<<RESPONSE\n", 1)[1]
    return toxicity_verdicts(prompt, lambda statement: toxic)


ANSWERS = {"ToxicityVerdicts": tox_answer}  # with the default reason, "ok"
ROWS = [{"question": f"q{i}", "answer": ("you idiot " if i % 3 == 0 else "fine answer ") * (i + 1)} for i in range(10)]
COLS = Columns(input="question", output="answer", context=None)


def test_evaluate_adds_columns_in_input_order(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    ev = evaluate(ROWS, [toxicity_scorer(judge)], batch_size=4, columns=COLS)
    ds = ev.dataset
    assert len(ds) == 10 and ds["question"] == [f"q{i}" for i in range(10)]
    assert ds["toxicity_score"] == [1.0 if i % 3 == 0 else 0.0 for i in range(10)]
    assert set(ds.column_names) >= {"toxicity_reason", "toxicity_error", "toxicity_steps", "toxicity_prob_score"}
    assert json.loads(ds["toxicity_steps"][0])["analyze"]["verdicts"][0]["verdict"] == "yes"
    summary = ev.summary["toxicity"]
    assert (summary.scored, summary.unscored, summary.mean_score) == (10, 0, 0.4)
    # 10 rows in batches of 4 -> 3 batches, 2 steps each (analyze, reason)
    assert [len(c.prompts) for c in judge.calls] == [4, 4, 4, 4, 2, 2]


def test_batches_are_length_sorted_within_the_window(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(ANSWERS)
    evaluate(ROWS, [toxicity_scorer(judge)], batch_size=4, columns=COLS)
    first = [p[-1]["content"] for p in judge.calls[0].prompts]
    assert [len(t) for t in first] == sorted((len(t) for t in first), reverse=True)
    assert "q8" in first[0]  # the longest answer goes first


def test_unknown_column_and_empty_data(fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="unknown column 'answer'; the data has: question, output"):
        evaluate([{"question": "q", "output": "x"}], [toxicity_scorer(fake_judge(ANSWERS))], columns=COLS)
    with pytest.raises(ValueError, match="no rows"):
        evaluate([], [toxicity_scorer(fake_judge(ANSWERS))])


def test_input_column_is_optional(fake_judge: FakeJudgeFactory) -> None:
    ev = evaluate([{"output": "fine"}], [toxicity_scorer(fake_judge(ANSWERS))], columns=Columns(input=None))
    assert ev.dataset["toxicity_score"] == [0.0]


def test_bad_rows_are_recorded_not_fatal(fake_judge: FakeJudgeFactory) -> None:
    rows = [{"input": "q", "output": "fine"}, {"input": "q", "output": None}, {"input": "q", "output": "you idiot"}]
    ev = evaluate(rows, [toxicity_scorer(fake_judge(ANSWERS))])
    assert ev.dataset["toxicity_score"] == [0.0, None, 1.0]
    assert "output is missing" in ev.dataset["toxicity_error"][1]


def test_resume_skips_finished_rows_and_gives_the_same_file(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    full = evaluate(ROWS, [toxicity_scorer(fake_judge(ANSWERS))], batch_size=4, columns=COLS)
    store = ResultStore(tmp_path / "log")
    evaluate(ROWS[:6], [toxicity_scorer(fake_judge(ANSWERS))], batch_size=4, columns=COLS, store=store)
    judge = fake_judge(ANSWERS)
    resumed = evaluate(ROWS, [toxicity_scorer(judge)], batch_size=4, columns=COLS, store=ResultStore(tmp_path / "log"))
    assert sum(len(c.prompts) for c in judge.calls if c.schema_names[0] == "ToxicityVerdicts") == 4
    assert resumed.summary["toxicity"].resumed == 6
    assert resumed.dataset.to_list() == full.dataset.to_list()


def test_partial_last_line_is_dropped(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    store = ResultStore(tmp_path / "log")
    evaluate(ROWS[:3], [toxicity_scorer(fake_judge(ANSWERS))], columns=COLS, store=store)
    with store.path.open("a") as handle:
        handle.write('{"key": "abc", "result": {"run_id"')  # a crash mid-write
    again = ResultStore(tmp_path / "log")
    assert len(again.load()) == 3
    assert again.path.read_text().endswith("\n")


def test_corrupted_lines_are_rescored(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    store = ResultStore(tmp_path / "log")
    evaluate(ROWS[:3], [toxicity_scorer(fake_judge(ANSWERS))], columns=COLS, store=store)
    lines = store.path.read_text().splitlines()
    store.path.write_text("\n".join(["garbage", *lines[1:]]) + "\n")
    judge = fake_judge(ANSWERS)
    ev = evaluate(ROWS[:3], [toxicity_scorer(judge)], columns=COLS, store=ResultStore(tmp_path / "log"))
    assert ev.summary["toxicity"].resumed == 2 and ev.summary["toxicity"].scored == 3


def test_out_of_memory_halves_the_batch(fake_judge: FakeJudgeFactory) -> None:
    from localjudge.judge import JudgeOutOfMemory as OutOfMemoryError

    inner = fake_judge(ANSWERS)

    class Picky:
        identity = "picky"
        calls = 0

        def generate(self, prompts, schemas, *, max_new_tokens):
            if len(prompts) > 2:
                raise OutOfMemoryError("CUDA out of memory")
            return inner.generate(prompts, schemas, max_new_tokens=max_new_tokens)

    ev = evaluate(ROWS[:4], [toxicity_scorer(Picky())], batch_size=4, columns=COLS)
    assert ev.summary["toxicity"].oom_backoffs == 1 and ev.summary["toxicity"].scored == 4


def test_the_back_off_retries_after_the_failed_attempts_memory_is_freed(fake_judge: FakeJudgeFactory) -> None:
    """The failed attempt's frames hold its memory (on a GPU, the KV cache); an exception being
    handled keeps them alive, so the halves must run after the `except` block, not inside it.
    (The memory here is a plain buffer: the engine's rule is the same for any object a frame holds.)"""
    import weakref

    from localjudge.judge import JudgeOutOfMemory

    class Cache:  # what a failed attempt's frame holds (on a GPU, a KV cache's tensors)
        def __init__(self, size: int) -> None:
            self.buffer = bytearray(size)

    inner = fake_judge(ANSWERS)
    attempts: list[weakref.ref[Cache]] = []
    alive_at_retry: list[bool] = []

    class Hungry:
        identity = "hungry"

        def generate(self, prompts, schemas, *, max_new_tokens):
            alive_at_retry.extend(ref() is not None for ref in attempts)
            if len(prompts) > 2:
                cache = Cache(32 * 2**20)  # 32 MiB, held by this frame
                attempts.append(weakref.ref(cache))
                raise JudgeOutOfMemory(f"out of memory with {len(cache.buffer)} bytes held (simulated)")
            return inner.generate(prompts, schemas, max_new_tokens=max_new_tokens)

    ev = evaluate(ROWS[:4], [toxicity_scorer(Hungry())], batch_size=4, columns=COLS)
    assert ev.summary["toxicity"].oom_backoffs == 1 and ev.summary["toxicity"].scored == 4
    assert attempts and alive_at_retry and not any(alive_at_retry)


def test_judge_crash_costs_one_batch_and_is_not_stored(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    inner = fake_judge(ANSWERS)

    class Flaky:
        identity = "flaky"

        def generate(self, prompts, schemas, *, max_new_tokens):
            if any("q0" in p[-1]["content"] for p in prompts):
                raise RuntimeError("device lost\n  on rank 0")
            return inner.generate(prompts, schemas, max_new_tokens=max_new_tokens)

    store = ResultStore(tmp_path / "log")
    ev = evaluate(ROWS[:4], [toxicity_scorer(Flaky())], batch_size=1, columns=COLS, store=store)
    # one line, as a Ray actor's failed batch records it (localjudge.cluster.plan.score_batch)
    assert ev.dataset["toxicity_error"][0] == "judge failed: RuntimeError: device lost on rank 0"
    assert ev.summary["toxicity"].scored == 3 and len(store.load()) == 3  # the failed row retries on resume


def test_run_evals_records_target_failures(fake_judge: FakeJudgeFactory) -> None:
    seen = []

    def target(question: str) -> str:
        if question == "boom":
            raise RuntimeError("target exploded")
        return "you idiot" if question == "rude" else "a kind answer"

    result = run_evals(
        [{"input": "rude"}, {"input": "boom"}, {"input": "nice"}],
        [toxicity_scorer(fake_judge(ANSWERS))],
        target,
        on_item_complete=seen.append,
    )
    assert [i.target_result for i in seen] == ["you idiot", None, "a kind answer"]
    assert seen[1].target_error == "target failed: RuntimeError: target exploded"
    assert seen[1].scorer_results["toxicity-scorer"].score is None
    assert result.scores == {"toxicity-scorer": 0.5} and result.summary.target_errors == 1


def test_run_evals_accepts_an_object_target(fake_judge: FakeJudgeFactory) -> None:
    class Agent:
        def generate(self, value: str) -> list[dict]:
            return [{"role": "assistant", "content": f"echo {value}"}]

    result = run_evals([{"input": "hi"}], [toxicity_scorer(fake_judge(ANSWERS))], Agent())
    assert result.items[0].scorer_results["toxicity-scorer"].score == 0.0
