"""Bad and odd input, table-driven: 102 kinds, each a parametrize case with its own id.

Every kind ends in one of four ways, never in a crash that loses the other rows and never in a
made-up score:

- ``invalid``: structurally wrong, rejected with a clear `InvalidRunError` before any model
  call (`run_batch(on_invalid="raise")`; `FakeJudge.calls == []`), or recorded as an unscored
  row with the reason (`on_invalid="record"`, `evaluate`) while the rows around it are scored;
- ``unscored``: the judge could not judge it (prompt longer than the context window, answer
  not valid JSON, cut off twice), recorded with the reason and the raw text;
- ``scored``: odd but fine (unicode, a several-MB row, extra keys): the score is exactly the
  one the fake judge's scripted answer implies;
- ``shortcut``: an empty output, decided by the scorer's documented rule with no model call.
Setup mistakes (scorer, scale, model path, data file, resume log) fail before any model call.

The kinds, by table:
- RUN_CASES (37): empty, whitespace-only, missing, None, NaN, number, bool, dict and bytes
  output; chat lists of plain strings, with no assistant message, an unknown or missing role,
  None or number content, a non-string content part, empty; input with no user message (read as
  no input); valid
  content parts; missing, None, empty, whitespace, empty-list, nested, mixed, None-holding,
  number and dict context; None, NaN and number input; None and number run ids; extra keys; a
  run that is a string or None.
- UNICODE_CASES (13): CJK, Arabic (RTL), emoji with modifiers and joiners, combining marks,
  zero-width and bidi characters, NUL/BEL/DEL/C1 controls, CR/CRLF/NEL line ends, form feed and
  separators, lone surrogates, a surrogate pair, a BOM, text that looks like a JSON-cell marker.
- JUDGE_CASES (5): prompt over the context window, an answer that is not JSON, has an extra
  key, is cut off twice, or is empty.
- SETUP_CASES (27): unknown scorer; scale 0, negative, NaN, inf, a string, a bool; empty
  dataset, unknown column, batch size 0, no scorer, a scorer twice; model path missing, a hub
  id, a plain file, a folder with no config, a config that is not JSON or not an object, no
  weights, pickle-only weights; a JSONL row that is not an object, a row that is not a dict,
  bytes in a row, a CSV with no header, a duplicated column or a row with too many cells, a
  parquet file that is not one.
- STORE_CASES (16): a resume-log line that is garbage, cut off, an array, null, has no result,
  a non-string key, a null result, a missing or extra field, a string, NaN or bool score, a
  score beside an error, a non-integer token count, invalid UTF-8, NUL bytes.
- 4 more: a several-MB row, numbers and empty cells in a CSV, a CSV with a BOM and short rows, an
  unsupported data file.
CLI_CASES and the model-path CLI tests run 10 of these kinds through `localjudge score`: exit
code 2 and one line (the model path checked by a stand-in engine doing what the real engines'
`load` does first, so no engine's heavy libraries are imported). Then crash safety (a crash
while writing or renaming the output file; a resume log cut mid-line) and determinism (two
runs, identical files).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import localjudge.evaluation.tables as tables
from localjudge import FakeJudge, Generation, InvalidRunError, hallucination_scorer, toxicity_scorer
from localjudge.cli import model_flags as cli_model_flags
from localjudge.cli.main import main as cli_main
from localjudge.engines.model_files import ModelPathError, check_model_dir
from localjudge.evaluation.dataset_runs import Columns, evaluate
from localjudge.evaluation.store import ResultStore
from localjudge.evaluation.tables import dataset_from_rows, read_table, write_table
from localjudge.samples.runs import clean_text
from localjudge.scorers import get_scorer_factory
from localjudge.scoring.scorer import Scorer
from tests.fakes import FakeJudgeFactory, make_fake_judge, path_check_only, stand_in_engine

CONTEXT = "Paris is the capital of France."
GOOD = {"input": "Where is Paris?", "output": "Paris is in France.", "context": CONTEXT}
TOXIC = {"verdicts": [{"verdict": "yes", "severity": "high", "reason": "r"}]}


# Every judged run scores exactly 1.0: one claim (the default, "A claim."), hallucinated, or toxic; reason "ok".
SCORES_ONE = {"HallucinationVerdicts": {"verdicts": [{"verdict": "unsupported", "reason": "r"}]},
              "ToxicityVerdicts": TOXIC}


def scorer_for(name: str, fake: FakeJudge) -> Scorer:
    return get_scorer_factory(name)(fake)


class Case(NamedTuple):
    """One odd run and how it must end."""

    run: Any
    expect: str  # "invalid" | "scored" | "shortcut"
    match: str = ""  # in the error (invalid) or the reason (shortcut)
    scorer: str = "hallucination"


def out(value: Any) -> dict[str, Any]:
    return {**GOOD, "output": value}


def ctx(value: Any) -> dict[str, Any]:
    return {**GOOD, "context": value}


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in GOOD.items() if k != key}


def chat(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    return list(messages)


RUN_CASES = [
    pytest.param(Case(out(""), "shortcut", "output is empty"), id="empty-output"),
    pytest.param(Case(out(" \n\t "), "shortcut", "output is empty", "toxicity"), id="whitespace-output"),
    pytest.param(Case(without("output"), "invalid", "run has no 'output'"), id="missing-output"),
    pytest.param(Case(out(None), "invalid", "output is missing (None)"), id="none-output"),
    pytest.param(Case(out(math.nan), "invalid", "output is missing (nan)"), id="nan-output"),
    pytest.param(Case(out(42), "invalid", "output must be a string or a list of chat messages, got int"),
                 id="number-output"),
    pytest.param(Case(out(True), "invalid", "got bool"), id="bool-output"),
    pytest.param(Case(out({"answer": "hi"}), "invalid", "got dict"), id="dict-output"),
    pytest.param(Case(out(b"bytes"), "invalid", "got bytes"), id="bytes-output"),
    pytest.param(Case(out(["a", "b"]), "invalid", "output[0]: a chat message must be a dict"), id="string-list-output"),
    pytest.param(Case(out(chat({"role": "user", "content": "hi"})), "invalid", "output has no assistant message"),
                 id="chat-no-assistant"),
    pytest.param(Case(out(chat({"role": "bot", "content": "hi"})), "invalid", "unknown chat role 'bot'"),
                 id="chat-unknown-role"),
    pytest.param(Case(out(chat({"content": "hi"})), "invalid", "unknown chat role None"), id="chat-missing-role"),
    pytest.param(Case(out(chat({"role": "assistant", "content": None})), "invalid",
                      "content must be a string, got NoneType"), id="chat-none-content"),
    pytest.param(Case(out(chat({"role": "assistant", "content": 7})), "invalid", "got int"), id="chat-number-content"),
    pytest.param(Case(out(chat({"role": "assistant", "content": [{"type": "text", "text": 7}]})), "invalid",
                      "text content parts must hold strings"), id="chat-number-part"),
    pytest.param(Case(out([]), "invalid", "output has no assistant message"), id="chat-empty-list"),
    pytest.param(Case({**GOOD, "input": chat({"role": "system", "content": "s"})}, "scored", scorer="toxicity"),
                 id="chat-input-no-user"),  # no request: as a missing input, which toxicity does not need
    pytest.param(Case(out(chat({"role": "assistant", "content": [{"type": "text", "text": "Hi."}, {"type": "image"}]})),
                      "scored"), id="chat-content-parts"),
    pytest.param(Case(without("context"), "invalid", "hallucination needs context"), id="missing-context"),
    pytest.param(Case(ctx(None), "invalid", "needs context"), id="none-context"),
    pytest.param(Case(ctx(""), "invalid", "needs context"), id="empty-context"),
    pytest.param(Case(ctx(" \n "), "invalid", "needs context"), id="whitespace-context"),
    pytest.param(Case(ctx([]), "invalid", "needs context"), id="empty-list-context"),
    pytest.param(Case(ctx([["nested"]]), "invalid", "context[0] must be a string, got list"), id="nested-context"),
    pytest.param(Case(ctx(["ok", 1]), "invalid", "context[1] must be a string, got int"), id="mixed-context"),
    pytest.param(Case(ctx(["ok", None]), "invalid", "context[1] must be a string, got NoneType"), id="none-in-context"),
    pytest.param(Case(ctx(3.5), "invalid", "context must be a string or a list of strings, got float"),
                 id="number-context"),
    pytest.param(Case(ctx({"doc": CONTEXT}), "invalid", "got dict"), id="dict-context"),
    pytest.param(Case({**GOOD, "input": None}, "scored", scorer="toxicity"), id="none-input"),
    pytest.param(Case({**GOOD, "input": math.nan}, "scored", scorer="toxicity"), id="nan-input"),
    pytest.param(Case({**GOOD, "input": 7}, "invalid", "input must be a string", "toxicity"), id="number-input"),
    pytest.param(Case({**GOOD, "run_id": None}, "scored"), id="none-run-id"),
    pytest.param(Case({**GOOD, "run_id": 7}, "scored"), id="number-run-id"),
    pytest.param(Case({**GOOD, "extra": {"a": [1]}, "score": 0.0}, "scored"), id="extra-keys"),
    pytest.param(Case("just a string", "invalid", "a run must be a dict with input and output, got str"),
                 id="run-is-a-string"),
    pytest.param(Case(None, "invalid", "got NoneType"), id="run-is-none"),
]


@pytest.mark.parametrize("case", RUN_CASES)
def test_bad_run_alone(case: Case, fake_judge: FakeJudgeFactory) -> None:
    """Alone, with on_invalid="raise": a clear error before any model call, or the judge's score."""
    fake = fake_judge(SCORES_ONE)
    scorer = scorer_for(case.scorer, fake)
    if case.expect == "invalid":
        with pytest.raises(InvalidRunError, match=f"run 0: .*{re.escape(case.match)}"):
            scorer.run_batch([case.run])
        assert fake.calls == []
        return
    (result,) = scorer.run_batch([case.run])
    if case.expect == "shortcut":
        assert fake.calls == [] and result.score == 0.0 and case.match in (result.reason or "")
    else:
        assert result.score == 1.0 and result.error is None and fake.calls


