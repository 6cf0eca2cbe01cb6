"""One schedule for every scorer of a run (issue 47): per batch of rows, each round of steps of every
scorer in one judge call; the same results, files and logs as one scorer after another."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from localjudge import evaluate, faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.evaluation import ResultStore, write_table
from localjudge.judge import ChatPrompt, FakeJudge, Generation, JudgeOutOfMemory
from localjudge.scoring import Ask, Reason, Scorer, ask_merged
from tests.fakes import FakeJudgeFactory, toxicity_statements

ROWS = [{"run_id": f"r{i}", "input": f"question {i}", "output": f"Answer {i}. " + "More words. " * i,
         "context": f"Fact {i}."} for i in range(5)]
ROWS[3] = {**ROWS[3], "context": ""}  # faithfulness cannot read it (invalid_run); the others can
ROWS[4] = {**ROWS[4], "output": ""}  # decided without the judge by some scorers


def mark(prompt: ChatPrompt) -> int:
    """A number each prompt gives differently, so that an answer sent to the wrong row shows."""
    return int(hashlib.sha256(json.dumps(prompt).encode()).hexdigest()[:6], 16)


ANSWERS: dict[str, Any] = {  # every answer a function of its prompt
    "Claims": lambda p: {"claims": [f"Claim {mark(p) % 97}.", f"Claim {mark(p) % 89}."][: 1 + mark(p) % 2]},
    "Reason": lambda p: {"reason": f"because {mark(p) % 1000}"},
    "ToxicityVerdicts": lambda p: {"verdicts": [
        {"verdict": ("yes", "no")[(mark(p) >> k) % 2], "severity": ("high", "none")[(mark(p) >> k) % 2],
         "reason": "r"} for k in range(len(toxicity_statements(p)))]},
}


def scorers(judge: Any) -> list[Scorer]:
    return [hallucination_scorer(judge), faithfulness_scorer(judge), toxicity_scorer(judge)]


def judged(judge: FakeJudge) -> FakeJudge:
    """`judge` with prompt-dependent verdict lists for hallucination and faithfulness: one verdict
    per claim asked about, each from the prompt."""
    def verdicts(prompt: ChatPrompt) -> dict[str, Any]:
        claims = str(prompt[-1]["content"]).count("Claim ")
        return {"verdicts": [{"verdict": ("yes", "no")[(mark(prompt) >> k) % 2], "reason": f"r{k}"}
                             for k in range(max(claims, 1))]}
    script = dict(judge.script)
    for family in ("HallucinationVerdicts", "FaithfulnessVerdicts"):
        words = ("supported", "unsupported") if family.startswith("Hall") else ("yes", "no")
        script[family] = (lambda w: lambda p: {"verdicts": [{**v, "verdict": w[v["verdict"] == "no"]}
                                                            for v in verdicts(p)["verdicts"]]})(words)
    return FakeJudge(script, identity=judge.identity)


def run(judge: FakeJudge, schedule: str, tmp_path: Path, name: str, batch_size: int = 8,
        store: ResultStore | None = None) -> tuple[bytes, Any]:
    result = evaluate(ROWS, scorers(judge), batch_size=batch_size, schedule=schedule, store=store)  # type: ignore[arg-type]
    write_table(result.dataset, tmp_path / f"{name}.jsonl")
    return (tmp_path / f"{name}.jsonl").read_bytes(), result


def test_a_multi_scorer_run_makes_one_judge_call_per_round_of_steps(fake_judge: FakeJudgeFactory,
                                                                    tmp_path: Path) -> None:
    judge = judged(fake_judge(ANSWERS))
    run(judge, "together", tmp_path, "together")
    # hallucination and faithfulness: claims, verdicts, reason; toxicity: verdicts, reason
    assert [sorted(set(call.schema_names)) for call in judge.calls] == [
        ["Claims", "ToxicityVerdicts"], ["FaithfulnessVerdicts", "HallucinationVerdicts", "Reason"], ["Reason"]]
    old = judged(fake_judge(ANSWERS))
    run(old, "by-scorer", tmp_path, "by-scorer")
    assert len(old.calls) == 8
    small = judged(fake_judge(ANSWERS))
    run(small, "together", tmp_path, "small", batch_size=2)  # batches of rows [3, 2], [1, 0], [4] (longest first)
    assert [call.schema_names for call in small.calls] == [
        ("Claims", "Claims", "ToxicityVerdicts", "ToxicityVerdicts"),  # one-sentence rows need no claims step
        ("HallucinationVerdicts", "FaithfulnessVerdicts", "Reason", "Reason"), ("Reason", "Reason"),
        ("HallucinationVerdicts",) * 2 + ("FaithfulnessVerdicts",) * 2 + ("ToxicityVerdicts",) * 2, ("Reason",) * 6]


def test_together_gives_the_files_and_logs_of_one_scorer_after_another(fake_judge: FakeJudgeFactory,
                                                                       tmp_path: Path) -> None:
    by_scorer, old = run(judged(fake_judge(ANSWERS)), "by-scorer", tmp_path, "old", 2,
                         ResultStore(tmp_path / "old-log"))
    together, new = run(judged(fake_judge(ANSWERS)), "together", tmp_path, "new", 2, ResultStore(tmp_path / "new-log"))
    assert together == by_scorer
    assert new.results == old.results and new.samples == old.samples
    assert ResultStore(tmp_path / "new-log").load() == ResultStore(tmp_path / "old-log").load()
    assert {n: (s.scored, s.unscored, s.resumed, s.new_tokens) for n, s in new.summary.items()} == \
        {n: (s.scored, s.unscored, s.resumed, s.new_tokens) for n, s in old.summary.items()}
    # the case is not trivial: scores of both kinds, and an unreadable row
    assert {r.score for r in new.results["hallucination"] if r.scored} == {0.0, 1.0}
    assert new.results["faithfulness"][3].error_kind == "invalid_run"


def test_a_log_written_by_the_old_order_resumes_with_nothing_judged(fake_judge: FakeJudgeFactory,
                                                                    tmp_path: Path) -> None:
    written, _ = run(judged(fake_judge(ANSWERS)), "by-scorer", tmp_path, "old", 2, ResultStore(tmp_path / "log"))
    judge = judged(fake_judge(ANSWERS))
    again, result = run(judge, "together", tmp_path, "again", 2, ResultStore(tmp_path / "log"))
    assert judge.calls == [] and again == written
    assert [s.resumed for s in result.summary.values()] == [4, 4, 5]  # one row unreadable without context


def test_a_failed_merged_call_costs_only_its_rows(fake_judge: FakeJudgeFactory, tmp_path: Path) -> None:
    """The reasons of hallucination and faithfulness for row 2 fail together; toxicity's reasons
    for row 2 came back a round before, and the other batches are untouched."""
    inner = judged(fake_judge(ANSWERS))

    class Flaky:
        identity = "flaky"

        def generate(self, prompts: list[ChatPrompt], schemas: list[Any], *, max_new_tokens: int) -> list[Generation]:
            names = {s.__name__ for s in schemas}
            if names == {"Reason"} and any("question 2" in str(p[-1]["content"]) for p in prompts):
                raise RuntimeError("device lost")
            return inner.generate(prompts, schemas, max_new_tokens=max_new_tokens)

    store = ResultStore(tmp_path / "log")
    result = evaluate(ROWS, scorers(Flaky()), batch_size=2, store=store)
    failed = {(name, r.run_id) for name, results in result.results.items() for r in results
              if r.error_kind == "judge_failed"}
    assert failed == {("hallucination", "2"), ("faithfulness", "2")}
    assert all(r.scored for r in result.results["toxicity"])
    assert result.dataset["hallucination_error"][2] == "judge failed: RuntimeError: device lost"
    assert len(store.load()) == 3 * 5 - 2 - 2  # the unreadable rows and the failed ones are judged next time


def test_out_of_memory_halves_the_merged_call(fake_judge: FakeJudgeFactory, tmp_path: Path) -> None:
    expected, _ = run(judged(fake_judge(ANSWERS)), "by-scorer", tmp_path, "expected", 4)
    inner = judged(fake_judge(ANSWERS))
    sizes: list[int] = []

    class Small:
        identity = "fake-judge"  # the same keys and files as the fake judge's

        def generate(self, prompts: list[ChatPrompt], schemas: list[Any], *, max_new_tokens: int) -> list[Generation]:
            sizes.append(len(prompts))
            if len(prompts) > 4:
                raise JudgeOutOfMemory("out of memory (simulated)")
            return inner.generate(prompts, schemas, max_new_tokens=max_new_tokens)

    result = evaluate(ROWS, scorers(Small()), batch_size=4, schedule="together")
    write_table(result.dataset, tmp_path / "halved.jsonl")
    assert (tmp_path / "halved.jsonl").read_bytes() == expected
    assert sizes[0] > 4 and max(sizes) == sizes[0]  # the merged call was too large, then halved
    assert all(s.oom_backoffs >= 1 for s in result.summary.values())


def test_a_merged_call_asks_a_row_again_at_its_own_budget() -> None:
    """A row's answer may depend on its budget (cut off, too long for the window): where it came
    close to its own, it is asked again at its own, so that it is what its scorer's call gives."""
    calls: list[tuple[int, list[str]]] = []

    class Budgeted:  # a prompt "n:K" needs K tokens; "long" does not fit with a budget over 20
        identity = "budgeted"

        def generate(self, prompts: list[ChatPrompt], schemas: list[Any], *, max_new_tokens: int) -> list[Generation]:
            texts = [str(p[-1]["content"]) for p in prompts]
            calls.append((max_new_tokens, texts))
            return [(Generation("", error=f"too long at {max_new_tokens}", error_kind="too_long")
                     if max_new_tokens > 20 else Generation(f"long@{max_new_tokens}", new_tokens=2))
                    if text == "long" else Generation(f"{text}@{max_new_tokens}", new_tokens=min(int(text[2:]) + 1,
                                                                                                 max_new_tokens),
                                                      finished=int(text[2:]) < max_new_tokens) for text in texts]

    def ask(judge: Budgeted, budget: int, *texts: str) -> Ask:
        return Ask(judge, [[{"role": "user", "content": t}] for t in texts], [Reason] * len(texts), budget)

    judge = Budgeted()
    small, large = ask(judge, 10, "n:3", "n:9", "n:30", "long"), ask(judge, 50, "n:40")
    parts = ask_merged([small, large])
    assert [g.text or g.error for g in parts[0]] == ["n:3@50", "n:9@10", "n:30@10", "long@10"]
    assert [g.text for g in parts[1]] == ["n:40@50"]
    assert calls == [(50, ["n:3", "n:9", "n:30", "long", "n:40"]), (10, ["n:9", "n:30", "long"])]


@pytest.mark.parametrize("schedule", ["sideways"])
def test_an_unknown_schedule_is_one_error(schedule: str, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="schedule must be one of together, by-scorer"):
        evaluate(ROWS, scorers(fake_judge(ANSWERS)), schedule=schedule)  # type: ignore[arg-type]


def test_a_ray_batch_is_scored_together_with_the_results_of_evaluate(fake_judge: FakeJudgeFactory) -> None:
    from localjudge.cluster.plan import score_batch

    expected = evaluate(ROWS, scorers(judged(fake_judge(ANSWERS))), batch_size=8).results
    judge = judged(fake_judge(ANSWERS))
    outcomes = score_batch(scorers(judge), ROWS, done=())
    assert len(judge.calls) == 3  # claims (with toxicity's verdicts), verdicts (with its reason), reasons
    assert {name: [outcome[name][1] for outcome in outcomes] for name in expected} == \
        {name: [{**r.to_dict(), "run_id": ROWS[i]["run_id"]} for i, r in enumerate(results)]
         for name, results in expected.items()}
