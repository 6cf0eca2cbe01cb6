"""Scorer options: the keywords a factory takes beyond the judge, `scale` and `mode` (rubric's
`criteria`), given to `build_scorer(..., options=)` (how the registry checks them:
tests/unit/scorers/test_registry.py), `--scorer-option SCORER.KEY=VALUE` on `score` and `bench`,
and `scorer_options` in a sweep config; every mistake is a one-line error before any model loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localjudge import FakeJudge
from localjudge.cli import model_flags
from localjudge.cli.main import main
from localjudge.cli.shared import CliError, option_value, parse_scorer_options
from localjudge.cli.sweep_config import load_config
from localjudge.scorers import build_scorer
from tests.fakes import FakeJudgeFactory, make_fake_judge, stand_in_engine

CRITERIA = ["Names the shop.", "Under 20 words."]


def criteria_shown(prompt: Any) -> list[str]:
    """The numbered criteria a rubric prompt shows (numbers stripped)."""
    lines = str(prompt[-1]["content"]).split("<<<CRITERIA\n", 1)[1].split("\nCRITERIA>>>", 1)[0].split("\n")
    return [line.split(". ", 1)[1] for line in lines]


def shop_only(prompt: Any) -> dict[str, Any]:
    """Meets a criterion exactly when it mentions the shop."""
    return {"verdicts": [{"verdict": "yes" if "shop" in c else "no", "reason": "r"} for c in criteria_shown(prompt)]}


def test_rubric_builds_by_name_with_its_criteria(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(CriterionVerdicts=shop_only)
    scorer = build_scorer("rubric", judge, scale=10, options={"criteria": CRITERIA})
    result = scorer.run({"input": "A greeting?", "output": "Welcome to Bloom & Co!"})
    assert criteria_shown(judge.calls[0].prompts[0]) == CRITERIA
    assert result.score == 0.0  # "Under 20 words." is required and missed
    assert "missed: Under 20 words." in (result.reason or "")


# --- VALUE and SCORER.KEY=VALUE ------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ('["Names the shop", "Under 20 words"]', ["Names the shop", "Under 20 words"]),
    ('[{"criterion": "a", "required": false}]', [{"criterion": "a", "required": False}]),
    ("0.5", 0.5), ("3", 3), ("true", True), ("null", None), ('{"a": 1}', {"a": 1}),
    ("Stays polite", "Stays polite"),  # not JSON: text as is
    ('"42"', "42"),  # a JSON string: the way to give text that looks like JSON
    ('"@home"', "@home"),
    ("NaN", "NaN"), ("Infinity", "Infinity"),  # JSON's non-standard constants stay text
    ("", ""), ("[unclosed", "[unclosed"),
])
def test_a_value_is_json_when_it_parses_else_text(text: str, value: Any) -> None:
    assert option_value(text, "--scorer-option x.k") == value


def test_at_file_reads_json(tmp_path: Path) -> None:
    (tmp_path / "rubric.json").write_text(json.dumps(CRITERIA), encoding="utf-8")
    assert option_value(f"@{tmp_path / 'rubric.json'}", "w") == CRITERIA
    (tmp_path / "bad.json").write_text("Names the shop.", encoding="utf-8")
    with pytest.raises(CliError, match="bad.json' is not valid JSON"):
        option_value(f"@{tmp_path / 'bad.json'}", "w")
    with pytest.raises(CliError, match="cannot read '.*missing.json'"):
        option_value(f"@{tmp_path / 'missing.json'}", "w")


def test_flags_group_by_scorer() -> None:
    flags = ["rubric.criteria=[\"a\"]", "answer_relevancy.uncertainty_weight=0.5", "rubric.other = x"]
    assert parse_scorer_options(flags, ["rubric", "answer_relevancy"]) == {
        "rubric": {"criteria": ["a"], "other": " x"}, "answer_relevancy": {"uncertainty_weight": 0.5}}
    assert parse_scorer_options([], ["rubric"]) == {}


@pytest.mark.parametrize(("flag", "error", "message"), [
    ("rubric", CliError, "write it as SCORER.KEY=VALUE"),
    ("rubric=x", CliError, "write it as SCORER.KEY=VALUE"),
    (".criteria=x", CliError, "write it as SCORER.KEY=VALUE"),
    ("rubric.=x", CliError, "write it as SCORER.KEY=VALUE"),
    ("nope.k=1", ValueError, "unknown scorer 'nope'; known scorers:"),
    ("toxicity.k=1", CliError, "--scorer-option toxicity.k: toxicity is not a scorer of this run (rubric)"),
])
def test_bad_flags_are_errors(flag: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_scorer_options([flag], ["rubric"])


def test_an_option_given_twice_is_an_error() -> None:
    with pytest.raises(CliError, match="rubric.criteria: given twice"):
        parse_scorer_options(["rubric.criteria=[]", "rubric.criteria=[\"a\"]"], ["rubric"])


# --- localjudge score and bench --------------------------------------------------------------------

def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


ROWS = [{"run_id": "a", "input": "A greeting?", "output": "Welcome to Bloom & Co!", "label": 0},
        {"run_id": "b", "input": "A greeting?", "output": "Hello.", "label": 1}]


def test_score_runs_rubric_with_criteria_from_the_flag_and_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  fake_judge: FakeJudgeFactory) -> None:
    judges: list[FakeJudge] = []
    monkeypatch.setattr(model_flags, "build_judge",
                        lambda args, device=None: judges.append(fake_judge(CriterionVerdicts=shop_only)) or judges[-1])
    data, out = write_rows(tmp_path / "rows.jsonl", ROWS), tmp_path / "out.jsonl"
    argv = ["--quiet", "score", "--model", "m", "--scorer", "rubric", "--data", str(data), "--out", str(out),
            "--no-resume"]
    assert main([*argv, "--scorer-option", f"rubric.criteria={json.dumps(CRITERIA)}"]) == 0
    assert criteria_shown(judges[-1].calls[0].prompts[0]) == CRITERIA
    assert [json.loads(line)["rubric_score"] for line in out.read_text().splitlines()] == [0.0, 0.0]
    (tmp_path / "rubric.json").write_text(json.dumps([CRITERIA[0], {"criterion": CRITERIA[1], "required": False}]))
    assert main([*argv, "--scorer-option", f"rubric.criteria=@{tmp_path / 'rubric.json'}", "--scale", "10"]) == 0
    assert [json.loads(line)["rubric_score"] for line in out.read_text().splitlines()] == [10.0, 10.0]


def no_model(args: Any, device: Any = None) -> Any:
    pytest.fail("the model loaded before the error")


@pytest.mark.parametrize(("extra", "message"), [
    ([], "scorer 'rubric' needs option 'criteria'"),
    (["--scorer-option", "rubric.criteria=7"], "scorer 'rubric': criteria must be a list"),
    (["--scorer-option", "rubric.criteria=[]", "--scorer-option", "rubric.colour=red"],
     "scorer 'rubric' has no option 'colour'; its options: criteria"),
    (["--scorer-option", "rubric.criteria=[]", "--scorer-option", "toxicity.k=1"],
     "toxicity is not a scorer of this run (rubric)"),
    (["--scorer-option", "rubric.criteria=[]", "--scorer-option", "bogus.k=1"], "unknown scorer 'bogus'"),
    (["--scorer-option", "rubric.criteria"], "write it as SCORER.KEY=VALUE"),
    (["--scorer-option", "rubric.criteria=@nowhere.json"], "cannot read 'nowhere.json'"),
    (["--scorer-option", "rubric.criteria=[]", "--mode", "direct"], "scorer 'rubric' has no mode parameter"),
    *((["--scorer-option", f"rubric.criteria={bad}"], f"a criterion must be text or {{'criterion': ..., 'required': "
       f"...}}, got {shown}") for bad, shown in [("[null]", "None"), ("[3]", "3"), ("[true]", "True"),
                                                  ("[[1]]", "[1]")]),  # issue 34, item 7: tracebacks before
])
def test_score_option_errors_are_one_line_before_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], extra: list[str],
                                                           message: str) -> None:
    monkeypatch.setattr(model_flags, "build_judge", no_model)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["score", "--model", "m", "--scorer", "rubric", "--data", str(data), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_an_option_value_a_factory_trips_over_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34, item 7, for every scorer: a factory that assumes its option's type (and fails with
    an AttributeError, a KeyError...) still gives one ValueError naming the scorer, not a traceback."""
    from localjudge import scorers

    def picky(judge: Any, *, words: Any, scale: float = 1.0) -> Any:
        return [w.strip() for w in words]

    monkeypatch.setitem(scorers.SCORERS, "picky", picky)
    with pytest.raises(ValueError, match=r"scorer 'picky': its factory .*picky in module tests\.unit\.cli\."
                                         r"test_scorer_options raised AttributeError: 'int' "):
        scorers.build_scorer("picky", FakeJudge({}), options={"words": [3]})