@pytest.mark.parametrize("case", RUN_CASES)
def test_bad_run_among_good_ones_is_recorded(case: Case, fake_judge: FakeJudgeFactory) -> None:
    """In a batch with on_invalid="record": the other rows are scored, this one says why not."""
    fake = fake_judge(SCORES_ONE)
    results = scorer_for(case.scorer, fake).run_batch([GOOD, case.run, GOOD], on_invalid="record")
    assert [results[0].score, results[2].score] == [1.0, 1.0]
    middle = results[1]
    if case.expect == "invalid":
        assert middle.score is None and middle.reason is None
        assert (middle.error or "").startswith("invalid run: ") and case.match in (middle.error or "")
    elif case.expect == "shortcut":
        assert middle.score == 0.0 and case.match in (middle.reason or "")
    else:
        assert middle.score == 1.0
    judged = 2 + (case.expect == "scored")
    assert len(fake.calls[0].prompts) == judged  # invalid and shortcut rows never reach the judge


def test_odd_rows_through_evaluate_keep_every_row(fake_judge: FakeJudgeFactory) -> None:
    """All dict-shaped RUN_CASES in one dataset: every row comes back, each with its outcome."""
    cases = [p.values[0] for p in RUN_CASES if isinstance(p.values[0].run, dict)]
    cases = [c for c in cases if c.scorer == "hallucination" and not isinstance(c.run.get("output"), bytes)]
    data = dataset_from_rows([{**c.run, "run_id": str(i)} for i, c in enumerate(cases)])
    ev = evaluate(data, [hallucination_scorer(fake_judge(SCORES_ONE))], columns=Columns(run_id="run_id"), batch_size=4)
    assert len(ev.dataset) == len(cases)
    scores, errors = ev.dataset["hallucination_score"], ev.dataset["hallucination_error"]
    for case, score, error in zip(cases, scores, errors, strict=True):
        if case.expect == "invalid":
            assert score is None and error.startswith("invalid run: "), case
        else:
            assert score == {"scored": 1.0, "shortcut": 0.0}[case.expect] and error is None, case


