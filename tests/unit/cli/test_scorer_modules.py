"""A scorer of the user's own reaches every entry point: `--scorer-module` (score, bench), a
sweep's `scorer_modules:`, a Ray actor (its spec carries the module, imported again in the actor's
process), the pytest plugin's `--localjudge-scorer-module`, and an installed entry point of the
group ``localjudge.scorers``. A module that cannot be imported or registers nothing, and a factory
that raises or gives no scorer, is one line."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from localjudge.cli import model_flags
from localjudge.cli.main import main
from localjudge.cluster import ScorerSpec, scorer_factory
from localjudge.scorers import ENTRY_POINT_GROUP, registry
from tests.conftest import ROOT
from tests.fakes import FakeJudgeFactory

pytest_plugins = ["pytester"]

# A model-free scorer (no judge step), so no test here loads a model.
MODULE = '''
from localjudge import create_scorer
from localjudge.scorers import register_scorer


def conciseness_scorer(judge, scale=1.0):
    return (create_scorer("conciseness", judge=judge, scale=scale, positive="concise", higher_is_better=True)
            .generate_score(lambda run, results: float(len(run.output.split()) <= 3)))


register_scorer("conciseness", conciseness_scorer)
'''
ROWS = [{"input": "Capital of France?", "output": "Paris."},
        {"input": "Capital of France?", "output": "The capital of France is, as everyone knows, Paris."}]


pytestmark = pytest.mark.usefixtures("fresh_registry")  # tests/unit/cli/conftest.py


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "my_scorers.py"
    path.write_text(MODULE, encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_score_runs_a_scorer_from_a_file(module: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quiet", "score", "--scorer-module", str(module), "--scorer", "conciseness",
                 "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == ["[0] conciseness: 1", "[1] conciseness: 0"]  # no run_id: the row number
    assert "| conciseness |" in out


def test_score_runs_a_scorer_from_a_module_name(module: Path, data: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(str(module.parent))
    out = tmp_path / "scored.jsonl"
    assert main(["--quiet", "score", "--scorer-module", "my_scorers", "--scorer", "conciseness,completeness",
                 "--data", str(data), "--out", str(out)]) == 0
    assert [json.loads(line)["conciseness_score"] for line in out.read_text().splitlines()] == [1.0, 0.0]


def test_without_the_module_the_error_says_how(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--scorer", "conciseness", "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert "unknown scorer 'conciseness'" in err and "--scorer-module" in err


BAD = [
    pytest.param(None, "no such file", id="missing-file"),
    pytest.param("import not_a_module_anywhere\n", "cannot be imported: ModuleNotFoundError", id="import-error"),
    pytest.param("def broken(:\n", "cannot be imported: SyntaxError", id="syntax-error"),
    pytest.param("raise RuntimeError('boom')\n", "cannot be imported: RuntimeError: boom", id="raises"),
    pytest.param("X = 1\n", "registered no scorer", id="registers-nothing"),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_a_bad_module_is_one_line(text: str | None, expected: str, tmp_path: Path, data: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad_scorers.py"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    assert main(["score", "--scorer-module", str(path), "--scorer", "conciseness", "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("localjudge: error: scorer module") and expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


BAD_FACTORY = [
    pytest.param("    return create_scorer_typo('conciseness', judge=judge)\n",
                 "raised NameError: name 'create_scorer_typo' is not defined", id="raises"),
    pytest.param("    raise ValueError('no such\\nthing')\n", "raised ValueError: no such", id="raises-two-lines"),
    pytest.param("    return None\n", "returned NoneType, not a scorer", id="returns-none"),
]


@pytest.mark.parametrize("command", ["score", "bench"])
@pytest.mark.parametrize(("body", "expected"), BAD_FACTORY)
def test_a_factory_that_fails_is_one_line(body: str, expected: str, command: str, tmp_path: Path, data: Path,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A module that imports and registers, whose factory raises (or gives no scorer) when the
    command builds the scorer: one line naming the scorer, the factory, its file and the error."""
    path = tmp_path / "bad_factory.py"
    path.write_text("from localjudge.scorers import register_scorer\n\n\ndef conciseness_scorer(judge, scale=1.0):\n"
                    f"{body}\n\nregister_scorer('conciseness', conciseness_scorer)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    flags = ["--model", "unused", "--positive", "1", "--out-dir", str(tmp_path / "b")] if command == "bench" else []
    assert main([command, "--scorer-module", "bad_factory.py", "--scorer", "conciseness", "--data", str(data),
                 *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("localjudge: error: scorer 'conciseness': its factory conciseness_scorer in bad_factory.py ")
    assert expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_entry_points_factory_that_raises_names_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    def conciseness_scorer(judge: object, scale: float = 1.0) -> object:
        raise RuntimeError("boom")

    conciseness_scorer.__module__ = "my_pkg.scorers"
    monkeypatch.setitem(registry.SCORERS, "conciseness", conciseness_scorer)
    with pytest.raises(ValueError) as raised:
        registry.build_scorer("conciseness", None)
    assert str(raised.value) == ("scorer 'conciseness': its factory "
                                 "test_an_entry_points_factory_that_raises_names_its_module.<locals>.conciseness_scorer"
                                 " in module my_pkg.scorers raised RuntimeError: boom")


def test_a_module_name_that_is_not_installed_is_one_line(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--scorer-module", "no_such_scorers_pkg", "--scorer", "tone", "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert "scorer module 'no_such_scorers_pkg' cannot be imported: ModuleNotFoundError" in err
    assert len(err.strip().splitlines()) == 1


def test_loading_a_module_twice_is_no_error(module: Path) -> None:
    assert registry.load_scorer_modules([str(module)]) == (str(module.resolve()),)
    assert registry.load_scorer_modules([str(module)]) == (str(module.resolve()),)  # imported already: nothing new
    assert "conciseness" in registry.SCORERS


def test_bench_runs_a_scorer_from_a_file(module: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], fake_judge: FakeJudgeFactory) -> None:
    labeled = tmp_path / "labeled.jsonl"
    labeled.write_text("".join(json.dumps({**r, "label": int(i == 0)}) + "\n" for i, r in enumerate(ROWS * 4)),
                       encoding="utf-8")
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: fake_judge({}, identity="unused"))
    assert main(["--quiet", "bench", "--model", "unused", "--scorer-module", str(module), "--scorer", "conciseness",
                 "--data", str(labeled), "--positive", "1", "--out-dir", str(tmp_path / "bench"),
                 "--bootstrap", "20", "--no-html"]) == 0
    assert json.loads((tmp_path / "bench" / "report.json").read_text())["results"][0]["positive_means"] == "concise"


def test_a_sweep_config_names_its_scorer_modules(module: Path, data: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "sweep.yaml"
    config.write_text(json.dumps({  # JSON is YAML
        "out_dir": str(tmp_path / "runs"), "scorer_modules": [str(module)],
        "models": [{"name": "none", "engine": "server", "base_url": "http://127.0.0.1:9/v1"}],
        "scorers": ["conciseness"], "datasets": [{"name": "rows", "path": str(data)}]}), encoding="utf-8")
    from localjudge.cli import sweep_config

    loaded = sweep_config.load_config(config)
    assert loaded["scorer_modules"] == [str(module.resolve())]
    assert "conciseness" in registry.SCORERS
    config.write_text(config.read_text().replace(str(module), str(tmp_path / "gone.py")), encoding="utf-8")
    assert main(["sweep", str(config)]) == 2
    assert "scorer_modules: scorer module" in capsys.readouterr().err


def test_a_ray_actor_imports_the_module_again(module: Path) -> None:
    """The factory the driver hands each actor (pickled) builds the scorer in a process that has
    never seen the module: the spec names it, the actor imports it."""
    modules = registry.load_scorer_modules([str(module)])
    factory = scorer_factory([ScorerSpec("conciseness", modules=modules)])
    actor = ("import pickle, sys\n"
             "factory = pickle.loads(sys.stdin.buffer.read())\n"
             "print([s.name for s in factory(None)])\n")
    done = subprocess.run([sys.executable, "-c", actor], input=pickle.dumps(factory), capture_output=True,
                          cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "['conciseness']"


def test_an_installed_entry_point_is_found_by_name(module: Path, data: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Installing a package with a ``localjudge.scorers`` entry point names its scorer: no flag."""
    package = module.parent / "ep_scorers.py"
    package.write_text(MODULE.replace('register_scorer("conciseness", conciseness_scorer)', ""), encoding="utf-8")
    monkeypatch.syspath_prepend(str(module.parent))
    point = EntryPoint(name="conciseness", value="ep_scorers:conciseness_scorer", group=ENTRY_POINT_GROUP)
    monkeypatch.setattr("localjudge.scorers.discovery.entry_points",
                        lambda group: [point] if group == ENTRY_POINT_GROUP else [])
    try:
        assert main(["--quiet", "score", "--scorer", "conciseness", "--data", str(data)]) == 0
        assert "] conciseness: 1" in capsys.readouterr().out
        broken = EntryPoint(name="broken", value="ep_scorers:no_such_name", group=ENTRY_POINT_GROUP)
        monkeypatch.setattr("localjudge.scorers.discovery.entry_points", lambda group: [broken])
        assert main(["score", "--scorer", "broken", "--data", str(data)]) == 2
        err = capsys.readouterr().err
        assert "its entry point 'ep_scorers:no_such_name' (localjudge.scorers) cannot be loaded" in err
        assert len(err.strip().splitlines()) == 1
    finally:
        sys.modules.pop("ep_scorers", None)


def test_the_pytest_plugin_loads_a_scorer_module(module: Path, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine="""
        from localjudge.scorers import build_scorer

        def test_conciseness():
            assert build_scorer("conciseness", None).run({"output": "Paris."}).score == 1.0
    """)
    assert pytester.runpytest_subprocess("--localjudge-scorer-module", str(module)).ret == 0
    bad = pytester.runpytest_subprocess("--localjudge-scorer-module", str(module.parent / "gone.py"))
    assert bad.ret != 0
    assert "--localjudge-scorer-module: scorer module" in "\n".join(bad.errlines)
