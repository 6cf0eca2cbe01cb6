"""The CLI's summary table has a `not_scorable` column beside `unscored` (failures only), and a
printed row says "not scorable (...)" rather than "unscored (...)"."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge import create_scorer, evaluate, not_scorable
from localjudge.cli.score import print_rows
from localjudge.cli.summary import markdown_table, summary_rows
from localjudge.evaluation import Columns


def check(run: Any, results: Any) -> Any:
    return not_scorable("empty") if run.output == "-" else {}


def test_summary_and_rows_show_not_scorable_apart(capsys: pytest.CaptureFixture[str]) -> None:
    scorer = create_scorer("c").preprocess(check).generate_score(
        lambda run, results: 1 / 0 if run.output == "boom" else 1.0)
    ev = evaluate([{"output": "fine"}, {"output": "-"}, {"output": "boom"}], [scorer])
    (row,) = summary_rows(ev.summary)
    assert (row["scored"], row["unscored"], row["not_scorable"]) == (1, 1, 1)
    assert "| scored | unscored | not_scorable |" in markdown_table([row])
    print_rows(ev, ["c"], Columns())
    out = capsys.readouterr().out
    assert "not scorable (preprocess step: not scorable: empty)" in out and out.count("unscored (") == 1
    assert [line.split("]")[0] for line in out.splitlines()] == ["[0", "[1", "[2"]  # no run_id: the row number
