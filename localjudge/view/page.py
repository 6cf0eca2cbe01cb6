"""The results page's stylesheet and script, as constants (`view.py` fills in the data).

The script reads the rows from the inert ``<script type="application/json" id="data">`` tag
and builds every element with `createElement` and `textContent`: no text from the data or the
judge is ever parsed as HTML. Filter state lives in the URL hash (``#q=...&scorer=...&unscored=1
&sort=score&dir=desc&row=N``), read on load, so a link (or a headless browser) opens a view.
Both constants are ASCII: the page's Content-Security-Policy allows exactly their sha256.
"""

from __future__ import annotations

PAGE_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1c2430;background:#f6f7f9}
header{padding:10px 16px;background:#1c2430;color:#fff}
header h1{font-size:18px;margin:0}header p{margin:2px 0 0;color:#c9d1dc;font-size:12px}
#hists{display:flex;flex-wrap:wrap;gap:12px;padding:10px 16px}
.hist{background:#fff;border:1px solid #d9dee5;border-radius:6px;padding:8px 10px;min-width:230px}
.hist h3{margin:0;font-size:13px}.hist .sub{color:#5b6675;font-size:12px}
.bars{display:flex;align-items:flex-end;gap:2px;height:70px;margin-top:6px;border-bottom:1px solid #9aa5b4}
.bar{flex:1;background:#4a7fd4;min-height:1px}.bar.zero{background:transparent}
.axis{display:flex;justify-content:space-between;color:#5b6675;font-size:11px}
#controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;padding:6px 16px}
#q{width:280px;padding:4px 6px}#count{color:#5b6675}
main{display:flex;gap:12px;padding:0 16px 16px;align-items:flex-start}
#tablewrap{flex:1;min-width:0;background:#fff;border:1px solid #d9dee5;border-radius:6px;overflow:auto}
table{border-collapse:collapse;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid #eceff3;text-align:left;vertical-align:top;white-space:nowrap}
th{position:sticky;top:0;background:#eef1f5;cursor:pointer;user-select:none;white-space:nowrap}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
tbody tr{cursor:pointer}tbody tr:hover{background:#f0f5ff}tr.sel{background:#dce8ff}
tr.unscored td.score{color:#b3261e;font-weight:600}td.num{font-variant-numeric:tabular-nums}
td.note{max-width:360px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#3a4452}
td.clip{max-width:240px;overflow:hidden;text-overflow:ellipsis}
tr.unscored td.note{color:#b3261e}tr.notscorable td.score,tr.notscorable td.note{color:#6b6b6b;font-style:italic}
#detail{flex:0 0 40%;max-width:40%;background:#fff;border:1px solid #d9dee5;border-radius:6px;padding:10px 12px;
 position:sticky;top:8px;max-height:calc(100vh - 24px);overflow:auto}
#detail h2{font-size:15px;margin:0 0 6px;overflow-wrap:anywhere}#detail h4{margin:10px 0 3px;font-size:13px}
#detail td{white-space:normal}
#detail pre{white-space:pre-wrap;word-break:break-word;background:#f6f7f9;padding:6px;margin:0;border-radius:4px}
#detail pre.error{background:#fdecea;color:#8c1d18}
dl{display:grid;grid-template-columns:auto 1fr;gap:2px 10px;margin:0}dt{color:#5b6675}dd{margin:0}
.verdict{font-weight:600;padding:0 5px;border-radius:3px;background:#e4e7eb}
.v-yes{background:#fbe0dd;color:#8c1d18}.v-no{background:#dcf1e0;color:#1d6b2f}.v-idk{background:#fff2cc}
button{cursor:pointer}
"""

PAGE_JS = r"""
"use strict";
(function () {
  var DATA = JSON.parse(document.getElementById("data").textContent);
  var LIMIT = 5000;
  var COLUMNS = [["source", "source"], ["id", "row id"], ["scorer", "scorer"], ["score", "score"],
    ["prob", "prob score"], ["kind", "error kind"], ["note", "error / reason"]];
  var shownColumns = COLUMNS.filter(function (c) { return c[0] !== "source" || DATA.sources.length > 1; });
  var state = {q: "", scorer: "", unscored: false, sort: "", desc: false, open: -1};
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function failed(r) { return r.score === null && r.kind !== "not_scorable"; }  // not scorable: not a failure
  function shownScore(r) {
    return r.score !== null ? fmt(r.score) : r.kind === "not_scorable" ? "not scorable" : "unscored";
  }
  function fmt(x) { return x === null || x === undefined ? "" : String(Math.round(x * 1000) / 1000); }

  var items = DATA.results.map(function (r, i) {
    var row = DATA.rows[r.row];
    var note = r.error || r.reason || "";
    var hay = [row.source, row.id, r.scorer, r.kind, r.error, r.reason, row.input, row.output, row.context]
      .filter(function (x) { return x !== null && x !== undefined; }).join("\n").toLowerCase();
    return {i: i, r: r, row: row, note: note, hay: hay,
      vals: {source: row.source, id: row.id, scorer: r.scorer, score: r.score, prob: r.prob, kind: r.kind,
        note: note}};
  });

  function readHash() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    state.q = p.get("q") || "";
    state.scorer = p.get("scorer") || "";
    state.unscored = p.get("unscored") === "1";
    state.sort = p.get("sort") || "";
    state.desc = p.get("dir") === "desc";
    var open = parseInt(p.get("row") || "", 10);
    state.open = isNaN(open) ? -1 : open;
    $("q").value = state.q;
    $("scorer").value = state.scorer;
    $("unscored").checked = state.unscored;
  }
  function writeHash() {
    var p = new URLSearchParams();
    if (state.q) p.set("q", state.q);
    if (state.scorer) p.set("scorer", state.scorer);
    if (state.unscored) p.set("unscored", "1");
    if (state.sort) p.set("sort", state.sort);
    if (state.sort && state.desc) p.set("dir", "desc");
    if (state.open >= 0) p.set("row", String(state.open));
    try { history.replaceState(null, "", "#" + p.toString()); } catch (e) { /* a file: URL may refuse */ }
  }

  function matches(it) {
    if (state.scorer && it.r.scorer !== state.scorer) return false;
    if (state.unscored && !failed(it.r)) return false;
    var terms = state.q.toLowerCase().split(/\s+/).filter(Boolean);
    return terms.every(function (t) { return it.hay.indexOf(t) >= 0; });
  }
  function compare(a, b) {
    if (state.sort) {
      var x = a.vals[state.sort], y = b.vals[state.sort];
      var xn = x === null || x === undefined || x === "", yn = y === null || y === undefined || y === "";
      if (xn !== yn) return xn ? 1 : -1;  // empty cells last, either way
      if (!xn) {
        var c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        if (c !== 0) return state.desc ? -c : c;
      }
    } else {
      var ua = failed(a.r), ub = failed(b.r);  // unscored (failed) rows first
      if (ua !== ub) return ua ? -1 : 1;
    }
    return a.i - b.i;
  }

  function renderHeader() {
    var tr = $("head");
    tr.replaceChildren();
    shownColumns.forEach(function (col) {
      var th = el("th", state.sort === col[0] ? (state.desc ? "desc" : "asc") : "", col[1]);
      th.addEventListener("click", function () {
        if (state.sort === col[0]) state.desc = !state.desc; else { state.sort = col[0]; state.desc = false; }
        update();
      });
      tr.appendChild(th);
    });
  }
  function cell(it, key) {
    if (key === "score") return el("td", "num score", shownScore(it.r));
    if (key === "prob") return el("td", "num", fmt(it.r.prob));
    if (key !== "note") {  // clipped to one line, whole in its tooltip: a 3,000-character id stays in its column
      var text = String(it.vals[key] || "");
      var td = el("td", "clip", text.slice(0, 300));
      if (text.length > 40) td.title = text.slice(0, 2000);
      return td;
    }
    var note = el("td", "note", it.note.slice(0, 300));
    note.title = it.note.slice(0, 2000);
    return note;
  }
  function renderRows(shown) {
    var body = document.createDocumentFragment();
    shown.slice(0, LIMIT).forEach(function (it) {
      var tr = el("tr", (failed(it.r) ? "unscored" : it.r.score === null ? "notscorable" : "") +
        (it.i === state.open ? " sel" : ""));
      tr.dataset.index = String(it.i);
      tr.tabIndex = 0;
      shownColumns.forEach(function (col) { tr.appendChild(cell(it, col[0])); });
      tr.addEventListener("click", function () { openDetail(it.i); });
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter") openDetail(it.i); });
      body.appendChild(tr);
    });
    $("rows").replaceChildren(body);
    var text = shown.length + " rows shown of " + items.length;
    if (shown.length > LIMIT) text += " (the first " + LIMIT + " listed: filter to see the rest)";
    $("count").textContent = text;
  }

  function renderHists(shown) {
    var box = $("hists");
    box.replaceChildren();
    DATA.scorers.forEach(function (name) {
      var all = items.filter(function (it) { return it.r.scorer === name && it.r.score !== null; });
      var lo = 0, hi = 1;  // a loop: Math.max.apply over 130,000 scores overflows the call stack
      all.forEach(function (it) { lo = Math.min(lo, it.r.score); hi = Math.max(hi, it.r.score); });
      var mine = shown.filter(function (it) { return it.r.scorer === name; });
      var scores = mine.filter(function (it) { return it.r.score !== null; }).map(function (it) { return it.r.score; });
      var bins = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
      scores.forEach(function (s) { bins[Math.min(9, Math.floor((s - lo) / (hi - lo) * 10))] += 1; });
      var top = Math.max.apply(null, bins.concat([1]));
      var mean = scores.length ? scores.reduce(function (a, b) { return a + b; }, 0) / scores.length : null;
      var card = el("div", "hist");
      card.appendChild(el("h3", "", name));
      var apart = mine.filter(function (it) { return it.r.kind === "not_scorable"; }).length;
      var failures = mine.length - scores.length - apart;
      card.appendChild(el("div", "sub", scores.length + " scored, " + failures + " unscored" +
        (apart ? ", " + apart + " not scorable" : "") + (mean === null ? "" : ", mean " + fmt(mean))));
      var bars = el("div", "bars");
      bins.forEach(function (n, k) {
        var bar = el("div", n ? "bar" : "bar zero");
        bar.style.height = (100 * n / top) + "%";
        bar.title = fmt(lo + (hi - lo) * k / 10) + " to " + fmt(lo + (hi - lo) * (k + 1) / 10) + ": " + n;
        bars.appendChild(bar);
      });
      card.appendChild(bars);
      var axis = el("div", "axis");
      axis.appendChild(el("span", "", fmt(lo)));
      axis.appendChild(el("span", "", fmt(hi)));
      card.appendChild(axis);
      box.appendChild(card);
    });
  }

  function section(parent, title, text, cls) {
    if (text === null || text === undefined || text === "") return;
    parent.appendChild(el("h4", "", title));
    parent.appendChild(el("pre", cls || "", text));
  }
  function firstStrings(obj) {  // the claims (or statements) a preprocess step listed
    if (!obj || typeof obj !== "object") return [];
    var keys = Object.keys(obj);
    for (var k = 0; k < keys.length; k++) {
      var v = obj[keys[k]];
      if (Array.isArray(v) && v.every(function (x) { return typeof x === "string"; })) return v;
    }
    return [];
  }
  function verdictTable(parent, steps, title) {
    var claims = firstStrings(steps.preprocess);
    var verdicts = steps.analyze && Array.isArray(steps.analyze.verdicts) ? steps.analyze.verdicts : [];
    if (!verdicts.length && steps.analyze && typeof steps.analyze.verdict === "string")  // direct mode
      verdicts = [Object.assign({claim: "(the whole output)"}, steps.analyze)];
    var n = Math.max(claims.length, verdicts.length);
    if (!n) return;
    parent.appendChild(el("h4", "", title || "claims \u2192 verdicts"));
    var table = el("table", "verdicts");
    var head = el("tr");
    ["#", "claim", "verdict", "reason"].forEach(function (h) { head.appendChild(el("th", "", h)); });
    table.appendChild(head);
    for (var k = 0; k < n; k++) {
      var v = verdicts[k] && typeof verdicts[k] === "object" ? verdicts[k] : {};
      var claim = v.claim !== undefined ? v.claim : v.statement !== undefined ? v.statement : claims[k];
      var tr = el("tr");
      tr.appendChild(el("td", "num", k + 1));
      tr.appendChild(el("td", "", claim === undefined ? "" : claim));
      var word = v.verdict === undefined ? "" : String(v.verdict);
      var cell = el("td");
      if (word) cell.appendChild(el("span", "verdict " + (["yes", "no", "idk"].indexOf(word) >= 0 ? "v-" + word : ""),
        word + (v.severity ? " (" + v.severity + ")" : "")));
      tr.appendChild(cell);
      tr.appendChild(el("td", "", v.reason === undefined ? "" : v.reason));
      table.appendChild(tr);
    }
    parent.appendChild(table);
  }
  function ensembleParts(analyze) {  // an ensemble row keeps both modes' results under analyze
    var ok = function (part) { return part && typeof part === "object" && !Array.isArray(part); };
    return ok(analyze) && ok(analyze.pipeline) && ok(analyze.direct) ? analyze : null;
  }
  function verdictWords(cell, part) {  // a mode's verdict(s), coloured as in the verdict tables
    var a = part.analyze && typeof part.analyze === "object" ? part.analyze : {};
    var words = typeof a.verdict === "string" ? [a.verdict] : Array.isArray(a.verdicts) ?
      a.verdicts.map(function (v) { return v && typeof v === "object" ? String(v.verdict) : ""; }) : [];
    words.forEach(function (word) {
      cell.appendChild(el("span", "verdict " + (["yes", "no", "idk"].indexOf(word) >= 0 ? "v-" + word : ""), word));
      cell.appendChild(document.createTextNode(" "));
    });
    if (part.error) cell.appendChild(el("span", "", "unscored: " + part.error));
  }
  function modesTable(parent, both, steps) {  // the ensemble: both modes side by side, then each one's verdicts
    parent.appendChild(el("h4", "", "ensemble: each mode"));
    var table = el("table", "modes");
    var head = el("tr");
    ["mode", "verdicts", "probability", "score"].forEach(function (h) { head.appendChild(el("th", "", h)); });
    table.appendChild(head);
    ["pipeline", "direct"].forEach(function (mode) {
      var part = both[mode], tr = el("tr"), words = el("td");
      tr.appendChild(el("td", "", mode));
      verdictWords(words, part);
      tr.appendChild(words);
      tr.appendChild(el("td", "num", fmt(part.probability)));
      tr.appendChild(el("td", "num", fmt(part.score)));
      table.appendChild(tr);
    });
    parent.appendChild(table);
    verdictTable(parent, {preprocess: steps.preprocess, analyze: both.pipeline.analyze},
      "pipeline: claims \u2192 verdicts");
    verdictTable(parent, {analyze: both.direct.analyze}, "direct: one verdict");
  }
  function renderDetail() {
    var box = $("detail");
    box.replaceChildren();
    var it = items[state.open];
    if (!it) { box.hidden = true; return; }
    box.hidden = false;
    var close = el("button", "", "close");
    close.addEventListener("click", function () { openDetail(-1); });
    box.appendChild(close);
    box.appendChild(el("h2", "", it.r.scorer + ": " + it.row.id));
    var steps = it.r.steps || {};
    var both = ensembleParts(steps.analyze);
    var dl = el("dl");
    [["source", it.row.source], ["row", it.row.index], [both ? "score (the pipeline's)" : "score", shownScore(it.r)],
      [both ? "prob score (the modes' mean)" : "prob score", fmt(it.r.prob)],
      ["error kind", it.r.kind || ""]].forEach(function (pair) {
      dl.appendChild(el("dt", "", pair[0]));
      dl.appendChild(el("dd", "", pair[1]));
    });
    box.appendChild(dl);
    section(box, "error", it.r.error, "error");
    section(box, "input", it.row.input);
    section(box, "output", it.row.output);
    section(box, "context", it.row.context);
    if (both) modesTable(box, both, steps); else verdictTable(box, steps);
    section(box, "reason", it.r.reason);
    section(box, "raw judge output", steps.raw_output, "error");
    var extra = Object.keys(it.row.extra);
    if (extra.length) {
      box.appendChild(el("h4", "", "other columns"));
      var more = el("dl");
      extra.forEach(function (k) {
        more.appendChild(el("dt", "", k));
        more.appendChild(el("dd", "", it.row.extra[k]));
      });
      box.appendChild(more);
    }
    var all = el("details");
    all.appendChild(el("summary", "", "every step and prompt (JSON)"));
    all.appendChild(el("pre", "", JSON.stringify(steps, null, 1)));
    box.appendChild(all);
  }
  function openDetail(i) { state.open = i; renderDetail(); update(); }

  function update() {
    var shown = items.filter(matches).sort(compare);
    renderHeader();
    renderRows(shown);
    renderHists(shown);
    writeHash();
  }

  $("sources").textContent = DATA.sources.length + " file(s): " + DATA.sources.join(", ") +
    (DATA.skipped && DATA.skipped.length ? "; left out, unreadable: " + DATA.skipped.join(", ") : "");
  DATA.scorers.forEach(function (name) {
    var option = el("option", "", name);
    option.value = name;
    $("scorer").appendChild(option);
  });
  $("q").addEventListener("input", function () { state.q = $("q").value; update(); });
  $("scorer").addEventListener("change", function () { state.scorer = $("scorer").value; update(); });
  $("unscored").addEventListener("change", function () { state.unscored = $("unscored").checked; update(); });
  window.addEventListener("hashchange", function () { readHash(); renderDetail(); update(); });
  readHash();
  renderDetail();
  update();
})();
"""
