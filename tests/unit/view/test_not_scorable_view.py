"""The results page shows runs declared not scorable apart from failures: their score cell says
"not scorable" (not "unscored"), the "unscored only" filter and the unscored-first order are the
failures', and each histogram card counts them on their own (in headless Chromium, as
test_results_page.py's browser tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localjudge import create_scorer, evaluate, not_scorable
from localjudge.evaluation.tables import write_table
from localjudge.view.rows import write_view
from tests.unit.view.test_results_page import Dom, dump_dom, page_data


def checked(run: Any, results: Any) -> Any:
    return not_scorable("no tool was called") if "tool" not in run.output else {}


def test_not_scorable_rows_are_shown_apart_from_failures(tmp_path: Path) -> None:
    scorer = create_scorer("tool_use").preprocess(checked).generate_score(
        lambda run, results: 1 / 0 if "broken" in run.output else 0.5)
    rows = [{"run_id": "scored", "input": "q", "output": "tool used"},
            {"run_id": "skipped", "input": "q", "output": "plain answer"},
            {"run_id": "failed", "input": "q", "output": "tool broken"}]
    path = tmp_path / "scored.jsonl"
    write_table(evaluate(rows, [scorer]).dataset, path)
    page = write_view(path)
    data = page_data(page.read_text(encoding="utf-8"))
    assert [r["kind"] for r in data["results"]] == [None, "not_scorable", "step_error"]
    dom = Dom(dump_dom(page, "", tmp_path))
    assert dom.text["hists"].startswith("tool_use1 scored, 1 unscored, 1 not scorable, mean 0.5")
    assert dom.rows == [2, 0, 1]  # the failure first; the not-scorable row is no failure
    assert "not scorable" in dom.text["rows"] and dom.text["rows"].count("unscored") == 1
    only = Dom(dump_dom(page, "#unscored=1", tmp_path))
    assert only.rows == [2]
