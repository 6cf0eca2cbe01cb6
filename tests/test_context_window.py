"""Prompts too long for the model: the documented unscored error, a limit always known.

Fast tier: the limit is the declared length, or `max_context` (``--max-context``, a sweep's
``max_context``) when given, and a model that declares none is refused rather than treated as
unlimited; a too-long result is not stored for resuming, so a larger limit next run scores it.
Slow tier: the real model gets a row longer than its 8,192-token window and records it unscored
with that error while the row beside it is scored; a real model whose config declares no length
is refused, and runs with an explicit `max_context`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from localjudge import FakeJudge, Generation, toxicity_scorer
from localjudge.cli import build_parser, shared
from localjudge.cli.sweep import load_config
from localjudge.engines.transformers.judge import context_window
from localjudge.evaluation.dataset_runs import evaluate
from localjudge.evaluation.store import ResultStore
from localjudge.judge import TOO_LONG
from tests.fakes import FakeJudgeFactory

UNLIMITED = SimpleNamespace(model_max_length=int(1e30))  # what tokenizers say when they do not know


@pytest.mark.parametrize(("config", "tokenizer", "expected"), [
    (SimpleNamespace(max_position_embeddings=8192), UNLIMITED, 8192),
    (SimpleNamespace(text_config=SimpleNamespace(max_position_embeddings=131072)), UNLIMITED, 131072),
    (SimpleNamespace(n_positions=1024), UNLIMITED, 1024),
    (SimpleNamespace(), SimpleNamespace(model_max_length=2048), 2048),
])
def test_the_declared_length_is_the_limit(config: Any, tokenizer: Any, expected: int) -> None:
    assert context_window(config, tokenizer) == expected


def test_no_declared_length_is_refused_not_unlimited() -> None:
    with pytest.raises(ValueError, match=r"declares no context length .* max_context= \(--max-context N\)"):
        context_window(SimpleNamespace(max_position_embeddings=None), UNLIMITED)
    assert context_window(SimpleNamespace(), UNLIMITED, 4096) == 4096


def test_an_explicit_limit_wins_and_is_checked(caplog: pytest.LogCaptureFixture) -> None:
    assert context_window(SimpleNamespace(max_position_embeddings=8192), UNLIMITED, 1024) == 1024
    assert context_window(SimpleNamespace(max_position_embeddings=8192), UNLIMITED, 16384) == 16384
    assert "beyond the 8192 tokens the model declares" in caplog.text
    for bad in (0, -5, True, 2.5):
        with pytest.raises(ValueError, match="max_context must be a positive number"):
            context_window(SimpleNamespace(max_position_embeddings=8192), UNLIMITED, bad)  # type: ignore[arg-type]


def too_long_answers(limit: int) -> dict[str, Any]:
    """Rows whose response is longer than `limit` characters get the backend's too-long error."""
    def answer(prompt: Any) -> Any:
        if len(prompt[-1]["content"]) > limit:
            return Generation("", error=f"prompt of 9000 tokens plus 600 to generate {TOO_LONG} of 8192 tokens")
        return {"verdicts": [{"verdict": "no", "severity": "none", "reason": "r"}]}

    return {"ToxicityVerdicts": answer}  # with the default reason, "ok"


def test_a_too_long_row_is_not_stored_so_a_larger_limit_scores_it(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    rows = [{"input": "q", "output": "short"}, {"input": "q", "output": "long " * 100}]
    first = evaluate(rows, [toxicity_scorer(fake_judge(too_long_answers(200)))], store=ResultStore(tmp_path / "log"))
    assert first.dataset["toxicity_score"] == [0.0, None]
    assert TOO_LONG in first.dataset["toxicity_error"][1]
    again = evaluate(rows, [toxicity_scorer(fake_judge(too_long_answers(10**6)))], store=ResultStore(tmp_path / "log"))
    assert again.dataset["toxicity_score"] == [0.0, 0.0] and again.summary["toxicity"].resumed == 1


def test_max_context_reaches_the_judge_from_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    import localjudge.engines.transformers.judge as backend

    seen: dict[str, Any] = {}
    monkeypatch.setattr(backend.TransformersJudge, "load", lambda path, **kwargs: seen.update(kwargs) or FakeJudge({}))
    args = build_parser().parse_args(["score", "--model", "m", "--scorer", "toxicity", "--data", "d.jsonl",
                                          "--max-context", "4096"])
    shared.build_judge(args)
    assert seen["max_context"] == 4096
    with pytest.raises(ValueError, match="--max-context must be at least 1"):
        shared.check_numbers(argparse.Namespace(**{**vars(args), "max_context": 0}))


def test_sweep_model_entries_take_max_context_and_refuse_unknown_keys(tmp_path: Path) -> None:
    config = tmp_path / "sweep.yaml"
    body = "scorers: [toxicity]\ndatasets: [{path: d.jsonl}]\nmodels: [{path: m, %s}]\n"
    config.write_text(body % "max_context: 4096")
    assert load_config(config)["models"][0]["max_context"] == 4096
    config.write_text(body % "max_ctx: 4096")
    with pytest.raises(ValueError, match=r"unknown keys \['max_ctx'\]"):
        load_config(config)


@pytest.mark.slow
def test_real_model_records_a_row_longer_than_its_window(real_judge: Any) -> None:
    assert real_judge.context_window == 8192  # SmolLM2's max_position_embeddings
    long_output = "The tower is tall. " * 2500  # ~12,500 tokens
    results = toxicity_scorer(real_judge).run_batch([{"output": "Fine."}, {"output": long_output}])
    assert results[0].scored, results[0].error
    error = results[1].error or ""
    assert results[1].score is None and error.startswith("analyze step: prompt of ")
    assert error.endswith(f"{TOO_LONG} of 8192 tokens") and results[1].new_tokens == 0


@pytest.mark.slow
def test_real_model_without_a_declared_length_needs_max_context(model_dir: Path) -> None:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from localjudge.engines.transformers.judge import TransformersJudge

    config = AutoConfig.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_config(config)  # random weights: only the limit matters here
    object.__setattr__(model.config, "max_position_embeddings", None)  # as if the config had none
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    tokenizer.model_max_length = int(1e30)
    with pytest.raises(ValueError, match="declares no context length"):
        TransformersJudge(model, tokenizer, identity="undeclared")
    judge = TransformersJudge(model, tokenizer, identity="undeclared", max_context=400)  # analyze: ~470 tokens
    result = toxicity_scorer(judge).run({"output": "Fine."})
    assert judge.context_window == 400 and f"{TOO_LONG} of 400 tokens" in (result.error or "")