def test_a_function_option_cannot_come_from_a_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(model_flags, "build_judge", no_model)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["score", "--model", "m", "--scorer", "hallucination", "--data", str(data),
                 "--scorer-option", "hallucination.get_context=my_module.fetch"]) == 2
    assert "hallucination.get_context: takes a Python function" in capsys.readouterr().err


def test_a_static_context_option_reaches_the_prompts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: judge)
    data = write_rows(tmp_path / "rows.jsonl", [{"input": "q", "output": "Paris is in France."}])
    assert main(["--quiet", "score", "--model", "m", "--scorer", "faithfulness", "--data", str(data),
                 "--scorer-option", 'faithfulness.context=["Paris is the capital of France."]']) == 0
    assert any("Paris is the capital of France." in str(p[-1]["content"]) for c in judge.calls for p in c.prompts)


def test_bench_measures_rubric_on_own_labels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str],
                                             fake_judge: FakeJudgeFactory) -> None:
    def short_only(prompt: Any) -> dict[str, Any]:  # a perfect judge on ROWS: the one-word output passes
        one_word = len(str(prompt[-1]["content"]).split("<<<RESPONSE\n", 1)[1].split("\n", 1)[0].split()) == 1
        return {"verdicts": [{"verdict": "yes" if one_word else "no", "reason": "r"} for _ in criteria_shown(prompt)]}

    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    argv = ["--quiet", "bench", "--model", "m", "--data", str(data), "--scorer", "rubric", "--positive", "1",
            "--out-dir", str(tmp_path / "bench"), "--bootstrap", "20", "--no-html"]
    monkeypatch.setattr(model_flags, "build_judge", no_model)
    assert main(argv) == 2  # no criteria: refused before the model loads
    assert "scorer 'rubric' needs option 'criteria'" in capsys.readouterr().err
    assert main([*argv, "--scorer-option", "faithfulness.k=1"]) == 2
    assert "faithfulness is not a scorer of this run (rubric)" in capsys.readouterr().err
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge(CriterionVerdicts=short_only))
    assert main([*argv, "--scorer-option", 'rubric.criteria=["One word."]']) == 0
    report = json.loads((tmp_path / "bench" / "report.json").read_text())
    judge_row = next(r for r in report["results"][0]["table"] if r["name"] == "judge score")
    assert report["results"][0]["positive_means"] == "meets the rubric" and judge_row["auc"]["value"] == 1.0


