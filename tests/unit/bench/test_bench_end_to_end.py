"""`localjudge bench` end to end on scripted fake judges whose answers are known from the labels."""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from localjudge.bench.data import BENCHMARKS, custom_benchmark, is_positive, load_benchmark, select_benchmarks
from localjudge.bench.metrics import balanced_accuracy, best_threshold, split_halves
from localjudge.bench.run import calibration, measure, run_bench
from localjudge.bench.types import JUDGE, JUDGE_PROB, Estimate
from localjudge.cli.bench import add_bench_parser, run_bench_command
from localjudge.evaluation.dataset_runs import Columns
from localjudge.judge import FakeJudge, Generation
from localjudge.samples.runs import clean_text
from localjudge.scorers.judged import hallucination
from localjudge.scorers.judged.toxicity import statements_of
from localjudge.scoring.prompting import neutralise
from tests.conftest import ROOT
from tests.fakes import Answer, FakeJudgeFactory, toxicity_statements, toxicity_verdicts

FAST = {"n_boot": 200}  # bootstrap resamples: enough to test, quick


def key(text: str) -> str:
    """An output as the judge sees it inside its prompt block."""
    return neutralise(clean_text(text)).strip()


def block_text(prompt: list[Mapping[str, str]], name: str) -> str:
    return prompt[-1]["content"].split(f"<<<{name}\n", 1)[1].rsplit(f"\n{name}>>>", 1)[0].strip()


def labeled_answers(positives: Mapping[str, int], *, invert: bool = False, probs: bool = True) -> dict[str, Answer]:
    """Fake-judge answers from the labels: verdict "yes" (hallucinated / faithful / toxic)
    exactly for label-1 outputs, or exactly for label-0 ones when `invert`; reason the default, "ok".

    The claims step turns the output into one claim, "P" or "N", that the verdict step reads
    (a terse output's one claim is made by rule: its label is read off the output it quotes).
    With `probs`, verdicts carry label probabilities (0.8 / 0.3 for "yes").
    """

    def says_yes(is_positive: bool) -> bool:
        return is_positive != invert

    def claim_is_positive(claim: str) -> bool:
        if claim in ("P", "N"):
            return claim == "P"
        said = re.fullmatch(r'The answer to ".*" is: (.*)', claim, re.S)
        answer = said.group(1) if said else claim
        return bool(positives.get(key(answer), positives.get(key(answer.removesuffix(".")))))

    def verdict(prompt: list[Mapping[str, str]]) -> Generation:
        claims = prompt[-1]["content"].split("Claims to check against the context:\n", 1)[1]
        yes = says_yes(claim_is_positive(claims.split("\nGive exactly", 1)[0].removeprefix("1. ")))
        # hallucination's judge answers in words (Mastra's "yes" is its "unsupported")
        pos, neg = ("unsupported", "supported") if "unsupported" in str(prompt[0]["content"]) else ("yes", "no")
        text = json.dumps({"verdicts": [{"verdict": pos if yes else neg, "reason": "r"}]})
        label_probs = {pos: 0.8, neg: 0.2} if yes else {pos: 0.3, neg: 0.7}
        return Generation(text, label_probs=(label_probs,) if probs else ())

    by_statements = {tuple(statements_of(text)): label for text, label in positives.items()}

    def toxicity(prompt: list[Mapping[str, str]]) -> dict[str, Any]:
        yes = says_yes(bool(by_statements[tuple(toxicity_statements(prompt))]))
        return toxicity_verdicts(prompt, lambda statement: yes)

    return {
        "Claims": lambda p: {"claims": ["P" if positives[block_text(p, "TEXT")] else "N"]},
        "HallucinationVerdicts": verdict,
        "FaithfulnessVerdicts": verdict,
        "ToxicityVerdicts": toxicity,
    }


# The benchmarks of the claim and toxicity scorers, which `labeled_answers` scripts.
SCRIPTED = ("begin", "halueval_qa", "truthfulqa", "davidson", "toxigen")


