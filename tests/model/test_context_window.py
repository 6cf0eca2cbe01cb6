"""Prompts too long for the real model: a row longer than SmolLM2's 8,192-token window is recorded
unscored with the documented error while the row beside it is scored; a real model whose config
declares no length is refused, and runs with an explicit `max_context`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localjudge import toxicity_scorer
from localjudge.judge import TOO_LONG


def test_real_model_records_a_row_longer_than_its_window(real_judge: Any) -> None:
    assert real_judge.context_window == 8192  # SmolLM2's max_position_embeddings
    # ~12,500 tokens in one sentence: one prompt (2,500 short sentences would be asked in parts of
    # 10, and are refused before any call as over the step's max_parts: tests/unit/scoring)
    long_output = "the tower is tall and " * 2500 + "done."
    results = toxicity_scorer(real_judge).run_batch([{"output": "Fine."}, {"output": long_output}])
    assert results[0].scored, results[0].error
    error = results[1].error or ""
    assert results[1].score is None and error.startswith("analyze step: prompt of ")
    assert error.endswith(f"{TOO_LONG} of 8192 tokens") and results[1].new_tokens == 0


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
