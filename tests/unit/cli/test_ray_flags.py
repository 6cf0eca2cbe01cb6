"""`localjudge score --ray` and a sweep's `ray:` without Ray running: the flags and settings checked, a
bad model path one line before Ray is imported, a missing ray one line saying how to install it
(tests/ray runs them on a cluster)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from localjudge.cli.main import main
from tests.conftest import EXAMPLES

EXAMPLE = str(EXAMPLES / "example.jsonl")


@pytest.mark.parametrize(("extra", "message"), [
    (["--judges", "2"], "--judges needs --ray"),
    (["--gpus-per-judge", "1"], "--gpus-per-judge needs --ray"),
    (["--ray", "--threads", "2"], "--threads is not for --ray: give --cpus-per-judge"),
    (["--ray", "--device-map", "cpu"], "--device-map is not for --ray"),
    (["--ray", "--judges", "0"], "--judges must be at least 1, got 0"),
    (["--ray", "--gpus-per-judge", "-1"], "--gpus-per-judge must be at least 0"),
    (["--ray", "--cpus-per-judge", "0"], "--cpus-per-judge must be above 0"),
    (["--ray"], "does not exist"),  # the model path, checked before Ray starts
])
def test_ray_flags_are_checked_before_anything_starts(capsys, extra: list[str], message: str) -> None:
    code = main(["score", "--model", "models/nope", "--scorer", "toxicity", "--data", EXAMPLE, *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "ray" not in sys.modules


def test_ray_is_not_for_mastra_storage(capsys) -> None:
    code = main(["score", "--ray", "--scorer", "toxicity", "--mastra-store", "file:mastra.db"])
    err = capsys.readouterr().err
    assert code == 2 and "--ray scores a --data file" in err and err.count("\n") == 1


def test_a_bad_model_path_never_imports_ray(tmp_path: Path) -> None:
    code = ("import sys\nfrom localjudge.cluster import JudgeSpec, ScorerSpec, evaluate_on_ray\n"
            "try:\n    evaluate_on_ray([{'output': 'x'}], [ScorerSpec('toxicity')], JudgeSpec('/nope/model'))\n"
            "except ValueError as error:\n    print(type(error).__name__, 'ray' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "ModelPathError False"


def test_without_ray_the_cli_says_how_to_install_it(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code = main(["--quiet", "score", "--ray", "--scorer", "textual_difference", "--data", EXAMPLE])
    err = capsys.readouterr().err
    assert code == 2 and "pip install 'localjudge-evals[ray]'" in err and "Traceback" not in err


@pytest.mark.parametrize(("ray", "model", "message"), [
    ("yes", {}, "'ray' must be true or a mapping"),
    ({"judges": 0}, {}, "judges must be at least 1"),
    ({"judges": 1.5}, {}, "ray: judges: 1.5: known keys are"),
    ({"bogus": 1}, {}, "ray: bogus: 1: known keys are"),
    (True, {"threads": 2}, "threads is not for ray: give ray's cpus_per_judge"),
])
def test_a_sweep_s_ray_settings_are_checked_with_its_config(tmp_path: Path, ray: object, model: dict,
                                                            message: str) -> None:
    from localjudge.cli.sweep_config import load_config

    config = {"models": [{"path": "models/nope", **model}], "scorers": ["toxicity"], "datasets": [{"path": EXAMPLE}],
              "ray": ray}
    path = tmp_path / "sweep.yaml"
    path.write_text(json.dumps(config))
    with pytest.raises(ValueError, match=re.escape(message)):
        load_config(path)
    config["ray"] = {"address": "auto", "judges": 2, "gpus_per_judge": 1, "cpus_per_judge": 0.5}
    config["models"] = [{"path": "models/nope"}]
    path.write_text(json.dumps(config))
    assert load_config(path)["ray"]["judges"] == 2


def test_a_sweep_on_ray_checks_every_model_path_before_ray(tmp_path: Path, capsys) -> None:
    config = {"models": [{"path": str(tmp_path / "nope")}], "scorers": ["toxicity"], "datasets": [{"path": EXAMPLE}],
              "ray": True, "out_dir": str(tmp_path / "out")}
    path = tmp_path / "sweep.yaml"
    path.write_text(json.dumps(config))
    assert main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and err.count("\n") == 1 and "ray" not in sys.modules


@pytest.mark.parametrize(("flags", "actors", "note"), [
    (["--judges", "2", "--batch-size", "8"], 1, "--judges 2: 8 row(s) make 1 batch(es) of --batch-size 8, one per "
                                                "actor, so 1 actor(s)"),
    (["--judges", "2", "--batch-size", "4"], 2, None),  # docs/ray.md's example: a batch for each actor
    (["--judges", "3", "--batch-size", "3"], 3, None),
    (["--batch-size", "8"], 1, None),
])
def test_judges_are_capped_to_the_batches_saying_so(capsys, monkeypatch: pytest.MonkeyPatch, flags: list[str],
                                                    actors: int, note: str | None) -> None:
    """More actors than batches would load judges that get no rows (Ray Data warns mid-bars): the
    CLI asks for one per batch and says so."""
    from localjudge.cli import cluster
    from localjudge.cluster import ClusterError

    asked: list[int] = []

    def recording(*args: object, judges: int, **kwargs: object) -> None:
        asked.append(judges)
        raise ClusterError("stopped by the test")

    monkeypatch.setattr(cluster, "evaluate_on_ray", recording)
    assert main(["--quiet", "score", "--ray", "--scorer", "textual_difference", "--data", EXAMPLE, *flags]) == 2
    err = capsys.readouterr().err
    assert asked == [actors]
    assert (note in err) if note else ("--judges" not in err)


def test_evaluate_on_ray_starts_no_more_actors_than_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib
    import types

    from localjudge.cluster import ScorerSpec, evaluate_on_ray, runner

    class Stop(Exception):
        pass

    asked: list[int] = []

    def recording(*args: object, judges: int, **kwargs: object) -> None:
        asked.append(judges)
        raise Stop

    fake = types.SimpleNamespace(exceptions=types.SimpleNamespace(RayError=type("RayError", (Exception,), {})))
    monkeypatch.setattr(runner, "ray_session", lambda address=None: contextlib.nullcontext(fake))
    monkeypatch.setattr(runner, "_run", recording)
    rows = [{"output": f"row {i}"} for i in range(5)]
    for batch_size, judges, expected in [(8, 4, 1), (2, 4, 3), (1, 4, 4), (1, 2, 2)]:
        with pytest.raises(Stop):
            evaluate_on_ray(rows, [ScorerSpec("textual_difference")], None, judges=judges, batch_size=batch_size)
        assert asked.pop() == expected