def builtin_labels() -> dict[str, int]:
    labels: dict[str, int] = {}
    for bench in (BENCHMARKS[name] for name in SCRIPTED):
        for line in bench.path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            assert labels.setdefault(key(row["output"]), row["label"]) == row["label"]  # no output with two labels
    return labels


def rows_of(report: Any, benchmark: str) -> dict[str, Any]:
    result = next(r for r in report.results if r.benchmark == benchmark)
    return {row.name: row for row in result.table}


def test_builtin_files_are_balanced_in_every_even_prefix() -> None:
    for bench in BENCHMARKS.values():
        _, labels = load_benchmark(bench)
        assert len(labels) == 200 and sum(labels) == 100
        assert all(sum(labels[:k]) == k // 2 for k in range(0, 201, 2)), bench.name
        assert (bench.path.parent / "LICENSE").exists() and (bench.path.parent / "README.md").exists()


def test_perfect_judge_scores_auc_one(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    report = run_bench(fake_judge(labeled_answers(builtin_labels())), SCRIPTED, limit=20, out_dir=tmp_path, **FAST)
    assert [r.benchmark for r in report.results] == list(SCRIPTED)
    for result in report.results:
        rows = {row.name: row for row in result.table}
        assert (result.rows, result.scored, result.unscored) == (20, 20, 0)
        assert rows[JUDGE].auc == Estimate(1.0, 1.0, 1.0)
        assert rows[JUDGE].balanced_accuracy == Estimate(1.0, 1.0, 1.0)
        assert rows["majority class"].auc.value == 0.5
        if result.scorer == "toxicity":  # the toxicity fake gives no label probabilities
            assert JUDGE_PROB not in rows and "no prob score" in " ".join(result.notes)
        else:
            assert rows[JUDGE_PROB].auc.value == 1.0 and rows[JUDGE_PROB].n == 20
            assert any("overlap" in name for name in rows)
    assert rows_of(report, "toxigen")[JUDGE].beats_baselines == "YES"


def test_inverted_judge_scores_auc_zero_and_is_flagged(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(labeled_answers(builtin_labels(), invert=True))
    report = run_bench(judge, ["begin", "davidson"], limit=20, out_dir=tmp_path, **FAST)
    for result in report.results:
        rows = {row.name: row for row in result.table}
        assert rows[JUDGE].auc.value == 0.0 and rows[JUDGE].balanced_accuracy.value == 0.0  # type: ignore[union-attr]
        assert rows[JUDGE].beats_baselines == "NO"
    markdown = (tmp_path / "report.md").read_text()
    assert "**NO**" in markdown


def test_report_files_are_written(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(labeled_answers(builtin_labels()))
    report = run_bench(judge, ["halueval_qa"], limit=10, out_dir=tmp_path, **FAST)
    for name in ("report.md", "report.json", "report.html", "halueval_qa-roc.png", "halueval_qa-hist.png",
                 "scored/halueval_qa.jsonl"):
        assert (tmp_path / name).exists() and name in report.files, name
    assert (tmp_path / "halueval_qa-roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((tmp_path / "report.json").read_text())
    ident = data["identity"]
    prompts = hallucination.hallucination_scorer(FakeJudge({})).prompt_hash
    assert ident["judge"] == "fake-judge"
    assert ident["scorers"] == {"hallucination": f"{hallucination.VERSION}@{prompts}"}
    assert {"localjudge-evals", "torch", "transformers", "outlines", "datasets"} <= set(ident["libraries"])
    assert ident["libraries"]["localjudge-evals"] is not None, "the distribution's metadata is read by its name"
    assert ident["seed"] == 0 and ident["limit"] == 10 and ident["elapsed_seconds"] >= 0
    assert ident["started_utc"].endswith("+00:00") and len(ident["benchmarks"]["halueval_qa"]["sha256"]) == 64
    table = data["results"][0]["table"]
    assert [row["name"] for row in table] == [JUDGE, JUDGE_PROB, "majority class", "1 - word overlap",
                                              "output length"]
    assert "data:image/png;base64," in (tmp_path / "report.html").read_text()
    assert "## halueval_qa (hallucination scorer" in (tmp_path / "report.md").read_text()
    assert len((tmp_path / "scored" / "halueval_qa.jsonl").read_text().splitlines()) == 10


CUSTOM = [
    {"q": f"q{i}", "answer": text, "ref": "The sky is blue. Grass is green.", "human": label}
    for i, (text, label) in enumerate([  # 5+ words each: terse answers skip the claims step
        ("The sky above is blue.", "no"), ("The grass here is green.", "no"), ("The sky above is green.", "yes"),
        ("Grass is purple and loud.", "yes"), ("Blue sky over green grass.", "no"),
        ("Cows fly at night, always.", "YES"),
        ("", "no"),  # empty output: decided without the judge, counts with its hard score
    ])
]
CUSTOM_COLUMNS = Columns(input="q", output="answer", context="ref")


def write_custom(tmp_path: Path) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in CUSTOM))
    return path


def custom_answers(**kwargs: Any) -> dict[str, Answer]:
    return labeled_answers({key(r["answer"]): int(r["human"].lower() == "yes") for r in CUSTOM}, **kwargs)


def test_custom_labeled_file(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    bench = custom_benchmark(write_custom(tmp_path), scorer="hallucination", label_col="human", positive="yes",
                             columns=CUSTOM_COLUMNS)
    report = run_bench(fake_judge(custom_answers()), [bench], out_dir=tmp_path / "out", **FAST)
    (result,) = report.results
    rows = {row.name: row for row in result.table}
    assert (result.benchmark, result.rows, result.positives, result.scored) == ("mine", 7, 3, 7)
    assert rows[JUDGE].auc.value == 1.0 and rows[JUDGE_PROB].auc.value == 1.0 and rows[JUDGE_PROB].n == 7
    assert any("1 row(s) were decided without the analyze step" in note for note in result.notes)


def test_unscored_rows_are_left_out_and_counted(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    answers = custom_answers()
    claims = answers["Claims"]
    answers["Claims"] = lambda p: "{not json" if "purple" in block_text(p, "TEXT") else claims(p)  # type: ignore[operator]
    judge = fake_judge(answers)
    bench = custom_benchmark(write_custom(tmp_path), scorer="hallucination", label_col="human", positive="yes",
                             columns=CUSTOM_COLUMNS)
    (result,) = run_bench(judge, [bench], out_dir=tmp_path / "out", **FAST).results
    assert (result.scored, result.unscored) == (6, 1)
    assert {row.n for row in result.table} == {6}
    assert "1 of 7 rows are unscored" in " ".join(result.notes)
    assert [reason.split(":")[0] for reason in result.errors] == ["preprocess step"]


def test_bad_labels_fail_before_any_judge_call(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    path = write_custom(tmp_path)
    judge = fake_judge(custom_answers())
    typo = custom_benchmark(path, scorer="hallucination", label_col="human", positive="maybe", columns=CUSTOM_COLUMNS)
    with pytest.raises(ValueError, match="every row is negative with positive value 'maybe'.*'no', 'yes', 'YES'"):
        run_bench(judge, [typo])
    with pytest.raises(ValueError, match="unknown label column 'label'"):
        run_bench(judge, [custom_benchmark(path, scorer="hallucination", columns=CUSTOM_COLUMNS)])
    assert judge.calls == []


def test_selection_errors() -> None:
    assert [b.name for b in select_benchmarks(scorers=["toxicity"])] == ["davidson", "toxigen"]
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        select_benchmarks(["nope"])
    with pytest.raises(ValueError, match="measures the faithfulness scorer"):
        select_benchmarks(["begin"], ["toxicity"])
    with pytest.raises(ValueError, match="unknown scorer"):
        select_benchmarks(scorers=["bogus"])


def test_positive_value_matching() -> None:
    assert is_positive(1, "1") and is_positive("1.0", 1) and is_positive("Yes", "yes") and is_positive(True, "true")
    assert not is_positive(0, "1") and not is_positive("no", "yes")


def test_flags_compare_with_the_best_baseline_on_the_same_rows() -> None:
    labels = [0, 0, 1, 1]
    series = {JUDGE: ([0.1, 0.4, 0.35, 0.8], labels), "word overlap": ([0.1, 0.2, 0.3, 0.4], labels)}
    judged = {JUDGE: [0, 1, 2, 3]}
    overlap = {0: 0.1, 1: 0.2, 2: 0.3, 3: 0.4}
    table = measure(series, {"word overlap": overlap}, judged, n_boot=200)
    judge = table[0]
    assert judge.auc.value == 0.75 and judge.best_baseline_auc == 1.0 and judge.beats_baselines == "NO"
    weak = {0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5}  # a constant baseline: AUC 0.5
    judge = measure({**series, "word overlap": ([0.5] * 4, labels)}, {"word overlap": weak}, judged, n_boot=200)[0]
    assert judge.best_baseline_auc == 0.5 and judge.beats_baselines == "UNCLEAR"  # 4 rows: a wide interval


def bench_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="localjudge")
    parser.add_argument("--quiet", action="store_true")
    add_bench_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["--quiet", "bench", "--model", "unused-with-a-fake-judge", *argv])


def test_cli_on_builtin_benchmarks(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   fake_judge: FakeJudgeFactory) -> None:
    args = bench_args("--benchmark", "toxigen", "--limit", "8", "--bootstrap", "100", "--out-dir", str(tmp_path))
    assert args.func is run_bench_command
    assert run_bench_command(args, judge=fake_judge(labeled_answers(builtin_labels()))) == 0
    out = capsys.readouterr().out
    assert "| toxigen | toxicity | 8/8 | 1.00 [1.00, 1.00] |" in out
    assert (tmp_path / "report.md").exists() and (tmp_path / "toxigen-roc.png").exists()


def test_cli_on_a_custom_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_judge: FakeJudgeFactory) -> None:
    args = bench_args("--data", str(write_custom(tmp_path)), "--scorer", "hallucination", "--label-col", "human",
                      "--positive", "yes", "--input-col", "q", "--output-col", "answer", "--context-col", "ref",
                      "--name", "own", "--bootstrap", "100", "--out-dir", str(tmp_path / "out"))
    assert run_bench_command(args, judge=fake_judge(custom_answers())) == 0
    assert "| own | hallucination | 7/7 |" in capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["identity"]["benchmarks"]["own"]["positive"] == "yes"


@pytest.mark.parametrize(("argv", "message"), [
    (["--data", "x.jsonl", "--positive", "1"], "exactly one --scorer"),
    (["--data", "x.jsonl", "--scorer", "toxicity"], "needs --positive"),
    (["--data", "x.jsonl", "--scorer", "toxicity", "--positive", "1", "--benchmark", "begin"], "not both"),
    (["--data", "missing.jsonl", "--scorer", "toxicity", "--positive", "1"], "does not exist"),
])
def test_cli_errors_before_the_model(argv: list[str], message: str, fake_judge: FakeJudgeFactory) -> None:
    from localjudge.cli.shared import CliError

    judge = fake_judge(custom_answers())
    with pytest.raises((CliError, ValueError, FileNotFoundError), match=message):
        run_bench_command(bench_args(*argv), judge=judge)
    assert judge.calls == []


def test_one_label_left_after_unscored_rows_is_reported_not_a_crash(tmp_path: Path,
                                                                    fake_judge: FakeJudgeFactory) -> None:
    answers = custom_answers()
    claims = answers["Claims"]
    positive = {key(r["answer"]) for r in CUSTOM if r["human"].lower() == "yes"}
    answers["Claims"] = lambda p: "{bad" if block_text(p, "TEXT") in positive else claims(p)  # type: ignore[operator]
    bench = custom_benchmark(write_custom(tmp_path), scorer="hallucination", label_col="human", positive="yes",
                             columns=CUSTOM_COLUMNS)
    (result,) = run_bench(fake_judge(answers), [bench], out_dir=tmp_path / "out", **FAST).results
    assert (result.scored, result.unscored) == (4, 3)
    judge = {row.name: row for row in result.table}[JUDGE]
    assert judge.auc == Estimate(None) and judge.beats_baselines == "n/a"
    assert "Only one label among the scored rows" in " ".join(result.notes)
    assert "| judge score | judge | 4 | n/a | n/a | n/a |" in (tmp_path / "out" / "report.md").read_text()


SOURCE = os.environ.get("LOCALJUDGE_BENCH_SOURCE")  # the upstream files, where a machine has them
MAKE = ROOT / "scripts" / "make_bench_data.py"


def make_bench_data(source: Path, out: Path) -> None:
    subprocess.run([sys.executable, str(MAKE), "--source", str(source), "--out", str(out)], check=True,
                   capture_output=True, timeout=300)


@pytest.mark.skipif(not SOURCE, reason="set LOCALJUDGE_BENCH_SOURCE to the upstream data folder")
def test_shipped_subsets_are_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    make_bench_data(Path(SOURCE or ""), tmp_path)
    for bench in BENCHMARKS.values():
        assert (tmp_path / bench.name / bench.path.name).read_bytes() == bench.path.read_bytes(), bench.name
        assert (tmp_path / bench.name / "LICENSE").read_bytes() == (bench.path.parent / "LICENSE").read_bytes()


def synthetic_source(root: Path) -> Path:
    """Each upstream file's format, 240 rows, labels alternating."""
    def write_csv(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle, delimiter=delimiter).writerows([header, *rows])
        (path.parent / "LICENSE").write_text(f"license of {path.parent.name}\n")

    n = range(240)
    write_csv(root / "begin" / "begin_dev_wow.tsv", ["message", "response", "knowledge", "begin_label", "model_name"],
              [[f"m{i}", f"r{i}", f"k{i}", "Fully attributable" if i % 2 else "Generic", "m"] for i in n], "\t")
    (root / "begin" / "NOTICE").write_text("notice\n")
    (root / "halueval").mkdir()
    (root / "halueval" / "qa_one-turn_data.json").write_text("".join(json.dumps(
        {"question": f"q{i}", "right_answer": f"a{i}", "hallucinated_answer": f"h{i}", "knowledge": f"k{i}"}) + "\n"
        for i in n))
    (root / "halueval" / "LICENSE").write_text("license of halueval\n")
    write_csv(root / "truthfulqa" / "TruthfulQA.csv",
              ["Question", "Best Answer", "Correct Answers", "Best Incorrect Answer", "Category"],
              [[f"q{i}", f"b{i}", f"b{i}; c{i}; I have no comment", f"w{i}", "c"] for i in n])
    write_csv(root / "davidson_hate_offensive" / "labeled_data.csv", ["", "tweet", "class"],
              [[str(i), f"t{i} &amp;", "2" if i % 2 == 0 else str(i // 2 % 2)] for i in n])
    write_csv(root / "toxigen_demonstrations" / "toxigen_demonstrations.csv", ["text", "label", "target_group"],
              [[f"t{i}", "hate" if i % 2 else "neutral", "g"] for i in n])
    return root


def test_make_bench_data_is_deterministic_balanced_and_licensed(tmp_path: Path) -> None:
    """The builder on every upstream format (synthetic rows): same bytes twice, 100 rows per
    label, any first 2k rows hold k of each, the upstream LICENSE (and NOTICE) copied beside."""
    source = synthetic_source(tmp_path / "source")
    make_bench_data(source, tmp_path / "a")
    make_bench_data(source, tmp_path / "b")
    for bench in BENCHMARKS.values():
        built = tmp_path / "a" / bench.name / bench.path.name
        assert built.read_bytes() == (tmp_path / "b" / bench.name / bench.path.name).read_bytes(), bench.name
        rows = [json.loads(line) for line in built.read_text().splitlines()]
        assert len(rows) == 200 and len({r["id"] for r in rows}) == 200, bench.name
        assert all(sum(r["label"] for r in rows[: 2 * k]) == k for k in range(101)), bench.name
        columns = {"id", "input", "output", "context", "label", "source_label", "group"}
        if bench.scorer in ("answer_similarity", "context_recall"):  # ground-truth scorers
            columns.add("ground_truth")
        assert all(set(r) == columns for r in rows), bench.name
        assert (tmp_path / "a" / bench.name / "LICENSE").read_text().startswith("license of ")
    assert (tmp_path / "a" / "begin" / "NOTICE").exists()


def test_report_has_calibration_and_claim_sources(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    report = run_bench(fake_judge(labeled_answers(builtin_labels())), ["begin", "davidson"], limit=20,
                       out_dir=tmp_path, **FAST)
    begin, davidson = report.results
    prob = begin.calibration[JUDGE_PROB]  # the fake says 0.8 for "yes" (label 1) and 0.3 for "no"
    assert prob.ece.value == pytest.approx((0.2 * 10 + 0.3 * 10) / 20)
    assert prob.threshold == 0.8 and prob.held_out_balanced_accuracy.value == 1.0
    assert (prob.n_tune, prob.n_test) == (10, 10)
    sources = begin.claim_sources  # the fake's claims, "P" or "N", are words the rows seldom have
    assert (sources["rows"], sources["claims"], sources["capped rows"]) == (20, 20, 0)
    assert sources["from neither"] >= 18 and sum(v for k, v in sources.items() if k.startswith("from ")) == 20
    assert f"{sources['from neither']} have words found in neither" in " ".join(begin.notes)
    assert davidson.claim_sources == {} and JUDGE in davidson.calibration
    markdown = (tmp_path / "report.md").read_text()
    assert "ECE [95% CI]" in markdown and "![begin-reliability.png](begin-reliability.png)" in markdown
    assert (tmp_path / "begin-reliability.png").stat().st_size > 1000
    saved = json.loads((tmp_path / "report.json").read_text())["results"][0]
    assert saved["calibration"][JUDGE_PROB]["threshold"] == 0.8


def test_terse_rows_are_counted_apart_from_the_judges_claims(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    """HaluEval's correct answers are mostly terse: one claim each, made by rule, not the judge's."""
    (result,) = run_bench(fake_judge(labeled_answers(builtin_labels())), ["halueval_qa"], limit=20,
                          out_dir=tmp_path, **FAST).results
    rows = [json.loads(line) for line in BENCHMARKS["halueval_qa"].path.read_text().splitlines()[:20]]
    terse = sum(len(r["output"].split()) <= 4 for r in rows)
    sources = result.claim_sources
    assert 0 < terse < 20 and sources["terse rows"] == terse
    assert sources["rows"] == sources["claims"] == 20 - terse  # the fake writes one claim per row it is asked
    assert f"{terse} terse output(s) (at most 4 words)" in " ".join(result.notes)
    assert result.table[0].auc == Estimate(1.0, 1.0, 1.0)  # and the fake judge still reads every row's label


def test_calibration_reports_the_tuned_threshold_on_the_other_half() -> None:
    labels = [0, 0, 0, 0, 1, 1, 1, 1]
    scores = [0.1, 0.2, 0.6, 0.3, 0.5, 0.9, 0.7, 0.4]
    result = calibration(scores, labels, n_boot=10)
    tune, test = split_halves(labels)
    threshold, tuned = best_threshold([scores[i] for i in tune], [labels[i] for i in tune])  # type: ignore[misc]
    assert (result.threshold, result.tuned_balanced_accuracy) == (threshold, tuned)
    assert result.held_out_balanced_accuracy.value == balanced_accuracy(
        [scores[i] for i in test], [labels[i] for i in test], threshold)


@pytest.mark.parametrize("mode", ["pipeline", "direct"])
def test_claim_scorers_report_each_route_alone(mode: str, tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    """HaluEval's rows split by the pipeline's route (terse: one claim by rule; longer: the claims
    step), the same rows in either mode, each with the judge's AUCs and output length's."""
    labels = builtin_labels()
    answers = labeled_answers(labels)
    answers["DirectVerdict"] = lambda p: {"verdict": "yes" if labels[block_text(p, "RESPONSE")] else "no",
                                          "reason": "r"}
    report = run_bench(fake_judge(answers), ["halueval_qa", "davidson"], limit=20, out_dir=tmp_path, mode=mode,
                       **FAST)
    halueval, davidson = report.results
    rows = [json.loads(line) for line in BENCHMARKS["halueval_qa"].path.read_text().splitlines()[:20]]
    terse = [r["label"] for r in rows if len(r["output"].split()) <= 4]
    longer = [r["label"] for r in rows if len(r["output"].split()) > 4]
    by_route = {r.route: r for r in halueval.routes}
    assert [(r.n, r.positives) for r in by_route.values()] == [(len(terse), sum(terse)), (len(longer), sum(longer))]
    for route in by_route.values():
        if 0 < route.positives < route.n:  # both labels: the fake judge reads every row's label
            assert route.judge_auc.value == 1.0 and route.length_auc.value is not None
        else:
            assert route.judge_auc.value is None
    assert davidson.routes == []  # toxicity has no claims route
    markdown = (tmp_path / "report.md").read_text()
    assert "By route:" in markdown and "| terse: one claim by rule |" in markdown
    assert json.loads((tmp_path / "report.json").read_text())["results"][0]["routes"][0]["n"] == len(terse)


def test_ground_truth_benchmarks_have_their_word_overlap_baselines(tmp_path: Path,
                                                                  fake_judge: FakeJudgeFactory) -> None:
    """Answer similarity's overlap compares the output with the reference; context recall's the
    reference with the context (it never shows the output)."""
    report = run_bench(fake_judge(), ["truthfulqa_similarity", "halueval_recall"], limit=20, out_dir=tmp_path, **FAST)
    similarity, recall = (rows_of(report, name) for name in ("truthfulqa_similarity", "halueval_recall"))
    assert "word overlap (output, ground truth)" in similarity and "word overlap (ground truth, context)" in recall
    rows = [json.loads(line) for line in BENCHMARKS["halueval_recall"].path.read_text().splitlines()[:20]]
    from localjudge.bench.metrics import roc_auc, word_overlap

    expected = roc_auc([word_overlap(r["ground_truth"], r["context"]) for r in rows], [r["label"] for r in rows])
    assert recall["word overlap (ground truth, context)"].auc.value == pytest.approx(expected, abs=1e-9)


# --- direct mode; a scorer without a built-in benchmark ----------------------------------------

def direct_verdict(label: str, p_yes: float = 0.9) -> Generation:
    text = f'{{"verdict":"{label}","reason":"The context says 1889."}}'
    return Generation(text, label_probs=({"yes": p_yes, "no": round(1 - p_yes, 6)},))


def test_bench_in_direct_mode_reads_the_label_probability(fake_judge: FakeJudgeFactory) -> None:
    """Every toxigen row in direct mode: one DirectVerdict call per batch, and a prob AUC."""
    calls = iter(range(10**6))

    def answer(prompt) -> Generation:
        return direct_verdict("yes" if next(calls) % 2 else "no", 0.6)

    judge = fake_judge(DirectVerdict=answer)
    report = run_bench(judge, ["toxigen"], limit=8, batch_size=4, n_boot=10, mode="direct")
    (result,) = report.results
    assert result.scored == 8 and result.scorer_version.startswith("toxicity-direct-v1@")
    assert {names for call in judge.calls for names in call.schema_names} == {"DirectVerdict"}
    assert len(judge.calls) == 2
    assert {row.name for row in result.table if row.kind == "judge"} == {"judge score", "judge prob score"}


def test_cli_mode_flag_reaches_the_bench(fake_judge: FakeJudgeFactory, tmp_path) -> None:
    args = bench_args("--benchmark", "davidson", "--limit", "4", "--mode", "direct", "--bootstrap", "10",
                      "--out-dir", str(tmp_path))
    judge = fake_judge(DirectVerdict=[direct_verdict("yes")] * 4)
    assert run_bench_command(args, judge=judge) == 0
    assert "toxicity-direct-v1@" in (tmp_path / "report.md").read_text()
    with pytest.raises(SystemExit):
        bench_args("--mode", "fast")


def test_bench_without_a_built_in_benchmark_for_the_scorer_says_what_to_do() -> None:
    from localjudge.bench.data import select_benchmarks

    with pytest.raises(ValueError, match="no built-in benchmark measures bias: give your own labeled file"):
        select_benchmarks(None, ["bias"])
    assert {b.scorer for b in select_benchmarks(None, ["toxicity", "bias"])} == {"toxicity"}
