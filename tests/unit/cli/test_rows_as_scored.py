"""Issue 49 item 4: `localjudge score` gives feedback within a batch. Rows are printed as each batch
is scored, not at the end; each bar's clock is redrawn every second while a judge call runs."""

from __future__ import annotations

import time
from typing import Any

import pytest

from localjudge.cli import model_flags
from localjudge.cli.main import main
from localjudge.cli.progress import TICK, Bars
from tests.conftest import EXAMPLES
from tests.fakes import make_fake_judge

EXAMPLE = EXAMPLES / "example.jsonl"


def printing_judge(capsys: pytest.CaptureFixture[str], seen: list[str]) -> Any:
    """The fake judge, noting at each call what the command had printed on stdout by then."""
    judge = make_fake_judge()
    generate = judge.generate

    def noted(prompts: Any, schemas: Any, *, max_new_tokens: int) -> Any:
        seen.append(capsys.readouterr().out)
        return generate(prompts, schemas, max_new_tokens=max_new_tokens)

    judge.generate = noted  # type: ignore[method-assign]
    return judge


def test_rows_are_printed_as_each_batch_is_scored(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    judge = printing_judge(capsys, seen)
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: judge)
    assert main(["--quiet", "score", "--model", "my-model", "--scorer", "toxicity,hallucination", "--data",
                 str(EXAMPLE), "--batch-size", "4"]) == 0
    out = "".join(seen) + capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("[")]
    # the scorers score each batch together (issue 47): toxicity's two judge steps ride with
    # hallucination's first two, and the first batch's rows are printed before the second batch's calls
    assert [len(call.schema_names) for call in judge.calls[:3]] == [8, 8, 4]
    assert "] toxicity: " in seen[3] and "] hallucination: " in seen[3] and "[" not in seen[2]
    assert len(rows) == len(set(rows)) == 2 * len(EXAMPLE.read_text().splitlines())  # each row once per scorer
    assert out.index("| scorer |") > out.index(rows[-1])  # the summary table last


def test_with_out_nothing_is_printed_per_row(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Any) -> None:
    monkeypatch.setattr(model_flags, "build_judge", lambda args, device=None: make_fake_judge())
    assert main(["--quiet", "score", "--model", "my-model", "--scorer", "toxicity", "--data", str(EXAMPLE),
                 "--out", str(tmp_path / "scored.jsonl")]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]


def test_a_bar_s_clock_moves_while_nothing_is_counted(capsys: pytest.CaptureFixture[str]) -> None:
    bars = Bars(8, enabled=True)
    bars("toxicity", 0)  # the scorer started; its first judge call is running
    time.sleep(TICK * 1.6)
    err = capsys.readouterr().err  # before `close`, which draws the bar a last time
    bars.close()
    assert "0/8 [00:01<" in err  # redrawn a second in, with no row counted


def test_lines_go_to_stdout_and_the_bars_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    bars = Bars(2, enabled=True)
    bars("toxicity", 1)
    bars.write("[a] toxicity: 0  fine")
    bars("toxicity", 1)
    bars.close()
    captured = capsys.readouterr()
    assert captured.out == "[a] toxicity: 0  fine\n" and "2/2" in captured.err
