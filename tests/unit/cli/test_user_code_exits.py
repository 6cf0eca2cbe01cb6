"""A user's own code that calls `sys.exit` is caught like any exception, and two installed
packages claiming one scorer name are refused naming both (issue 57 N11): a `--scorer-module`
calling `sys.exit(0)` ended the command with rc 0, nothing scored and no message."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from localjudge import create_scorer, evaluate
from localjudge.cli.main import main
from localjudge.scorers import ENTRY_POINT_GROUP, build_scorer, load_scorer_modules, registry
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.usefixtures("fresh_registry")  # tests/unit/cli/conftest.py


@pytest.mark.parametrize("code", ["0", "1", "'bye'"])
def test_a_scorer_module_calling_sys_exit_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    path = tmp_path / "exits_now.py"
    path.write_text(f"import sys\nsys.exit({code})\n", encoding="utf-8")
    argv = ["--quiet", "score", "--scorer", "toxicity", "--data", str(EXAMPLES / "example.jsonl"),
            "--scorer-module", str(path), "--model", "models/m"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be imported: SystemExit" in err and "exits_now.py" in err, err
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="scorer module 'exits_now' cannot be imported: SystemExit"):
        load_scorer_modules(["exits_now"])


def test_a_factory_or_a_hook_calling_sys_exit_costs_one_line_or_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def leaving(judge: object, scale: float = 1.0) -> object:
        sys.exit(0)

    registry.register_scorer("leaving", leaving)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scorer 'leaving': its factory .* raised SystemExit"):
        build_scorer("leaving", None)
    quits = create_scorer("quits").generate_score(lambda run, results: sys.exit(3) if run.output == "bad" else 1.0)
    result = evaluate([{"output": "good"}, {"output": "bad"}], [quits])
    assert [r.score for r in result.results["quits"]] == [1.0, None]
    assert result.results["quits"][1].error_kind == "step_error" and "SystemExit" in (result.results["quits"][1].error
                                                                                        or "")


def test_two_packages_claiming_one_scorer_name_are_refused_naming_both(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "ep_one.py").write_text("def f(judge, scale=1.0):\n    raise AssertionError\n", encoding="utf-8")
    points = [EntryPoint(name="concise", value=f"ep_{which}:f", group=ENTRY_POINT_GROUP)
              for which in ("one", "two")]
    monkeypatch.setattr("localjudge.scorers.discovery.entry_points", lambda group: points)
    with pytest.raises(ValueError) as error:
        build_scorer("concise", None)
    said = str(error.value)
    assert "'ep_one:f'" in said and "'ep_two:f'" in said and "uninstall one" in said and "\n" not in said
    monkeypatch.setattr("localjudge.scorers.discovery.entry_points", lambda group: points[:1] * 2)  # one package
    with pytest.raises(ValueError, match="raised AssertionError"):  # seen twice, the same factory: no clash
        build_scorer("concise", None)
