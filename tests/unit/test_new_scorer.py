"""A scorer written outside the package runs everywhere with one registry line; results say why a
row is unscored as a value (`error_kind`); resume records carry their format.

The scorer here ("brevity": is the output short and to the point?) is defined in this module
and registered with `register_scorer`: no other file knows it, yet `evaluate`, `run_bench`,
`localjudge score` and `localjudge bench` all run it, and the bench derives its label meaning,
direction and baselines from the scorer itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

from localjudge import Generation, JudgeStep, create_scorer, evaluate, run_evals
from localjudge.bench.data import custom_benchmark
from localjudge.bench.run import run_bench
from localjudge.cli import model_flags
from localjudge.cli.main import main
from localjudge.evaluation.store import RECORD_FORMAT, ResultStore
from localjudge.judge import TOO_LONG
from localjudge.result import ERROR_KINDS, TRANSIENT_ERRORS
from localjudge.scorers import SCORERS, register_scorer
from localjudge.scoring.schemas import ReasonText, Strict
from tests.fakes import FakeJudgeFactory, make_fake_judge


class Brevity(Strict):
    verdict: Literal["short", "long"]
    reason: ReasonText


def brevity_scorer(judge: Any, *, scale: float = 1.0, get_context: Any = None) -> Any:
    step = JudgeStep(instructions="Is the answer short and to the point?", schema=Brevity,
                     prompt=lambda run, results: f"<<<ANSWER\n{run.output}\nANSWER>>>\n"
                                                 f"<<<NOTES\n{run.context}\nNOTES>>>")
    return (create_scorer("brevity", judge=judge, scale=scale, positive="short", higher_is_better=True,
                          get_context=get_context)
            .analyze(step)
            .generate_score(lambda run, results: float(results["analyze_step_result"]["verdict"] == "short")))


def brevity_answer(prompt: Any) -> dict[str, str]:
    """Says "short" exactly when the answer has at most five words: a perfect judge on ROWS."""
    words = prompt[-1]["content"].split("<<<ANSWER\n", 1)[1].split("\nANSWER>>>", 1)[0].split()
    return {"verdict": "short" if len(words) <= 5 else "long", "reason": "Counted."}


BREVITY = {"Brevity": brevity_answer}


ROWS = [{"id": str(i), "input": "Q?", "output": " ".join(["word"] * n), "context": "notes", "label": int(n <= 5)}
        for i, n in enumerate([1, 3, 5, 8, 12, 2, 9, 20])]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(SCORERS))  # undone after the test
    from localjudge.scorers import registry

    registry.register_scorer("brevity", brevity_scorer)


def write_rows(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_the_scorer_knows_its_facts(fake_judge: FakeJudgeFactory) -> None:
    scorer = brevity_scorer(fake_judge(BREVITY, identity="brevity-fake"))
    assert (scorer.positive, scorer.higher_is_better) == ("short", True)
    assert scorer.shown_fields == {"output", "context"}  # read off its prompts, not declared


def test_registering_a_taken_name_is_an_error(registered: None) -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_scorer("brevity", brevity_scorer)


def test_a_new_scorer_runs_through_evaluate_and_bench(registered: None, tmp_path: Path,
                                                      fake_judge: FakeJudgeFactory) -> None:
    calls: list[str] = []

    def counting(judge: Any, scale: float = 1.0) -> Any:
        return brevity_scorer(judge, scale=scale, get_context=lambda run: calls.append(run["run_id"]) or "notes")

    ev = evaluate(ROWS, [counting(fake_judge(BREVITY, identity="brevity-fake"))])
    assert ev.dataset["brevity_score"] == [float(r["label"]) for r in ROWS]
    assert sorted(calls) == sorted(str(i) for i in range(len(ROWS)))  # once per row
    calls.clear()
    from localjudge.scorers import registry

    registry.SCORERS["brevity"] = counting
    bench = custom_benchmark(write_rows(tmp_path / "brevity.jsonl"), scorer="brevity")
    (result,) = run_bench(fake_judge(BREVITY, identity="brevity-fake"), [bench], n_boot=50).results
    assert len(calls) == len(ROWS)  # the bench reads the evaluation's samples: get_context once per row
    assert result.positive_means == "short"
    judge_row = next(row for row in result.table if row.name == "judge score")
    assert judge_row.auc.value == 1.0
    baselines = {row.name for row in result.table if row.kind == "baseline"}
    assert baselines == {"majority class", "word overlap", "output length"}  # overlap as is: higher is better


def test_a_new_scorer_runs_through_the_cli(registered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], fake_judge: FakeJudgeFactory) -> None:
    monkeypatch.setattr(model_flags, "build_judge",
                        lambda args, device=None: fake_judge(BREVITY, identity="brevity-fake"))
    data = write_rows(tmp_path / "rows.jsonl")
    out = tmp_path / "scored.jsonl"
    assert main(["--quiet", "score", "--model", "unused", "--scorer", "brevity", "--data", str(data),
                 "--id-col", "id", "--out", str(out)]) == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["brevity_score"] for r in scored] == [float(r["label"]) for r in ROWS]
    assert main(["--quiet", "bench", "--model", "unused", "--scorer", "brevity", "--data", str(data),
                 "--positive", "1", "--out-dir", str(tmp_path / "bench"), "--bootstrap", "20", "--no-html"]) == 0
    report = json.loads((tmp_path / "bench" / "report.json").read_text())
    assert report["results"][0]["positive_means"] == "short"
    assert "| rows | brevity |" in capsys.readouterr().out


class Words(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


def kind_scorer(judge: Any, fail: str = "") -> Any:
    def prompt(run: Any, results: Any) -> str:
        if fail == "prompt":
            raise KeyError("no such field")
        return f"<<<OUTPUT\n{run.output}\nOUTPUT>>>"

    def finish(run: Any, results: Any, parsed: dict[str, Any]) -> dict[str, Any]:
        from localjudge import UnscorableError

        if fail == "finish":
            raise UnscorableError("the verdict does not fit")
        return parsed

    step = JudgeStep(instructions="Judge.", prompt=prompt, schema=Words, finish=finish)
    return (create_scorer("kinds", judge=judge, needs_context=fail == "context")
            .analyze(step)
            .generate_score(lambda run, results: 2.0 if fail == "score" else 1.0))


class Crashing:
    identity = "crashing"

    def generate(self, prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        raise RuntimeError("device lost")


GOOD = '{"verdict":"yes","reason":"Fine."}'
KINDS = [
    pytest.param(kind_scorer(make_fake_judge(Words=GOOD), "context"), "invalid_run", id="invalid_run"),
    pytest.param(kind_scorer(make_fake_judge(Words=Generation("", error=f"prompt {TOO_LONG}", error_kind="too_long"))),
                 "too_long", id="too_long"),
    pytest.param(kind_scorer(Crashing()), "judge_failed", id="judge_failed"),
    pytest.param(kind_scorer(make_fake_judge(Words='{"verdict":"maybe"')), "invalid_output", id="invalid_output"),
    pytest.param(kind_scorer(make_fake_judge(Words=GOOD), "finish"), "unscorable", id="unscorable"),
    pytest.param(kind_scorer(make_fake_judge(Words=GOOD), "prompt"), "step_error", id="step_error-prompt"),
    pytest.param(kind_scorer(make_fake_judge(Words=GOOD), "score"), "step_error", id="step_error-score"),
]


@pytest.mark.parametrize(("scorer", "kind"), KINDS)
def test_every_unscored_result_says_its_kind(scorer: Any, kind: str, tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "log")
    ev = evaluate([{"input": "Q?", "output": "An answer."}], [scorer], store=store)
    (result,) = ev.results["kinds"]
    assert (result.score, result.error_kind) == (None, kind) and result.error
    assert ev.dataset["kinds_error_kind"] == [kind]
    # transient kinds are not kept for resuming; an invalid run never reaches the judge or the log
    assert bool(store.load()) == (kind not in TRANSIENT_ERRORS | {"invalid_run"})


def test_a_failed_target_is_its_own_kind(fake_judge: FakeJudgeFactory) -> None:
    def target(item: Any) -> str:
        raise RuntimeError("target exploded")

    outcome = run_evals(data=[{"input": "Q?"}], scorers=[kind_scorer(fake_judge(Words=GOOD))], target=target)
    assert outcome.items[0].scorer_results["kinds-scorer"].error_kind == "target_failed"
    assert set(ERROR_KINDS) >= {p.values[1] for p in KINDS} | {"target_failed"}


def test_records_of_another_format_are_not_resumed(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                   fake_judge: FakeJudgeFactory) -> None:
    scorer = kind_scorer(fake_judge(Words=GOOD))
    store = ResultStore(tmp_path / "log")
    evaluate([{"input": "Q?", "output": "An answer."}], [scorer], store=store)
    (line,) = store.path.read_text().splitlines()
    assert json.loads(line)["format"] == RECORD_FORMAT
    store.path.write_text(json.dumps({**json.loads(line), "format": RECORD_FORMAT + 1}) + "\n")
    assert ResultStore(tmp_path / "log").load() == {}
    assert "another record format" in caplog.text
