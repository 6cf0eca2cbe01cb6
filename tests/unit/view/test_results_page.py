"""`localjudge view`: the page's content (self-contained, data inert), and the page in a real browser.

The browser tests run Debian's Chromium headless (`--dump-dom`, which prints the DOM after the
page's script ran) and fail, never skip, when it is missing: scripts/setup.sh installs it.
Rows are scored by the scripted FakeJudge, so the files have the real columns and steps.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from localjudge import evaluate, hallucination_scorer, toxicity_scorer
from localjudge.cli.main import main
from localjudge.evaluation.tables import dataset_from_rows, read_table, write_table
from localjudge.judge import ChatPrompt
from localjudge.view.page import PAGE_CSS, PAGE_JS
from localjudge.view.rows import embed_json, page_html, render_page, write_view
from tests.fakes import make_fake_judge

PAYLOADS = [  # each with words around it, so the claims step (not the terse-answer rule) reads it
    "<script>document.title='pwned'</script> is the answer here",
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"> is the answer here",
    "</script><script>document.body.setAttribute('data-pwned','2')</script> is the answer here",
]
CONTEXT = "The Eiffel Tower in Paris was completed in 1889."
ROWS = [
    {"run_id": "paris", "input": "Where is it?", "output": "The Eiffel Tower is in Paris.", "context": CONTEXT},
    {"run_id": "london", "input": "Where is it?", "output": "The Eiffel Tower is in London.", "context": CONTEXT},
    {"run_id": "broken", "input": "Where is it?", "output": "BROKEN judge output for this row", "context": CONTEXT},
    {"run_id": "no-context", "input": "Where is it?", "output": "In Paris.", "context": None},
    *({"run_id": f"xss-{k}", "input": "Where\u2028is it?", "output": p, "context": CONTEXT}
      for k, p in enumerate(PAYLOADS)),
]
SCORERS = ["hallucination", "toxicity"]
UNSCORED = {("broken", "hallucination"), ("no-context", "hallucination")}
TITLE = "localjudge view: scored.jsonl"


def _text(prompt: ChatPrompt) -> str:
    return "\n".join(str(m["content"]) for m in prompt)


def _payload(prompt: ChatPrompt) -> str | None:
    return next((p for p in PAYLOADS if p in _text(prompt)), None)


def scripted_judge():  # type: ignore[no-untyped-def]
    """Two claims per output (the payload itself among an attack row's), malformed JSON for
    "BROKEN"; Paris is supported (score 0), anything else half hallucinated (0.5)."""
    def claims(prompt: ChatPrompt) -> object:
        if "BROKEN" in _text(prompt):
            return "this is not JSON"
        where = "The tower is in Paris." if "is in Paris." in _text(prompt) else "The tower is somewhere."
        return {"claims": [_payload(prompt) or where, "It was completed in 1889."]}

    def verdicts(prompt: ChatPrompt) -> object:
        first = "supported" if "The tower is in Paris." in _text(prompt) else "unsupported"
        return {"verdicts": [{"verdict": first, "reason": _payload(prompt) or "checked"},
                             {"verdict": "supported", "reason": "the context says 1889"}]}

    return make_fake_judge(Claims=claims, HallucinationVerdicts=verdicts,
                           Reason=lambda prompt: {"reason": _payload(prompt) or "ok"})


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    judge = scripted_judge()
    ev = evaluate(dataset_from_rows(ROWS), [hallucination_scorer(judge), toxicity_scorer(judge)])
    path = tmp_path_factory.mktemp("view") / "scored.jsonl"
    write_table(ev.dataset, path)
    return path


@pytest.fixture(scope="module")
def page(scored: Path) -> Path:
    return write_view(scored)


def page_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert match, "no data script tag"
    return json.loads(match.group(1))


def result_index(run_id: str, scorer: str) -> int:
    """A result's place in the page's data (row by row, each row's scorers in order), the `#row=` to open it."""
    return [r["run_id"] for r in ROWS].index(run_id) * len(SCORERS) + SCORERS.index(scorer)


# --- the page's content ---------------------------------------------------------------------------------------


def test_page_is_self_contained(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html
    markup = re.sub(r'(<script type="application/json" id="data">).*?(</script>)', r"\1\2", html, flags=re.S)
    assert "src=x" in html and not re.search(r"\b(?:src|href|action)\s*=", markup), "the page links to something"
    assert "url(" not in html and "@import" not in html
    assert "content=\"default-src 'none'; script-src 'sha256-" in html  # nothing but the page's own script
    assert html.count("<script") == 2 and html.count("</script") == 2


def test_data_cannot_close_its_script_tag(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    raw = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S).group(1)  # type: ignore
    assert not set(raw) & {"<", ">", "&", "\u2028", "\u2029"}
    data = json.loads(raw)
    outputs = {row["id"]: row["output"] for row in data["rows"]}
    assert [outputs[f"xss-{k}"] for k in range(3)] == PAYLOADS  # the same text comes back
    assert data["rows"][4]["input"] == "Where\u2028is it?"
    assert embed_json({"a": "</script><!--&\u2029"}) == '{"a":"\\u003c/script\\u003e\\u003c!--\\u0026\\u2029"}'


def test_every_row_is_in_the_data(page: Path) -> None:
    data = page_data(page.read_text(encoding="utf-8"))
    assert data["sources"] == ["scored.jsonl"] and data["scorers"] == SCORERS
    assert [r["id"] for r in data["rows"]] == [r["run_id"] for r in ROWS]
    pairs = {(data["rows"][r["row"]]["id"], r["scorer"]): r for r in data["results"]}
    assert len(data["results"]) == len(pairs) == len(ROWS) * len(SCORERS)
    assert all(data["results"][result_index(*key)] is r for key, r in pairs.items())
    assert {key for key, r in pairs.items() if r["score"] is None} == UNSCORED
    assert pairs["broken", "hallucination"]["kind"] == "invalid_output"
    assert pairs["broken", "hallucination"]["steps"]["raw_output"] == "this is not JSON"
    assert pairs["no-context", "hallucination"]["kind"] == "invalid_run"
    london = pairs["london", "hallucination"]
    assert london["score"] == 0.5 and london["steps"]["preprocess"]["claims"][1] == "It was completed in 1889."
    assert [v["verdict"] for v in london["steps"]["analyze"]["verdicts"]] == ["yes", "no"]


def test_script_builds_no_html_from_text() -> None:
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
                 "createContextualFragment", "setAttribute(\"on", "srcdoc"):
        assert sink not in PAGE_JS, sink


def test_folders_bench_and_sweep(scored: Path, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    for cell in ("smollm2/example/hallucination.jsonl", "qwen/example/toxicity.parquet"):
        (sweep / cell).parent.mkdir(parents=True, exist_ok=True)
        write_table(read_table(scored), sweep / cell)
    (sweep / "summary.csv").write_text("model,scorer\n")
    log = sweep / "smollm2/example/hallucination.jsonl.progress"
    log.mkdir()
    (log / "rank-0.jsonl").write_text('{"key": "k", "resu')  # a line cut off by a crash: unreadable
    (sweep / "notes.jsonl").write_text('{"output": "no scorer columns"}\n')
    data = page_data(render_page(sweep))
    assert data["sources"] == ["qwen/example/toxicity.parquet", "smollm2/example/hallucination.jsonl"]
    assert len(data["results"]) == 2 * len(ROWS) * len(SCORERS)
    bench = tmp_path / "bench"
    write_table(read_table(scored), bench / "scored" / "halueval.jsonl")
    (bench / "report.json").write_text("{}")
    assert page_data(render_page(bench))["sources"] == ["scored/halueval.jsonl"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "summary.csv").write_text("model,scorer\n")
    with pytest.raises(ValueError, match="no scored rows"):
        render_page(empty)
    with pytest.raises(ValueError, match="no scorer columns"):
        render_page(sweep / "notes.jsonl")


def test_cli_view(scored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "runs" / "out.jsonl"
    copy.parent.mkdir()
    shutil.copy(scored, copy)
    assert main(["view", str(copy)]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "runs" / "out.jsonl.html")
    assert main(["view", str(copy.parent)]) == 0 and (copy.parent / "view.html").exists()
    capsys.readouterr()
    assert main(["view", str(copy), "--out", str(tmp_path / "page.html")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "page.html")
    assert main(["view", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and err.count("\n") == 1


def test_view_refuses_to_write_its_page_over_a_results_file(scored: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, item 8: `view out.jsonl --out out.jsonl` used to overwrite the results with HTML
    and exit 0. A page must be named .html, and is checked before anything is read."""
    copy = tmp_path / "out.jsonl"
    shutil.copy(scored, copy)
    before = copy.read_bytes()
    for out in (copy, tmp_path / "other.parquet", tmp_path):
        assert main(["view", str(copy), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("name a .html or .htm file" in err or "is a folder" in err), err
    assert copy.read_bytes() == before
    with pytest.raises(ValueError, match="must be named .html"):
        write_view(copy, copy)
    assert copy.read_bytes() == before


def test_an_unreadable_file_in_a_folder_is_left_out_with_a_note(scored: Path, tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """Issue 34, item 8: one .jsonl that does not read (a truncated copy) no longer aborts `view
    FOLDER`: the page shows the rest and names it; given by name, it is still an error."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(scored, folder / "good.jsonl")
    (folder / "broken.jsonl").write_text('{"run_id": "a", "toxicity_score": 1, "toxicity_error": null}\n{"cut')
    data = page_data(render_page(folder))
    assert data["sources"] == ["good.jsonl"] and data["skipped"] == ["broken.jsonl"]
    assert main(["view", str(folder)]) == 0
    assert "broken.jsonl: left out of the page, unreadable (" in caplog.text
    dom = Dom(dump_dom(folder / "view.html", "", tmp_path / "profile"))
    assert dom.text["sources"] == "1 file(s): good.jsonl; left out, unreadable: broken.jsonl"
    with pytest.raises(ValueError, match="not valid JSON"):
        render_page(folder / "broken.jsonl")


# --- in a real browser ----------------------------------------------------------------------------------------


class Dom(HTMLParser):
    """What the tests read from a dumped DOM: the table's rows, texts by element id, tags."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: list[int] = []
        self.text: dict[str, str] = {}
        self.tags: dict[str, int] = {}
        self.body: dict[str, str | None] = {}
        self.title = ""
        self.bars: list[str] = []  # the histograms' bars, by their titles
        self._open: list[tuple[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "body":
            self.body = found
        if "bar" in (found.get("class") or "").split():
            self.bars.append(found.get("title") or "")
        if tag == "tr" and any(t == "tbody" and i == "rows" for t, i in self._open):
            self.rows.append(int(found["data-index"] or -1))
        if tag not in ("meta", "input", "br", "img"):
            self._open.append((tag, found.get("id")))

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        for tag, ident in self._open:
            if ident:
                self.text[ident] = self.text.get(ident, "") + data
            if tag == "title":
                self.title += data


def dump_dom(page: Path, fragment: str, profile: Path) -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.fail("no `chromium` on PATH: the browser tests need it; run scripts/setup_chromium.sh "
                    "(it installs Debian's chromium package)")
    command = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", page.as_uri() + fragment]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-2000:]
    return done.stdout


def test_browser_shows_every_row_unscored_first(page: Path, tmp_path: Path) -> None:
    dom = Dom(dump_dom(page, "", tmp_path))
    data = page_data(page.read_text(encoding="utf-8"))
    total = len(ROWS) * len(SCORERS)
    assert dom.text["count"] == f"{total} rows shown of {total}"
    assert sorted(dom.rows) == list(range(total))
    assert {(data["rows"][data["results"][i]["row"]]["id"], "hallucination") for i in dom.rows[:2]} == UNSCORED
    assert dom.text["hists"].startswith("hallucination5 scored, 2 unscored, mean 0.4")
    assert len(dom.bars) == 20 and {"0 to 0.1: 1", "0.5 to 0.6: 4", "0.9 to 1: 0"} < set(dom.bars[:10])
    assert dom.bars[10] == "0 to 0.1: 7"  # toxicity: nothing toxic


@pytest.mark.parametrize(("fragment", "expected"), [
    ("#unscored=1", lambda key, score: key in UNSCORED),
    ("#scorer=toxicity", lambda key, score: key[1] == "toxicity"),
    ("#q=london%20tower&scorer=hallucination", lambda key, score: key == ("london", "hallucination")),
])
def test_browser_filters_from_the_hash(page: Path, tmp_path: Path, fragment: str, expected) -> None:  # type: ignore
    data = page_data(page.read_text(encoding="utf-8"))
    keys = [((data["rows"][r["row"]]["id"], r["scorer"]), r["score"]) for r in data["results"]]
    wanted = [i for i, (key, score) in enumerate(keys) if expected(key, score)]
    dom = Dom(dump_dom(page, fragment, tmp_path))
    assert sorted(dom.rows) == wanted
    assert dom.text["count"] == f"{len(wanted)} rows shown of {len(keys)}"


def test_browser_sorts_from_the_hash(page: Path, tmp_path: Path) -> None:
    data = page_data(page.read_text(encoding="utf-8"))
    dom = Dom(dump_dom(page, "#scorer=hallucination&sort=score&dir=desc", tmp_path))
    scores = [data["results"][i]["score"] for i in dom.rows]
    assert scores == [0.5, 0.5, 0.5, 0.5, 0.0, None, None]  # unscored (empty) cells last either way


@pytest.mark.parametrize("k", range(len(PAYLOADS)))
def test_browser_runs_no_text_from_the_data(page: Path, tmp_path: Path, k: int) -> None:
    """The attack row's detail is open: its output, claims, verdict reasons and reason all hold
    the payload, and the table shows it as the reason; all of it must be text."""
    html = dump_dom(page, f"#row={result_index(f'xss-{k}', 'hallucination')}", tmp_path)
    dom = Dom(html)
    assert "data-pwned" not in dom.body and dom.title == TITLE
    assert dom.tags.get("script") == 2 and "img" not in dom.tags
    detail = dom.text["detail"]
    assert detail.count(PAYLOADS[k]) >= 4, detail  # output, claim, verdict reason, reason (+ the prompts)
    assert PAYLOADS[k] in dom.text["rows"]
    assert PAYLOADS[k].replace("<", "&lt;").replace(">", "&gt;") in html  # escaped in the serialized DOM


def test_browser_shows_a_direct_mode_verdict(tmp_path: Path) -> None:
    judge = make_fake_judge(DirectVerdict={"verdict": "yes", "reason": "An insult aimed at the reader."})
    ev = evaluate(dataset_from_rows([{"input": "q", "output": "You idiot."}]), [toxicity_scorer(judge, mode="direct")])
    path = tmp_path / "direct.jsonl"
    write_table(ev.dataset, path)
    detail = Dom(dump_dom(write_view(path), "#row=0", tmp_path / "profile")).text["detail"]
    assert "(the whole output)yes" in detail and "An insult aimed at the reader." in detail


def test_browser_draws_the_histogram_of_150000_results(tmp_path: Path) -> None:
    """Issue 34, item 8: from about 130,000 results of one scorer `Math.max.apply` overflowed the
    call stack and the histograms vanished."""
    n = 150_000
    payload = {"sources": ["big.jsonl"], "skipped": [], "scorers": ["toxicity"],
               "rows": [{"source": "big.jsonl", "index": 0, "id": "0", "input": None, "output": "x", "context": None,
                         "extra": {}}],
               "results": [{"row": 0, "scorer": "toxicity", "score": (i % 10) / 10, "prob": None, "kind": None,
                            "error": None, "reason": None, "steps": None} for i in range(n)]}
    page = tmp_path / "big.html"
    page.write_text(page_html(payload, "big.jsonl"), encoding="utf-8")
    dom = Dom(dump_dom(page, "", tmp_path / "profile"))
    assert dom.text["hists"].startswith(f"toxicity{n} scored, 0 unscored, mean 0.45")
    assert dom.bars == [f"{k / 10:g} to {(k + 1) / 10:g}: {n // 10}" for k in range(10)]


def test_browser_keeps_a_long_id_in_its_column(tmp_path: Path) -> None:
    """Issue 34, item 8: a 3,000-character id pushed the score and reason off-screen. Text cells
    are clipped to one bounded line (the whole id in the tooltip and the row's detail)."""
    long_id = "x" * 3000
    ev = evaluate(dataset_from_rows([{"run_id": long_id, "input": "q", "output": "Hi."}]),
                  [toxicity_scorer(make_fake_judge())])
    path = tmp_path / "long.jsonl"
    write_table(ev.dataset, path)
    html = dump_dom(write_view(path), "", tmp_path / "profile")
    cell = re.search(r'<td class="clip" title="(x+)">(x+)</td>', html)
    assert cell is not None and len(cell.group(1)) == 2000 and len(cell.group(2)) == 300
    assert re.search(r"td\.clip\{max-width:\d+px;overflow:hidden;text-overflow:ellipsis\}", PAGE_CSS)
