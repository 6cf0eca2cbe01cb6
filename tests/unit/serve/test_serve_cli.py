"""`localjudge serve`'s refusals before any model loads: one line each, no secret shown."""

from __future__ import annotations

import pytest

from localjudge.cli.main import main


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_another_host_needs_an_api_key(capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, "--model", "models/nowhere", "--host", "0.0.0.0")
    assert "--api-key-env" in err


def test_a_key_with_a_newline_is_refused_without_showing_it(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY", "sk-very-secret-123\n")
    err = refusal(capsys, "--model", "models/nowhere", "--api-key-env", "JUDGE_KEY")
    assert "control character" in err and "sk-very-secret" not in err


def test_an_unset_key_variable_is_refused(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    assert "NO_SUCH_KEY" in refusal(capsys, "--model", "m", "--api-key-env", "NO_SUCH_KEY")


@pytest.mark.parametrize(("flags", "named"), [
    (["--engine", "server", "--base-url", "http://127.0.0.1:1/v1"], "--engine server"),
    (["--port", "70000"], "--port"),
    (["--max-queue", "0"], "--max-queue"),
    (["--batch-window-ms", "inf"], "--batch-window-ms"),
    (["--max-body-mb", "nan"], "--max-body-mb"),
])
def test_bad_flags_are_refused_naming_the_flag(capsys: pytest.CaptureFixture[str], flags: list[str],
                                               named: str) -> None:
    assert named in refusal(capsys, "--model", "models/nowhere", *flags)


def test_a_missing_model_is_refused_before_loading(capsys: pytest.CaptureFixture[str]) -> None:
    assert "models/nowhere" in refusal(capsys, "--model", "models/nowhere")