def test_evaluate_accepts_a_list_with_mixed_type_columns(fake_judge: FakeJudgeFactory) -> None:
    rows = [GOOD, {**GOOD, "output": 42}, {**GOOD, "context": [CONTEXT]}]
    ev = evaluate(rows, [hallucination_scorer(fake_judge(SCORES_ONE))])
    assert ev.dataset["hallucination_score"] == [1.0, None, 1.0]


UNICODE_CASES = [
    pytest.param("東京は日本の首都です。", "東京は日本の首都です。", id="cjk"),
    pytest.param("باريس هي عاصمة فرنسا", "باريس هي عاصمة فرنسا", id="arabic-rtl"),
    pytest.param("Paris 🇫🇷 👍🏽 👩\u200d👩\u200d👧", "Paris 🇫🇷 👍🏽 👩\u200d👩\u200d👧", id="emoji"),
    pytest.param("Cafe\u0301 n\u0303", "Café ñ", id="combining-marks-nfc"),
    pytest.param("Pa\u200bris \u202eeciN\u202c \u2066x\u2069", "Pa\u200bris \u202eeciN\u202c \u2066x\u2069",
                 id="zero-width-and-bidi-kept"),
    pytest.param("a\x00b\x07c\x7fd\x9be", "abcde", id="nul-bell-del-c1-dropped"),
    pytest.param("one\r\ntwo\rthree\x85four", "one\ntwo\nthree\nfour", id="cr-crlf-nel-newlines"),
    pytest.param("page\x0cbreak\x0bhere\x1fend", "page break here end", id="separator-controls-spaces"),
    pytest.param("bad \ud800 and \udfff here", "bad \ufffd and \ufffd here", id="lone-surrogates"),
    pytest.param("smile \ud83d\ude00", "smile 😀", id="surrogate-pair"),
    pytest.param("\ufeffBOM first", "\ufeffBOM first", id="bom-kept"),
    pytest.param("tab\tand\nnewline", "tab\tand\nnewline", id="tab-newline-kept"),
    pytest.param("\x00json:not json", "json:not json", id="json-cell-marker-lookalike"),
]