def test_bench_options_name_only_measured_scorers(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(model_flags, "build_judge", no_model)
    assert main(["bench", "--model", "m", "--benchmark", "toxigen", "--scorer-option", "rubric.criteria=[]"]) == 2
    assert "rubric is not a scorer of this run (toxicity)" in capsys.readouterr().err


# --- sweeps ------------------------------------------------------------------------------------------

class Loaded:
    """The sweep loads its models itself: each load is recorded and answers a fake judge."""

    loads: list[str] = []

    @classmethod
    def load(cls, path: Any, **kwargs: Any) -> FakeJudge:
        cls.loads.append(str(path))
        return make_fake_judge(CriterionVerdicts=shop_only)


def sweep_config(tmp_path: Path, body: str, suffix: str = ".yaml") -> Path:
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    config = tmp_path / f"sweep{suffix}"
    if suffix == ".toml":
        config.write_text(f'out_dir = "{tmp_path / "sweep"}"\n{body}\n[[models]]\nname = "m"\npath = "m"\n'
                          f'[[datasets]]\nname = "d"\npath = "{data}"\n', encoding="utf-8")
    else:
        config.write_text(f"out_dir: {tmp_path / 'sweep'}\nmodels: [{{name: m, path: m}}]\n"
                          f"datasets: [{{name: d, path: {data}}}]\n{body}\n", encoding="utf-8")
    return config


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_sweep_scorer_options_reach_the_scorers_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             suffix: str) -> None:
    stand_in_engine(monkeypatch, Loaded.load)
    body = ('scorers = ["toxicity", {name = "rubric", scale = 10}]\n'
            '[scorer_options.rubric]\ncriteria = ["Names the shop."]') if suffix == ".toml" else (
        "scorers: [toxicity, {name: rubric, scale: 10}]\nscorer_options: {rubric: {criteria: [Names the shop.]}}")
    assert main(["--quiet", "sweep", str(sweep_config(tmp_path, body, suffix))]) == 0
    cell = tmp_path / "sweep" / "m" / "d" / "rubric.jsonl"
    scored = [json.loads(line) for line in cell.read_text().splitlines()]
    assert [r["rubric_score"] for r in scored] == [10.0, 10.0]  # the one criterion mentions the shop: met
    assert all("met: Names the shop." in r["rubric_reason"] for r in scored)
    assert (tmp_path / "sweep" / "m" / "d" / "toxicity.jsonl").exists()


