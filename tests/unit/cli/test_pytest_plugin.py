"""The pytest plugin (`localjudge.cli.pytest_plugin`): the `judge` fixture and the score assertions.

A failed assertion shows the score, the bound, the claims, each verdict with its reason, the
reason and the judge's identity; an unscored run always fails; `scored` is one judge call per
step for all its runs; the `judge` fixture loads once per run from the flag or the environment
variable, fails clearly without either, and is replaced by a conftest fixture; the entry point
makes the plugin active with no `-p`; the example in `examples/` runs on a FakeJudge by the two
commands docs/pytest-plugin.md gives, word for word.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from localjudge import FakeJudge, create_scorer, hallucination_scorer, toxicity_scorer
from localjudge.cli.pytest_plugin import assert_result, assert_score, assert_scores, scored
from tests.conftest import EXAMPLES
from tests.fakes import stand_in_engine

pytest_plugins = ["pytester"]

EXAMPLE = EXAMPLES / "test_with_localjudge.py"
CONTEXT = ["Paris is the capital of France."]
PARIS = {"input": "What is the capital of France?", "output": "The capital is Paris, of course.", "run_id": "paris"}
LYON = {"input": "What is the capital of France?", "output": "The capital is Lyon, of course.", "run_id": "lyon"}


def scripted(identity: str = "scripted-judge") -> FakeJudge:
    """One claim per run (its output); hallucinated ("yes") when the claim says Lyon."""
    def claims(prompt: Any) -> dict[str, Any]:
        return {"claims": [f"{'Lyon' if 'Lyon' in prompt[-1]['content'] else 'Paris'} is the capital of France."]}

    def verdicts(prompt: Any) -> dict[str, Any]:
        wrong = "1. Lyon" in prompt[-1]["content"]
        return {"verdicts": [{"verdict": "unsupported" if wrong else "supported",
                              "reason": "The context says Paris." if wrong else "The context says so."}]}

    return FakeJudge({"Claims": claims, "HallucinationVerdicts": verdicts,
                      "Reason": lambda prompt: {"reason": "Checked against the context."}}, identity=identity)


def test_a_passing_assertion_returns_the_result() -> None:
    result = assert_score(hallucination_scorer(scripted(), context=CONTEXT), PARIS, below=0.5)
    assert (result.run_id, result.score) == ("paris", 0.0)
    assert assert_score(hallucination_scorer(scripted(), context=CONTEXT), LYON, above=0.5).score == 1.0


def test_a_failed_assertion_shows_score_bound_claims_verdicts_reason_and_judge() -> None:
    with pytest.raises(AssertionError) as failed:
        assert_score(hallucination_scorer(scripted(), context=CONTEXT), LYON, below=0.5)
    assert str(failed.value).splitlines() == [
        "hallucination score 1 is not below 0.5",
        "  scorer: hallucination (0 to 1; high = hallucinated)",
        "  judge: scripted-judge",
        "  run: lyon",
        "  claims:",
        "    1. Lyon is the capital of France.",
        "  verdicts:",
        "    1. yes: Lyon is the capital of France. (The context says Paris.)",
        "  reason: Checked against the context.",
    ]
    with pytest.raises(AssertionError, match=r"^hallucination score 0 is not above 0\.5\n"):
        assert_score(hallucination_scorer(scripted(), context=CONTEXT), PARIS, above=0.5)


def test_a_custom_score_taken_as_returned_is_not_described_as_bounded_by_the_scale() -> None:
    scorer = create_scorer("grade", score_returns="score").generate_score(lambda run, results: 87.5)
    with pytest.raises(AssertionError) as failed:
        assert_score(scorer, PARIS, below=50)
    assert str(failed.value).splitlines()[:2] == ["grade score 87.5 is not below 50",
                                                  "  scorer: grade (as returned; high = positive)"]


@pytest.mark.parametrize(("run", "bounds", "failure"), [
    (PARIS, {"below": 0.0}, "score 0 is not below 0"), (LYON, {"above": 1.0}, "score 1 is not above 1")])
def test_the_bounds_are_strict(run: dict[str, str], bounds: dict[str, float], failure: str) -> None:
    with pytest.raises(AssertionError, match=f"^hallucination {failure}\n"):
        assert_score(hallucination_scorer(scripted(), context=CONTEXT), run, **bounds)


def test_a_toxicity_verdict_shows_its_severity() -> None:
    judge = FakeJudge({"ToxicityVerdicts": [{"verdicts": [{"verdict": "yes",
                                                           "severity": "high", "reason": "An insult."}]}],
                       "Reason": [{"reason": "Insulting."}]})
    with pytest.raises(AssertionError) as failed:
        assert_score(toxicity_scorer(judge), {"input": "q", "output": "You idiot."}, below=0.5)
    assert "    1. yes [high]: You idiot. (An insult.)" in str(failed.value).splitlines()


@pytest.mark.parametrize("bounds", [{}, {"below": 0.5}, {"above": 0.5}])
def test_an_unscored_run_always_fails_with_its_error(bounds: dict[str, float]) -> None:
    judge = FakeJudge({"Claims": ['{"claims": ["cut off']})  # malformed JSON: the run is unscored
    with pytest.raises(AssertionError) as failed:
        assert_score(hallucination_scorer(judge, context=CONTEXT), LYON, **bounds)
    lines = str(failed.value).splitlines()
    assert lines[0].startswith("hallucination: unscored: invalid_output: preprocess step: invalid JSON")
    assert '  raw output: {"claims": ["cut off' in lines
    with pytest.raises(AssertionError, match=r"^hallucination: unscored: invalid_run: invalid run: .*output"):
        assert_score(hallucination_scorer(judge, context=CONTEXT), {"input": "no output"}, **bounds)
    assert len(judge.calls) == 1  # the first run's preprocess call; the invalid run reaches no judge


def test_scored_is_one_judge_call_per_step_for_all_runs() -> None:
    judge = scripted()
    runs = [LYON, PARIS] * 3
    results = scored(hallucination_scorer(judge, context=CONTEXT), runs)
    assert [r.score for r in results] == [1.0, 0.0] * 3
    assert [(c.schema_names[0], len(c.prompts)) for c in judge.calls] == [
        ("Claims", 6), ("HallucinationVerdicts", 6), ("Reason", 6)]
    assert [assert_result(hallucination_scorer(judge, context=CONTEXT), r, below=0.5) for r in results[1::2]]


def test_assert_scores_reports_every_failing_run_of_its_one_batch() -> None:
    judge = scripted()
    runs = [PARIS, LYON, PARIS, {**LYON, "run_id": "lyon-2"}]
    with pytest.raises(AssertionError) as failed:
        assert_scores(hallucination_scorer(judge, context=CONTEXT), runs, below=0.5)
    text = str(failed.value)
    assert text.startswith("2 of 4 runs failed\nrun 1: hallucination score 1 is not below 0.5\n")
    assert "\nrun 3: hallucination score 1 is not below 0.5\n" in text and "  run: lyon-2" in text
    assert "  run: paris" not in text and len(judge.calls) == 3
    assert [r.score for r in assert_scores(hallucination_scorer(judge, context=CONTEXT), runs[::2], below=0.5)] \
        == [0.0, 0.0]


def test_bounds_no_score_can_meet_are_refused_before_any_judge_call() -> None:
    judge = scripted()
    with pytest.raises(ValueError, match="no score is above 0.5 and below 0.5"):
        assert_score(hallucination_scorer(judge, context=CONTEXT), PARIS, below=0.5, above=0.5)
    assert judge.calls == []


def test_importing_the_plugin_loads_no_model_library() -> None:
    code = ("import sys, localjudge.cli.pytest_plugin; "
            "print(sorted(m for m in ('torch', 'transformers', 'outlines', 'datasets') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# A user's project: its conftest replaces the plugin's `judge` with a FakeJudge.
FAKE_CONFTEST = '''
import pytest
from localjudge import FakeJudge

@pytest.fixture(scope="session")
def judge():
    def verdicts(prompt):
        wrong = "1. Lyon" in prompt[-1]["content"]
        return {"verdicts": [{"verdict": "unsupported" if wrong else "supported", "reason": "The context says Paris."}]}

    return FakeJudge({"Claims": lambda prompt: {"claims": ["Lyon is the capital of France."
                                                           if "Lyon" in prompt[-1]["content"] else "Paris is."]},
                      "HallucinationVerdicts": verdicts, "Reason": lambda prompt: {"reason": "Checked."}},
                     identity="user-fake-judge")
'''

USER_TESTS = '''
from localjudge import hallucination_scorer
from localjudge.cli.pytest_plugin import assert_score

def test_paris(judge):
    assert_score(hallucination_scorer(judge, context=["Paris is the capital of France."]),
                 {"input": "Capital of France?", "output": "The capital is Paris, of course."}, below=0.5)

def test_lyon(judge):
    assert_score(hallucination_scorer(judge, context=["Paris is the capital of France."]),
                 {"input": "Capital of France?", "output": "The capital is Lyon, of course.", "run_id": "lyon"},
                 below=0.5)
'''


def test_a_users_failing_test_shows_why_in_pytests_report(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest()  # in process; the entry point has loaded the plugin
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*def test_lyon(judge):*",
        "E*AssertionError: hallucination score 1 is not below 0.5",
        "E*judge: user-fake-judge",
        "E*run: lyon",
        "E*claims:",
        "E*1. Lyon is the capital of France.",
        "E*verdicts:",
        "E*1. yes: Lyon is the capital of France. (The context says Paris.)",
        "E*reason: Checked.",
    ])
    assert "pytest_plugin.py" not in result.stdout.str()  # the helper's own frames are hidden


def test_the_judge_fixture_without_a_model_fails_clearly(pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCALJUDGE_MODEL", raising=False)
    pytester.makepyfile("def test_one(judge):\n    pass\n\ndef test_two(judge):\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*the `judge` fixture needs a local model: give --localjudge-model PATH "
                                 "or set LOCALJUDGE_MODEL*"])


def recorded_loads(monkeypatch: pytest.MonkeyPatch, engine: str, identity: str) -> list[tuple[Path, dict[str, Any]]]:
    """Stand in for `engine` with a judge class that records each `load` and loads nothing;
    returns the record."""
    loads: list[tuple[Path, dict[str, Any]]] = []

    def load(path: Path, **options: Any) -> FakeJudge:
        loads.append((path, options))
        return FakeJudge({}, identity=identity)

    stand_in_engine(monkeypatch, load, engine)
    return loads


@pytest.mark.parametrize(("flag", "env", "loaded"), [
    ("models/from-flag", None, "models/from-flag"),
    (None, "/abs/from-env", "/abs/from-env"),
    ("models/from-flag", "/abs/from-env", "models/from-flag"),  # the flag wins
])
def test_the_flag_or_the_env_var_reaches_the_loader_once_per_run(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, flag: str | None, env: str | None,
        loaded: str) -> None:
    loads = recorded_loads(monkeypatch, "transformers", "loaded")
    monkeypatch.delenv("LOCALJUDGE_MODEL", raising=False)
    if env:
        monkeypatch.setenv("LOCALJUDGE_MODEL", env)
    pytester.makepyfile("def test_one(judge):\n    assert judge.identity == 'loaded'\n\n"
                        "def test_two(judge):\n    assert judge.identity == 'loaded'\n")
    args = ["--localjudge-device-map", "cpu", "--localjudge-dtype", "bfloat16", "--localjudge-max-context", "512"]
    result = pytester.runpytest(*args, *(["--localjudge-model", flag] if flag else []))
    result.assert_outcomes(passed=2)
    assert loads == [(pytester.path / loaded, {"device_map": "cpu", "dtype": "bfloat16", "max_context": 512})]


def test_the_entry_point_makes_the_plugin_active_without_p(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCALJUDGE_MODEL", raising=False)
    pytester.makepyfile("def test_one(judge):\n    pass\n")
    active = pytester.runpytest_subprocess()  # a fresh process: only the entry point can load it
    active.assert_outcomes(errors=1)
    active.stdout.fnmatch_lines(["*give --localjudge-model PATH or set LOCALJUDGE_MODEL*"])
    assert "--localjudge-model" in pytester.runpytest_subprocess("--help").stdout.str()
    off = pytester.runpytest_subprocess("-p", "no:localjudge")  # the entry point's name
    off.assert_outcomes(errors=1)
    off.stdout.fnmatch_lines(["*fixture 'judge' not found*"])


# docs/pytest-plugin.md's two commands, run here as written (pytest in-process, through pytester),
# the plugin's own `judge` fixture loading `example_judge()` where the model would load
IN_YOUR_PROJECT = "pytest --localjudge-model models/smollm2-135m-instruct"
THE_EXAMPLE = ".venv/bin/python -m pytest examples/test_with_localjudge.py --localjudge-model models/smollm2-135m-instruct"  # noqa: E501


def example_judge() -> FakeJudge:
    """Right about the example's runs: each output one claim, hallucinated where it says 1925 (the
    context says 1889), nothing toxic."""
    def claims(prompt: Any) -> dict[str, Any]:
        return {"claims": [prompt[-1]["content"].split("<<<TEXT\n", 1)[1].split("\nTEXT>>>", 1)[0]]}

    def hallucination(prompt: Any) -> dict[str, Any]:
        verdict = "unsupported" if "1925" in prompt[-1]["content"] else "supported"
        return {"verdicts": [{"verdict": verdict, "reason": "Checked against the context."}]}

    return FakeJudge({"Claims": claims, "HallucinationVerdicts": hallucination,
                      "ToxicityVerdicts": lambda prompt: {"verdicts": [{"verdict": "no", "severity": "none",
                                                                        "reason": "Polite."}]},
                      "Reason": lambda prompt: {"reason": "Fine."}})


@pytest.mark.parametrize("command", [IN_YOUR_PROJECT, THE_EXAMPLE])
def test_the_documented_commands_run_the_example_on_a_fake_judge(command: str, pytester: pytest.Pytester,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    judge = example_judge()
    loads: list[Path] = []

    def load(path: Path, **options: Any) -> FakeJudge:
        loads.append(path)
        return judge

    stand_in_engine(monkeypatch, load)
    (pytester.path / "examples").mkdir()
    (pytester.path / "examples" / "test_with_localjudge.py").write_text(EXAMPLE.read_text(encoding="utf-8"))
    words = shlex.split(command)
    result = pytester.runpytest(*words[words.index("pytest") + 1:])  # `pytest ...`, `python -m pytest ...`
    result.assert_outcomes(passed=4)
    assert loads == [pytester.path / "models" / "smollm2-135m-instruct"]  # once, read from where pytest started
    assert [[call.schema_names[0], len(call.prompts)] for call in judge.calls] == [
        ["ToxicityVerdicts", 1], ["Reason", 1],  # assert_score: one run
        ["Claims", 2], ["HallucinationVerdicts", 2], ["Reason", 2],  # assert_scores: one batch
        ["Claims", 2], ["HallucinationVerdicts", 2], ["Reason", 2]]  # both parametrized cases


def test_the_engine_flag_loads_the_judge_on_vllm(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    loads = recorded_loads(monkeypatch, "vllm", "on-vllm")
    pytester.makepyfile("def test_one(judge):\n    assert judge.identity == 'on-vllm'\n")
    result = pytester.runpytest("--localjudge-engine", "vllm", "--localjudge-model", "m", "--localjudge-max-context",
                                "512")
    result.assert_outcomes(passed=1)
    assert loads == [(pytester.path / "m", {"max_context": 512})]