@pytest.mark.parametrize(("raw", "clean"), UNICODE_CASES)
def test_clean_text_keeps_meaning_and_is_utf8(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean
    clean_text(raw).encode("utf-8")  # strict: raises on any surrogate left behind


@pytest.mark.parametrize(("raw", "clean"), UNICODE_CASES)
def test_unicode_output_is_scored_and_shown_clean(raw: str, clean: str, fake_judge: FakeJudgeFactory) -> None:
    fake = fake_judge(SCORES_ONE)
    (result,) = hallucination_scorer(fake).run_batch([out(f"{raw} Paris is in France.")])
    assert result.score == 1.0
    shown = fake.calls[0].prompts[0][-1]["content"]
    assert clean in shown
    shown.encode("utf-8")


def test_several_mb_row_is_scored_stored_and_written(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    huge = "Paris is in France. 東京 🇫🇷 " * 120_000  # about 3.4 MB of UTF-8
    assert len(huge.encode("utf-8")) > 3_000_000
    rows = [GOOD, {**GOOD, "output": huge}, GOOD]
    store = ResultStore(tmp_path / "log")
    ev = evaluate(rows, [hallucination_scorer(fake_judge(SCORES_ONE))], store=store)
    assert ev.dataset["hallucination_score"] == [1.0, 1.0, 1.0]
    write_table(ev.dataset, tmp_path / "out.jsonl")
    assert len(ResultStore(tmp_path / "log").load()) == 3
    assert json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()[1])["output"] == huge


def window_error(prompt: Any) -> Generation:
    return Generation("", error="prompt of 9000 tokens plus 600 to generate exceeds the model's context window "
                      "of 8192 tokens")


JUDGE_CASES = [
    pytest.param(window_error, "exceeds the model's context window", "", id="longer-than-context-window"),
    pytest.param(lambda p: "I think there are no claims.", "invalid JSON: document", "I think", id="answer-not-json"),
    pytest.param(lambda p: {"claims": ["A."], "score": 0}, "invalid JSON: score: Extra inputs", "score",
                 id="answer-extra-key"),
    pytest.param(lambda p: Generation('{"claims":["A', finished=False), "cut off at the token limit", '{"claims"',
                 id="answer-cut-off-twice"),
    pytest.param(lambda p: "", "invalid JSON", "", id="answer-empty"),
]


@pytest.mark.parametrize(("answer", "error", "raw"), JUDGE_CASES)
def test_judge_failure_costs_one_row(answer: Callable[[Any], Any], error: str, raw: str,
                                     fake_judge: FakeJudgeFactory) -> None:
    """The judge fails on the one row whose output says TARGET; its neighbours are scored."""
    def claims(prompt: Any) -> Any:
        return answer(prompt) if "TARGET" in prompt[-1]["content"] else {"claims": ["A claim."]}

    judge = fake_judge(SCORES_ONE, Claims=claims)
    results = hallucination_scorer(judge).run_batch([GOOD, out("TARGET " + "x " * 50_000), GOOD])
    assert [r.score for r in results] == [1.0, None, 1.0]
    assert error in (results[1].error or "") and results[1].reason is None
    assert raw in (results[1].raw_output or "")


def _model_dir(tmp_path: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


SETUP_CASES = [
    pytest.param(lambda tmp: get_scorer_factory("bogus"), ValueError, "unknown scorer 'bogus'; known scorers:",
                 id="unknown-scorer"),
    *[
        pytest.param(lambda tmp, s=scale: hallucination_scorer(make_fake_judge(SCORES_ONE), scale=s), ValueError,
                     "scale must be", id=f"scale-{name}")
        for name, scale in [("zero", 0), ("negative", -1), ("nan", math.nan), ("inf", math.inf),
                            ("string", "1"), ("bool", True)]
    ],
    pytest.param(lambda tmp: evaluate([], [toxicity_scorer(make_fake_judge(SCORES_ONE))]), ValueError,
                 "the dataset has no rows", id="empty-dataset"),
    pytest.param(lambda tmp: evaluate([GOOD], [toxicity_scorer(make_fake_judge(SCORES_ONE))],
                                      columns=Columns(output="answer")),
                 ValueError, "unknown column 'answer'; the data has: input, output, context", id="unknown-column"),
    pytest.param(lambda tmp: evaluate([GOOD], [toxicity_scorer(make_fake_judge(SCORES_ONE))], batch_size=0),
                 ValueError, "batch_size must be at least 1", id="batch-size-zero"),
    pytest.param(lambda tmp: evaluate([GOOD], []), ValueError, "give at least one scorer", id="no-scorer"),
    pytest.param(lambda tmp: evaluate([GOOD], [toxicity_scorer(make_fake_judge(SCORES_ONE))] * 2), ValueError,
                 "each once", id="scorer-twice"),
    pytest.param(lambda tmp: check_model_dir(tmp / "nope"), ModelPathError, "does not exist.$",
                 id="model-missing"),
    pytest.param(lambda tmp: check_model_dir("meta-llama/Llama-3.1-8B-Instruct"), ModelPathError,
                 "hub id: localjudge never downloads", id="model-hub-id"),
    pytest.param(lambda tmp: check_model_dir(_model_dir(tmp, {"notes.txt": b"hi"}) / "notes.txt"), ModelPathError,
                 "is a file but not a .gguf model", id="model-plain-file"),
    pytest.param(lambda tmp: check_model_dir(_model_dir(tmp, {"notes.txt": b"hi"})), ModelPathError,
                 "not a model directory: it has no config.json", id="model-no-config"),
    pytest.param(lambda tmp: check_model_dir(_model_dir(tmp, {"config.json": b"{oops", "model.safetensors": b"x"})),
                 ModelPathError, "not a readable JSON model config", id="model-config-not-json"),
    pytest.param(lambda tmp: check_model_dir(_model_dir(tmp, {"config.json": b"[]", "model.safetensors": b"x"})),
                 ModelPathError, "must hold a JSON object", id="model-config-not-object"),
    pytest.param(lambda tmp: check_model_dir(_model_dir(tmp, {"config.json": b"{}"})), ModelPathError,
                 "no weights", id="model-no-weights"),
    pytest.param(lambda tmp: check_model_dir(_model_dir(tmp, {"config.json": b"{}", "model.bin": b"x"})),
                 ModelPathError, "only pickle weights", id="model-pickle-only"),
    pytest.param(lambda tmp: read_table(_model_dir(tmp, {"d.jsonl": b'{"output": "a"}\n["a list"]\n'}) / "d.jsonl"),
                 ValueError, "every row must be a JSON object", id="row-not-an-object"),
    pytest.param(lambda tmp: dataset_from_rows([GOOD, "a string row"]), ValueError,  # type: ignore[list-item]
                 "every row must be a dict", id="row-not-a-dict"),
    pytest.param(lambda tmp: dataset_from_rows([GOOD, {**GOOD, "output": b"x"}]), ValueError,
                 "a value cannot be stored in a table", id="bytes-in-a-table"),
    pytest.param(lambda tmp: read_table(_model_dir(tmp, {"d.csv": b""}) / "d.csv"), ValueError,
                 "needs a first line naming its columns", id="csv-without-header"),
    pytest.param(lambda tmp: read_table(_model_dir(tmp, {"d.csv": b"output,output\na,b\n"}) / "d.csv"), ValueError,
                 "names a column twice", id="csv-duplicate-header"),
    pytest.param(lambda tmp: read_table(_model_dir(tmp, {"d.csv": b"input,output\nq,a\nq,a,extra\n"}) / "d.csv"),
                 ValueError, "d.csv:3: 3 cells, but the first line names 2 columns", id="csv-row-too-long"),
    pytest.param(lambda tmp: read_table(_model_dir(tmp, {"d.parquet": b"PAR1 not really"}) / "d.parquet"),
                 ValueError, "d.parquet: not a readable parquet file", id="parquet-unreadable"),
]


@pytest.mark.parametrize(("call", "error", "match"), SETUP_CASES)
def test_setup_errors_are_clear(tmp_path: Path, call: Callable[[Path], Any], error: type, match: str) -> None:
    with pytest.raises(error, match=re.escape(match).replace(r"\$", "$")):
        call(tmp_path)


def test_csv_numbers_stay_text_and_empty_cells_are_missing(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    data = tmp_path / "d.csv"
    data.write_text("input,output,context\nHow much?,42,\nq,NA,c\nq,,c\n", encoding="utf-8")
    rows = read_table(data).to_list()
    assert [r["output"] for r in rows] == ["42", "NA", None]
    ev = evaluate(read_table(data), [toxicity_scorer(fake_judge(SCORES_ONE))])
    assert ev.dataset["toxicity_score"] == [1.0, 1.0, None]
    assert ev.dataset["toxicity_error"][2] == "invalid run: output is missing (None)"


def test_csv_with_a_byte_order_mark_and_short_rows(tmp_path: Path) -> None:
    """Excel writes a BOM before the header; a row with fewer cells has its last ones missing."""
    data = tmp_path / "d.csv"
    data.write_bytes("\ufeffinput,output,context\nq,a\n".encode("utf-8"))
    assert read_table(data).to_list() == [{"input": "q", "output": "a", "context": None}]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [GOOD, {**GOOD, "output": "Hi."}]), encoding="utf-8")
    return path


@pytest.fixture
def fake_cli_judge(monkeypatch: pytest.MonkeyPatch, fake_judge: FakeJudgeFactory) -> list[FakeJudge]:
    """Make the CLI build a fake judge instead of loading a model; records each one built."""
    built: list[FakeJudge] = []

    def build(args: Any, device: Any = None) -> FakeJudge:
        built.append(fake_judge(SCORES_ONE))
        return built[-1]

    monkeypatch.setattr(cli_model_flags, "build_judge", build)
    return built


CLI_CASES = [
    pytest.param(["--scorer", "toxicity,bogus"], "unknown scorer 'bogus'", id="cli-unknown-scorer"),
    pytest.param(["--scale", "0"], "scale must be a finite positive number, got 0.0", id="cli-scale-zero"),
    pytest.param(["--scale", "nan"], "scale must be a finite positive number, got nan", id="cli-scale-nan"),
    pytest.param(["--batch-size", "0"], "batch_size must be at least 1", id="cli-batch-size-zero"),
    pytest.param(["--output-col", "answer"], "unknown column 'answer'", id="cli-unknown-column"),
    pytest.param(["--data", "{tmp}/empty.jsonl"], "the dataset has no rows", id="cli-empty-data"),
    pytest.param(["--data", "{tmp}/rows.txt"], "unsupported data file rows.txt", id="cli-unsupported-data"),
]


@pytest.mark.parametrize(("argv", "message"), CLI_CASES)
def test_cli_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], fake_cli_judge: list[FakeJudge],
                                          data_file: Path, argv: list[str], message: str) -> None:
    (data_file.parent / "empty.jsonl").write_text("")
    (data_file.parent / "rows.txt").write_text("x")
    base = {"--model": "unused", "--scorer": "toxicity", "--data": str(data_file)}
    flags = dict(zip(argv[::2], [a.replace("{tmp}", str(data_file.parent)) for a in argv[1::2]], strict=True))
    args = [x for kv in {**base, **flags}.items() for x in kv]
    code = cli_main(["--quiet", "score", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert all(not j.calls for j in fake_cli_judge)


@pytest.mark.parametrize("flag", [["--scale", "0"], ["--batch-size", "0"]])
def test_cli_checks_numbers_before_loading_the_model(fake_cli_judge: list[FakeJudge], data_file: Path,
                                                     flag: list[str]) -> None:
    cli_main(["--quiet", "score", "--model", "unused", "--scorer", "toxicity", "--data", str(data_file), *flag])
    assert fake_cli_judge == []


@pytest.mark.parametrize("make", [
    pytest.param(lambda tmp: tmp / "missing", id="cli-model-missing"),
    pytest.param(lambda tmp: _model_dir(tmp, {"readme.txt": b"x"}), id="cli-model-not-a-model"),
    pytest.param(lambda tmp: _model_dir(tmp, {"config.json": b"{}", "pytorch_model.bin": b"x"}), id="cli-model-pickle"),
])
def test_cli_bad_model_path_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], data_file: Path,
                                               monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], Path]) -> None:
    stand_in_engine(monkeypatch, path_check_only)
    model = make(_fresh(tmp_path / "model"))
    code = cli_main(["--quiet", "score", "--model", str(model), "--scorer", "toxicity", "--data", str(data_file)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("localjudge: error: ") and err.count("\n") == 1


def _fresh(path: Path) -> Path:
    path.mkdir()
    return path


# --- A corrupted resume log: each bad line is skipped and its row scored again. -------------

def tox_answer(prompt: Any) -> dict[str, Any]:
    """Deterministic: a response mentioning 'idiot' is toxic (high), anything else is not."""
    toxic = "idiot" in prompt[-1]["content"]
    return {"verdicts": [{"verdict": "yes" if toxic else "no",
                          "severity": "high" if toxic else "none", "reason": "r"}]}


TOX_ANSWERS = {"ToxicityVerdicts": tox_answer}  # with the default reason, "ok"


ROWS = [{"input": f"q{i}", "output": ("you idiot " if i % 2 else "fine answer ") * (i + 1)} for i in range(6)]


def scored_file(path: Path, store: ResultStore | None = None, rows: list[dict[str, Any]] = ROWS) -> bytes:
    """Evaluate ROWS with the toxicity scorer and write the result file; its bytes."""
    fake = make_fake_judge(TOX_ANSWERS)
    write_table(evaluate(rows, [toxicity_scorer(fake)], batch_size=4, store=store).dataset, path)
    return path.read_bytes()


def corrupt(key: str, result: dict[str, Any], how: str) -> bytes:
    """A log line for `key` damaged in one way."""
    record = {"key": key, "result": result}
    changed = {
        "missing-field": {k: v for k, v in result.items() if k != "score"},
        "extra-field": {**result, "bogus": 1},
        "score-string": {**result, "score": "1.0"},
        "score-nan": {**result, "score": math.nan},
        "score-bool": {**result, "score": True},
        "score-and-no-error-mismatch": {**result, "score": None},
        "tokens-not-int": {**result, "new_tokens": "3"},
    }
    raw = {
        "garbage": b"garbage",
        "partial-json": json.dumps(record).encode()[:40],
        "json-array": b"[1, 2]",
        "json-null": b"null",
        "no-result": json.dumps({"key": key}).encode(),
        "key-not-string": json.dumps({"key": 1, "result": result}).encode(),
        "result-null": json.dumps({"key": key, "result": None}).encode(),
        "invalid-utf8": b"\xff\xfe" + json.dumps(record).encode()[2:],
        "nul-bytes": b"\x00" * 32,
    }
    if how in changed:
        return json.dumps({"key": key, "result": changed[how]}).encode()
    return raw[how]


STORE_CASES = [
    "garbage", "partial-json", "json-array", "json-null", "no-result", "key-not-string", "result-null",
    "missing-field", "extra-field", "score-string", "score-nan", "score-bool", "score-and-no-error-mismatch",
    "tokens-not-int", "invalid-utf8", "nul-bytes",
]


@pytest.mark.parametrize("how", STORE_CASES)
def test_corrupted_log_line_is_rescored_and_the_file_matches(tmp_path: Path, how: str,
                                                             fake_judge: FakeJudgeFactory) -> None:
    reference = scored_file(tmp_path / "ref.jsonl")
    store = ResultStore(tmp_path / "log")
    scored_file(tmp_path / "first.jsonl", store)
    lines = store.path.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    store.path.write_bytes(corrupt(first["key"], first["result"], how) + b"\n" + b"".join(lines[1:]))

    fake = fake_judge(TOX_ANSWERS)
    ev = evaluate(ROWS, [toxicity_scorer(fake)], batch_size=4, store=ResultStore(tmp_path / "log"))
    assert ev.summary["toxicity"].resumed == len(ROWS) - 1
    assert sum(len(c.prompts) for c in fake.calls if c.schema_names[0] == "ToxicityVerdicts") == 1
    write_table(ev.dataset, tmp_path / "resumed.jsonl")
    assert (tmp_path / "resumed.jsonl").read_bytes() == reference


# --- Crash safety and determinism. -------------------------------------------------------------

def test_crash_while_writing_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     fake_judge: FakeJudgeFactory) -> None:
    target = tmp_path / "out.jsonl"
    before = scored_file(target)
    dataset = evaluate(ROWS, [toxicity_scorer(fake_judge(TOX_ANSWERS))]).dataset
    real_dumps, calls = json.dumps, []

    def failing_dumps(*args: Any, **kwargs: Any) -> str:
        calls.append(1)
        if len(calls) == 3:  # mid-file: two rows already written to the temporary file
            raise RuntimeError("disk on fire")
        return real_dumps(*args, **kwargs)

    monkeypatch.setattr(tables.json, "dumps", failing_dumps)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_table(dataset, target)
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_crash_at_the_rename_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     suffix: str, fake_judge: FakeJudgeFactory) -> None:
    target = tmp_path / f"out{suffix}"
    dataset = evaluate(ROWS, [toxicity_scorer(fake_judge(TOX_ANSWERS))]).dataset
    write_table(dataset.select(range(2)), target)
    before = target.read_bytes()

    def failing_replace(src: Any, dst: Any) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(tables.os, "replace", failing_replace)
    with pytest.raises(OSError, match="rename failed"):
        write_table(dataset, target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_output_file_has_the_usual_permissions(tmp_path: Path) -> None:
    scored_file(tmp_path / "out.jsonl")
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    assert os.stat(tmp_path / "out.jsonl").st_mode & 0o777 == os.stat(plain).st_mode & 0o777


def test_partial_last_line_is_repaired_and_resume_gives_the_same_bytes(tmp_path: Path,
                                                                       fake_judge: FakeJudgeFactory) -> None:
    reference = scored_file(tmp_path / "ref.jsonl")
    store = ResultStore(tmp_path / "log")
    scored_file(tmp_path / "first.jsonl", store)
    data = store.path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    store.path.write_bytes(data[: last_start + (len(data) - last_start) // 2])  # killed mid-append

    repaired = ResultStore(tmp_path / "log")
    assert repaired.path.read_bytes() == data[:last_start]
    assert len(repaired.load()) == len(ROWS) - 1
    fake = fake_judge(TOX_ANSWERS)
    ev = evaluate(ROWS, [toxicity_scorer(fake)], batch_size=4, store=repaired)
    assert ev.summary["toxicity"].resumed == len(ROWS) - 1
    write_table(ev.dataset, tmp_path / "resumed.jsonl")
    assert (tmp_path / "resumed.jsonl").read_bytes() == reference
    assert len(ResultStore(tmp_path / "log").load()) == len(ROWS)


def test_two_runs_write_identical_files(tmp_path: Path) -> None:
    assert scored_file(tmp_path / "a.jsonl") == scored_file(tmp_path / "b.jsonl")