@pytest.mark.parametrize(("body", "message"), [
    ("scorers: [rubric]", "scorer 'rubric' needs option 'criteria'"),
    ("scorers: [toxicity]\nscorer_options: {rubric: {criteria: []}}",
     "scorer_options names 'rubric', which is not in 'scorers' (toxicity)"),
    ("scorers: [rubric]\nscorer_options: {rubric: [criteria]}", "'scorer_options' must map scorer names to mappings"),
    ("scorers: [rubric]\nscorer_options: [rubric]", "'scorer_options' must map scorer names to mappings"),
    ("scorers: [rubric]\nscorer_options: {rubric: {criteria: [], colour: red}}", "has no option 'colour'"),
    ("scorers: [{name: rubric, criteria: []}]", "scorer entry {'name': 'rubric', 'criteria': []}: a name or a "
                                                "mapping with 'name'; unknown keys ['criteria']"),
    ("scorers: [{scale: 2}]", "a name or a mapping with 'name'"),
    ("scorers: [hallucination]\nscorer_options: {hallucination: {get_context: x}}", "takes a Python function"),
])
def test_sweep_option_errors_come_before_any_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], body: str,
                                                   message: str) -> None:
    stand_in_engine(monkeypatch, Loaded.load)
    Loaded.loads = []
    assert main(["sweep", str(sweep_config(tmp_path, body))]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert Loaded.loads == []


def test_a_sweep_without_scorer_options_reads_as_before(tmp_path: Path) -> None:
    config = load_config(sweep_config(tmp_path, "scorers: [toxicity, {name: toxicity, mode: direct}]"))
    assert config["scorer_options"] == {}
