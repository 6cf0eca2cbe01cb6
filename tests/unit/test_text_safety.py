"""The storing rule (`localjudge.text_safety`): what localjudge stores or sends is valid UTF-8
with no NUL, and nothing else about the text changes. Results clean themselves, so every store
(the resume log, an output file, the live store) gets safe text from a judge's odd answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.evaluation import ResultStore
from localjudge.result import ScoreResult
from localjudge.text_safety import safe_text, safe_value


@pytest.mark.parametrize(("raw", "safe"), [
    pytest.param("plain text, 東京 🇫🇷", "plain text, 東京 🇫🇷", id="unchanged"),
    pytest.param("a \ud83d b \udfff", "a \ufffd b \ufffd", id="lone-surrogates"),
    pytest.param("smile \ud83d\ude00", "smile 😀", id="surrogate-pair-joined"),
    pytest.param("nul\x00here", "nulhere", id="nul-dropped"),
    pytest.param("\x00json:5", "json:5", id="json-cell-lookalike"),
    pytest.param("tab\t\x07bell\r\n", "tab\t\x07bell\r\n", id="other-controls-kept"),
])
def test_safe_text(raw: str, safe: str) -> None:
    assert safe_text(raw) == safe
    safe.encode("utf-8")  # strict


def test_safe_value_reaches_keys_and_nested_items() -> None:
    value = {"k\ud800": ["v\x00", ("t\udfff", 3)], "n": None, "x": 1.5}
    assert safe_value(value) == {"k\ufffd": ["v", ("t\ufffd", 3)], "n": None, "x": 1.5}


def test_a_result_holding_unsafe_text_is_stored_safe(tmp_path: Path) -> None:
    result = ScoreResult.unscored("run\udc00", "toxicity", "invalid_output", "judge said \x00\ud83d",
                                  raw_output='{"verdicts": "\ud83d"}', analyze_step_result={"v\ud800": ["\x00no"]})
    assert (result.run_id, result.error) == ("run\ufffd", "judge said \ufffd")
    assert result.analyze_step_result == {"v\ufffd": ["no"]}
    store = ResultStore(tmp_path / "log")
    store.append([("key", result)])  # the resume log encodes UTF-8 strictly
    line = json.loads(store.path.read_text(encoding="utf-8"))
    assert line["result"]["raw_output"] == '{"verdicts": "\ufffd"}'
