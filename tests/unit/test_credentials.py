"""One secret rule (`localjudge.credentials`): a credential with a control character is refused in
one line that does not show it; a key or a store URL's secret is redacted in every form a message
can hold it (raw, repr-escaped, JSON-escaped, URL-encoded, in a URL's userinfo or query), in every
file a run writes and on stderr."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from localjudge.cli.main import main
from localjudge.credentials import CredentialError, check_credential, forms, redact, shown_url, url_secrets
from localjudge.live import LiveStoreError
from localjudge.live.mastra import MastraScores
from tests.conftest import EXAMPLES
from tests.unit.engines.fake_server import FakeServer, schema_answer, serving

KEY = "sk-Ab+/=é~x 9"  # a space, a plus, a slash, a non-ASCII letter: each form differs


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serving() as srv:
        srv.answer = schema_answer
        yield srv


def score(server: FakeServer, out: Path) -> list[str]:
    return ["--quiet", "score", "--scorer", "toxicity", "--data", str(EXAMPLES / "example.jsonl"), "--out", str(out),
            "--engine", "server", "--base-url", server.url, "--api-key-env", "LJ_KEY"]


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r", "\x1b"])
def test_a_key_with_a_control_character_is_refused_in_one_line_that_does_not_show_it(
        server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        end: str) -> None:
    key = "sk-live-0123456789abcdef" + end
    monkeypatch.setenv("LJ_KEY", key)
    code = main(score(server, tmp_path / "out.jsonl"))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("localjudge: error: ") and err.count("\n") == 1, err
    assert "LJ_KEY" in err and "control character" in err
    assert "0123456789abcdef" not in err
    assert not [r for r in server.requests if r[0] == "POST"], "a request went out with the key"


def test_every_form_of_an_echoed_key_is_in_no_file_the_run_writes_nor_on_stderr(
        server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LJ_KEY", KEY)
    server.default = ("echo-forms", 400)  # every row's error quotes the key every way
    out = tmp_path / "out.jsonl"
    assert main(score(server, out)) == 0
    err = capsys.readouterr().err
    written = {p: p.read_text(encoding="utf-8", errors="replace") for p in tmp_path.rglob("*") if p.is_file()}
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    errors = [r["toxicity_error"] for r in rows if r["toxicity_error"]]
    assert errors and all("bad key ***" in e and "token=***" in e for e in errors), errors
    for form in forms(KEY):
        for where, text in [("stderr", err), *((str(p), t) for p, t in written.items())]:
            assert form not in text, f"{form!r} in {where}"


def test_redaction_covers_every_form() -> None:
    for form in forms(KEY):
        assert redact(f"x {form} y", [KEY]) == "x *** y"
    assert redact(f"Invalid header value {('Bearer ' + KEY + chr(10)).encode()!r}", [KEY + "\n"]) == \
        "Invalid header value b'Bearer ***'"
    with pytest.raises(CredentialError) as error:
        check_credential("sk-secret\n", "api_key_env LJ_KEY")
    assert "sk-secret" not in str(error.value) and "LJ_KEY" in str(error.value)


@pytest.mark.parametrize("url", [
    "postgresql://app:s3cret@127.0.0.1:1/mastra",
    "postgresql://app@127.0.0.1:1/mastra?password=s3cret&sslmode=disable",
    "postgresql://127.0.0.1:1/mastra?sslmode=disable&sslpassword=s3cret",
    "postgresql://127.0.0.1:1/mastra?user=app&password=s3%2Fcret",
    "postgres://tok-s3cret@127.0.0.1:1/mastra",
])
def test_a_refused_store_never_shows_a_secret_of_its_url(url: str) -> None:
    with pytest.raises(LiveStoreError) as error:
        MastraScores(url)
    said = str(error.value)
    assert "s3cret" not in said and "s3%2Fcret" not in said and "s3/cret" not in said, said
    assert "\n" not in said and "127.0.0.1:1" in said
    assert all(secret not in shown_url(url) for secret in url_secrets(url))
