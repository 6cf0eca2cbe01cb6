"""The peer `bench_speed.py --peer deepeval` measures: DeepEval's metrics on the same model object.

A module, not a script: importing it imports neither DeepEval nor torch and sets nothing. Call
`deepeval_env()` into the environment (`measure.set_offline_env(deepeval_env())`) before
DeepEval is imported; it reads its settings then.

DeepEval's HallucinationMetric, FaithfulnessMetric and ToxicityMetric (llm eval mode,
async_mode=False) run through DeepEval's documented custom-model class (a `DeepEvalBaseLLM`
subclass: chat template, greedy, at most `max_new_tokens` per call), one test case at a time.
A row whose metric raises (DeepEval raises on invalid JSON) counts as not scored, with its
error type.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from measure import Stopwatch

# Our scorer -> DeepEval's metric for it, and the test-case field that takes the context
# (None: the metric reads no context). DeepEval's names, so they live here, not on our scorers.
METRICS: dict[str, tuple[str, str | None]] = {
    "hallucination": ("HallucinationMetric", "context"),
    "faithfulness": ("FaithfulnessMetric", "retrieval_context"),
    "toxicity": ("ToxicityMetric", None),
}


def deepeval_env() -> dict[str, str]:
    """DeepEval's settings for an offline benchmark: nothing phones home, nothing lands in the repo.
    (There is no network on these machines anyway; this keeps DeepEval from trying.)"""
    return {
        "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",  # PostHog telemetry off (NoopBackend)
        "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",  # no version check against the package index
        "DEEPEVAL_DISABLE_DOTENV": "1",  # read no .env files from the working directory
        "DEEPEVAL_EVAL_MODE": "llm",  # the LLM runs every step; no hosted "System One" model
        # DeepEval makes its key/cache folder (default ./.deepeval) on import: keep it out of the repo.
        "DEEPEVAL_CACHE_FOLDER": os.environ.get("DEEPEVAL_CACHE_FOLDER")
        or os.path.join(tempfile.gettempdir(), "localjudge-bench-deepeval"),
    }


def deepeval_model(loader: Callable[[], tuple[Any, Any]], name: str, max_new_tokens: int) -> Any:
    """DeepEval's documented custom-model route for a local Hugging Face model.

    `loader` returns (model, tokenizer); it is called on the first `generate`, not before, so
    building this object and the metrics loads nothing. Greedy decoding with the tokenizer's
    chat template; at most `max_new_tokens` per call. Counts calls and generated tokens.
    """
    import torch
    from deepeval.models import DeepEvalBaseLLM

    class LocalHFModel(DeepEvalBaseLLM):
        def __init__(self) -> None:
            self.loader = loader
            self.loaded: tuple[Any, Any] | None = None
            self.max_new_tokens = max_new_tokens
            self.calls, self.new_tokens = 0, 0
            super().__init__(name)  # calls load_model(), which loads nothing yet

        def load_model(self) -> Any:
            return self.loader  # the model itself arrives on the first generate

        def objects(self) -> tuple[Any, Any]:
            if self.loaded is None:
                self.loaded = self.loader()
            return self.loaded

        def generate(self, prompt: str) -> str:
            # No `schema` parameter: DeepEval then falls back to parsing JSON out of the
            # text (trimAndLoadJson), its documented path for custom models.
            model, tokenizer = self.objects()
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids.to(model.device)
            with torch.inference_mode():
                out = model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=self.max_new_tokens,
                    do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None,
                    pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                )
            new = out[0, ids.shape[1]:]
            self.calls += 1
            self.new_tokens += int(new.shape[0])
            return tokenizer.decode(new, skip_special_tokens=True)

        async def a_generate(self, prompt: str) -> str:
            return self.generate(prompt)

        def get_model_name(self) -> str:
            return self.name or "local-hf"

    return LocalHFModel()


def deepeval_metric(scorer: str, model: Any) -> Any:
    """DeepEval's metric for one of our scorers, run synchronously by the LLM alone."""
    import deepeval.metrics

    metric_class = getattr(deepeval.metrics, METRICS[scorer][0])
    return metric_class(model=model, eval_mode="llm", async_mode=False, include_reason=True,
                        strict_mode=False, verbose_mode=False)


def deepeval_case(run: Mapping[str, Any], scorer: str) -> Any:
    """The row as DeepEval's test case, from the same normalised text our scorers read."""
    from deepeval.test_case import LLMTestCase

    from localjudge.samples.runs import to_sample

    sample = to_sample(run)
    context_field = METRICS[scorer][1]
    extra = {context_field: list(sample.context or ())} if context_field else {}
    return LLMTestCase(input=sample.input, actual_output=sample.output, **extra)


@dataclass
class PeerRun:
    """DeepEval's metric over some rows: what `bench_speed.py` reports."""

    rows: int
    seconds: float
    calls: int
    tokens: int
    scored: int
    errors: dict[str, int] = field(default_factory=dict)  # error type -> rows


def measure_deepeval(model: Any, scorer: str, rows: Sequence[Mapping[str, Any]]) -> PeerRun:
    """DeepEval's metric over the rows, one test case at a time; a raising row is unscored."""
    calls, tokens = model.calls, model.new_tokens
    errors: Counter[str] = Counter()
    scored = 0
    with Stopwatch() as watch:
        for run in rows:
            try:
                metric = deepeval_metric(scorer, model)
                metric.measure(deepeval_case(run, scorer), _show_indicator=False)
                if metric.score is None:
                    errors["no score"] += 1
                else:
                    scored += 1
            except Exception as error:  # noqa: BLE001 - DeepEval raises on invalid JSON: a miss
                errors[type(error).__name__] += 1
    return PeerRun(len(rows), watch.seconds, model.calls - calls, model.new_tokens - tokens, scored, dict(errors))
