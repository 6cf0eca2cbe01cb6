"""`--engine server` from the command line, a sweep and the pytest plugin, against the in-process
fake server (`tests.unit.engines.fake_server`, answering each request's schema): only the
options given reach the engine, every row of the example file is scored, and each misuse is one
line and exit code 2. (The engine itself: tests/unit/engines/test_server_judge.py.)"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from localjudge.cli.main import main
from tests.conftest import EXAMPLES
from tests.unit.engines.fake_server import FakeServer, ok_reply, schema_answer, serving

EXAMPLE = EXAMPLES / "example.jsonl"
ROWS = len(EXAMPLE.read_text(encoding="utf-8").splitlines())

pytest_plugins = ["pytester"]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serving() as srv:
        srv.answer = schema_answer  # a valid instance of each step's schema: every row scores
        yield srv


def score(*flags: str) -> list[str]:
    return ["--quiet", "score", "--scorer", "toxicity", "--data", str(EXAMPLE), *flags]


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("localjudge: error: ") and err.count("\n") == 1, err
    return err


def test_the_server_engine_needs_a_base_url(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, score("--engine", "server"))
    assert "--engine server needs --base-url" in err


@pytest.mark.parametrize("flag", [["--base-url", "http://127.0.0.1:9/v1"], ["--served-model", "m"],
                                  ["--api-key-env", "KEY"], ["--concurrency", "4"], ["--request-timeout", "5"],
                                  ["--tokenizer", "models/m"], ["--server-kind", "vllm"]])
def test_server_flags_are_refused_on_a_local_engine(capsys: pytest.CaptureFixture[str], flag: list[str]) -> None:
    err = one_line_error(capsys, score("--model", "models/m", "--engine", "transformers", *flag))
    assert f"{flag[0]} is a flag of the server engine, not of --engine transformers" in err


def test_local_flags_are_refused_on_the_server_engine(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, score("--engine", "server", "--base-url", "http://127.0.0.1:9/v1", "--dtype", "auto"))
    assert "--dtype is a flag of the transformers and vllm engines, not of --engine server" in err
    err = one_line_error(capsys, score("--engine", "server", "--base-url", "http://127.0.0.1:9/v1", "--threads", "2"))
    assert "--threads is a flag of the local engines, not of --engine server" in err


def test_a_local_engine_still_needs_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--engine transformers needs --model" in one_line_error(capsys, score())


def test_a_model_and_a_different_tokenizer_are_refused(capsys: pytest.CaptureFixture[str], server: FakeServer) -> None:
    err = one_line_error(capsys, score("--engine", "server", "--base-url", server.url, "--model", "models/a",
                                       "--tokenizer", "models/b"))
    assert "differ: give one" in err and not server.posts()


def test_a_server_that_is_not_there_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with serving() as gone:
        url = gone.url
    err = one_line_error(capsys, score("--engine", "server", "--base-url", url, "--request-timeout", "2"))
    assert "cannot reach 127.0.0.1" in err


def test_score_on_a_server_scores_every_row(capsys: pytest.CaptureFixture[str], server: FakeServer,
                                            tmp_path: Path) -> None:
    out = tmp_path / "scored.jsonl"
    assert main(score("--engine", "server", "--base-url", server.url, "--concurrency", "3", "--out", str(out))) == 0
    captured = capsys.readouterr()
    assert "judge: judge-model@127.0.0.1" in captured.err and "+server-template" in captured.err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == ROWS and all(row["toxicity_score"] is not None for row in rows), rows
    [summary] = [line.split(" | ") for line in captured.out.splitlines() if line.startswith("| toxicity |")]
    assert summary[4:6] == [str(ROWS), "0"]  # scored, unscored (after scorer, better, mean_score, mean_prob_score)
    posts = server.posts()
    assert posts and all(path == "/v1/chat/completions" and "structured_outputs" in body for path, body in posts)
    assert not any(key in body for _, body in posts for key in ("dtype", "max_context", "device_map"))


@pytest.mark.parametrize("how", ["repeated", "commas"])
def test_score_spreads_the_rows_over_several_servers(capsys: pytest.CaptureFixture[str], server: FakeServer,
                                                     tmp_path: Path, how: str) -> None:
    out = tmp_path / "scored.jsonl"
    with serving() as other:
        other.answer = schema_answer
        server.delay = other.delay = 0.02  # both busy: neither takes every row
        urls = ["--base-url", server.url, "--base-url", other.url] if how == "repeated" else \
            ["--base-url", f"{server.url},{other.url}"]
        assert main(score("--engine", "server", *urls, "--concurrency", "2", "--out", str(out))) == 0
        assert server.posts() and other.posts()  # both took rows
    hosts = "+".join(sorted(s.url.split("/")[2] for s in (server, other)))
    assert f"judge: judge-model@{hosts}:" in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == ROWS and all(row["toxicity_score"] is not None for row in rows)


def test_a_sweep_with_a_server_model(server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "sweep.yaml"
    with serving() as other:  # `base_url` a list: two servers
        other.answer = schema_answer
        server.delay = other.delay = 0.02  # both busy: neither takes every row
        model = f"{{name: on-server, engine: server, base_url: ['{server.url}', '{other.url}'], concurrency: 2}}"
        config.write_text(f"out_dir: {tmp_path / 'runs'}\nscorers: [toxicity]\nmodels: [{model}]\n"
                          f"datasets: [{{name: example, path: {EXAMPLE}}}]\n", encoding="utf-8")
        assert main(["--quiet", "sweep", str(config)]) == 0
        assert server.posts() and other.posts()
    rows = [json.loads(line) for line in (tmp_path / "runs" / "on-server" / "example" / "toxicity.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert len(rows) == ROWS and all(row["toxicity_score"] is not None for row in rows)
    capsys.readouterr()
    for entry, says in [("{engine: server, base_url: 'http://h/v1'}", "needs 'name' and 'base_url'"),
                        ("{name: s, engine: server}", "needs 'name' and 'base_url'"),
                        ("{name: s, engine: server, base_url: 'http://h/v1', dtype: auto}",
                         "dtype is an option of the transformers engine, not of the server engine"),
                        ("{name: s, engine: server, base_url: 'http://h/v1', threads: 2}",
                         "threads is a key of the local engines")]:
        config.write_text(f"scorers: [toxicity]\nmodels: [{entry}]\ndatasets: [{{path: {EXAMPLE}}}]\n",
                          encoding="utf-8")
        assert says in one_line_error(capsys, ["sweep", str(config)])


def test_the_pytest_plugin_judges_on_a_server(pytester: pytest.Pytester, server: FakeServer,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCALJUDGE_MODEL", raising=False)
    pytester.makepyfile("def test_one(judge):\n    assert judge.identity.startswith('judge-model@127.0.0.1:')\n"
                        "    assert judge.concurrency == 2\n")
    result = pytester.runpytest("--localjudge-engine", "server", "--localjudge-base-url", server.url,
                                "--localjudge-concurrency", "2")
    result.assert_outcomes(passed=1)
    missing = pytester.runpytest("--localjudge-engine", "server")
    missing.assert_outcomes(errors=1)
    missing.stdout.fnmatch_lines(["*on --localjudge-engine server needs --localjudge-base-url URL*"])
    wrong = pytester.runpytest("--localjudge-engine", "server", "--localjudge-base-url", server.url,
                               "--localjudge-dtype", "bfloat16")
    wrong.assert_outcomes(errors=1)
    wrong.stdout.fnmatch_lines(["*--localjudge-dtype is not an option of --localjudge-engine server*"])


# --- a hostile server: nothing it sends back leaks the key, forges a line or bloats the output -------

SECRET = "sk-cli-echo-0c4d77"
HOSTILE = [("echo", 401, "json"), ("echo", 500, "json"), ("echo", 200, "text"),
           ("redirect", 302, f"http://127.0.0.1:9/v1?key={SECRET}")]


@pytest.mark.parametrize("action", HOSTILE, ids=lambda a: "-".join(map(str, a[:3]))[:20])
def test_a_key_the_server_echoes_is_in_no_file_the_run_writes(capsys: pytest.CaptureFixture[str], server: FakeServer,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture,
                                                             action: tuple[object, ...]) -> None:
    monkeypatch.setenv("LJ_CLI_KEY", SECRET)
    server.default = action
    out = tmp_path / "scored.jsonl"
    with caplog.at_level(logging.DEBUG):
        assert main(["score", "--scorer", "toxicity", "--data", str(EXAMPLE), "--engine", "server",
                     "--base-url", server.url, "--api-key-env", "LJ_CLI_KEY", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert [path for path in written if SECRET.encode() in path.read_bytes()] == []
    assert SECRET not in captured.out + captured.err + caplog.text
    judged = [row for row in rows if row["toxicity_error"]]  # (an empty output is scored by rule)
    assert len(rows) == ROWS and len(judged) == ROWS - 1
    assert all("***" in row["toxicity_error"] for row in judged), judged[0]["toxicity_error"]


@pytest.mark.parametrize("name", ["judge\nlocaljudge: error: forged", "judge-\ud800"])
def test_an_odd_model_id_neither_forges_a_line_nor_stops_the_run(capsys: pytest.CaptureFixture[str],
                                                                  server: FakeServer, tmp_path: Path,
                                                                  name: str) -> None:
    server.models = [{"id": name, "max_model_len": 4096}]
    out = tmp_path / "scored.jsonl"
    assert main(score("--engine", "server", "--base-url", server.url, "--out", str(out))) == 0
    err = capsys.readouterr().err
    assert not any(line.startswith("localjudge: error: forged") for line in err.splitlines()), err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == ROWS and all(row["toxicity_score"] is not None for row in rows)


def test_a_huge_unparsed_answer_is_stored_cut(capsys: pytest.CaptureFixture[str], server: FakeServer,
                                              tmp_path: Path) -> None:
    server.answer = lambda path, body: ok_reply(path, body, text="x" * 400_000)  # within the reply cap
    out = tmp_path / "scored.jsonl"
    assert main(score("--engine", "server", "--base-url", server.url, "--out", str(out))) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    judged = [row for row in rows if row["toxicity_error"]]  # (an empty output is scored by rule)
    assert len(judged) == ROWS - 1 and all(row["toxicity_error_kind"] == "invalid_output" for row in judged)
    raw = [json.loads(row["toxicity_steps"])["raw_output"] for row in judged]
    assert all(text.startswith("x" * 1000) and len(text) < 110_000 and "400000" in text for text in raw)
