"""Direct mode: one yes/no question about the whole output, one judge step, label probability read."""

from __future__ import annotations

import json

import pytest

from localjudge import Generation, faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.bench.run import run_bench
from localjudge.cli.bench import run_bench_command
from localjudge.samples.runs import InvalidRunError
from localjudge.scorers import SCORERS, build_scorer, register_scorer
from localjudge.scoring.scorer import create_scorer
from tests.fakes import FakeJudgeFactory

RUN = {"input": "When was the Eiffel Tower built?", "output": "It was completed in 1925.",
       "context": "The Eiffel Tower was completed in 1889."}
FACTORIES = [hallucination_scorer, faithfulness_scorer, toxicity_scorer]


def verdict(label: str, p_yes: float = 0.9) -> Generation:
    text = f'{{"verdict":"{label}","reason":"The context says 1889."}}'
    return Generation(text, label_probs=({"yes": p_yes, "no": round(1 - p_yes, 6)},))


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(("label", "expected"), [("yes", 4.0), ("no", 0.0)])
def test_one_step_yes_is_the_scale(factory, label: str, expected: float, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge(DirectVerdict=[verdict(label, 0.75)])
    result = factory(judge, scale=4.0, mode="direct").run(RUN)
    assert result.score == expected and result.prob_score == 3.0  # P(yes) x scale
    assert result.reason == "The context says 1889."  # the verdict's own reason: no reason step
    assert [call.schema_names for call in judge.calls] == [("DirectVerdict",)]
    assert result.preprocess_step_result is None
    assert result.analyze_step_result == {"verdict": label, "reason": "The context says 1889."}


@pytest.mark.parametrize("factory", FACTORIES)
def test_the_prompt_shows_what_the_scorer_judges(factory, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorer = factory(judge, mode="direct")
    prompt = scorer.run(RUN).analyze_prompt or ""
    assert "<<<RESPONSE\nIt was completed in 1925.\nRESPONSE>>>" in prompt and "<<<INPUT" in prompt
    assert ("<<<CONTEXT" in prompt) == (factory is not toxicity_scorer)
    shown = {"input", "output"} if factory is toxicity_scorer else {"input", "output", "context"}
    assert scorer.shown_fields == shown
    pipeline = factory(judge)
    assert scorer.prompt_hash != pipeline.prompt_hash and scorer.key != pipeline.key  # never resumed as each other
    assert (scorer.positive, scorer.higher_is_better) == (pipeline.positive, pipeline.higher_is_better)


@pytest.mark.parametrize("factory", FACTORIES)
def test_empty_output_is_decided_without_the_judge(factory, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    result = factory(judge, mode="direct", scale=2.0).run({**RUN, "output": "  "})
    assert result.score == (2.0 if factory is faithfulness_scorer else 0.0) and judge.calls == []


@pytest.mark.parametrize("factory", [hallucination_scorer, faithfulness_scorer])
def test_claim_scorers_still_need_context(factory, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(InvalidRunError, match="needs context"):
        factory(fake_judge(), mode="direct").run({"input": "q", "output": "Paris."})


def test_toxicity_needs_no_context(fake_judge: FakeJudgeFactory) -> None:
    assert toxicity_scorer(fake_judge(DirectVerdict=[verdict("no")]), mode="direct").run(
        {"input": "q", "output": "Fine."}).score == 0.0


@pytest.mark.parametrize("factory", FACTORIES)
def test_an_unknown_mode_is_refused(factory, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        factory(fake_judge(), mode="fast")


def test_build_scorer_passes_the_mode_only_when_asked(fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    assert build_scorer("hallucination", judge, mode="direct").version == "hallucination-direct-v1"
    assert build_scorer("hallucination", judge).version == hallucination_scorer(judge).version
    register_scorer("nomode", lambda judge, scale=1.0: create_scorer("nomode", judge=judge, scale=scale)
                    .generate_score(lambda run, results: 0.0))
    try:
        assert build_scorer("nomode", judge).name == "nomode"  # a factory without `mode` still builds
        with pytest.raises(ValueError, match="no direct mode"):
            build_scorer("nomode", judge, mode="direct")
    finally:
        del SCORERS["nomode"]


def test_bench_in_direct_mode_reads_the_label_probability(fake_judge: FakeJudgeFactory) -> None:
    """Every toxigen row in direct mode: one DirectVerdict call per batch, and a prob AUC."""
    calls = iter(range(10**6))

    def answer(prompt) -> Generation:
        return verdict("yes" if next(calls) % 2 else "no", 0.6)

    judge = fake_judge(DirectVerdict=answer)
    report = run_bench(judge, ["toxigen"], limit=8, batch_size=4, n_boot=10, mode="direct")
    (result,) = report.results
    assert result.scored == 8 and result.scorer_version.startswith("toxicity-direct-v1@")
    assert {names for call in judge.calls for names in call.schema_names} == {"DirectVerdict"}
    assert len(judge.calls) == 2
    assert {row.name for row in result.table if row.kind == "judge"} == {"judge score", "judge prob score"}


def test_cli_mode_flag_reaches_the_bench(fake_judge: FakeJudgeFactory, tmp_path) -> None:
    from tests.test_bench import bench_args

    args = bench_args("--benchmark", "davidson", "--limit", "4", "--mode", "direct", "--bootstrap", "10",
                      "--out-dir", str(tmp_path))
    judge = fake_judge(DirectVerdict=[verdict("yes")] * 4)
    assert run_bench_command(args, judge=judge) == 0
    assert "toxicity-direct-v1@" in (tmp_path / "report.md").read_text()
    with pytest.raises(SystemExit):
        bench_args("--mode", "fast")


def test_cli_score_and_sweep_take_the_mode(tmp_path, monkeypatch, fake_judge: FakeJudgeFactory) -> None:
    from localjudge.cli import shared
    from localjudge.cli.main import main

    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    data.write_text('{"input": "q", "output": "You idiot."}\n', encoding="utf-8")
    monkeypatch.setattr(shared, "build_judge", lambda args, device=None: fake_judge())
    argv = ["--quiet", "score", "--model", "m", "--scorer", "toxicity", "--data", str(data), "--out", str(out)]
    assert main([*argv, "--mode", "direct"]) == 0
    row = json.loads(out.read_text())
    assert row["toxicity_score"] == 1.0 and '"verdict": "yes"' in row["toxicity_steps"]  # the fake's direct "yes"

    class Loaded:  # the sweep loads its models itself
        @staticmethod
        def load(path, **kwargs):
            return fake_judge()

    monkeypatch.setattr("localjudge.engines.transformers.TransformersJudge", Loaded)
    config = tmp_path / "sweep.yaml"
    config.write_text(f"out_dir: {tmp_path / 'sweep'}\nmodels: [{{name: m, path: m}}]\n"
                      f"scorers: [toxicity, {{name: toxicity, mode: direct}}]\ndatasets: [{{name: d, path: {data}}}]\n")
    assert main(["--quiet", "sweep", str(config)]) == 0
    cells = sorted(p.name for p in (tmp_path / "sweep" / "m" / "d").glob("*.jsonl"))
    assert cells == ["toxicity-direct.jsonl", "toxicity.jsonl"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.read_text().replace("mode: direct", "mode: fast"))
    assert main(["--quiet", "sweep", str(bad)]) == 2  # refused before any model loads
