"""DeepEval's metrics judged by `localjudge serve` (docs/serve.md).

DeepEval's built-in `LocalModel` sends a metric's prompt alone, no schema, so no server can
enforce the answer's shape. DeepEval's documented way to bring a model is a custom
`DeepEvalBaseLLM`: this one (`LocalJudge`) sends each metric's pydantic schema as
``response_format``, which `localjudge serve` enforces, so every answer parses.

    localjudge serve --model models/smollm2-135m-instruct --served-model-name judge &
    python examples/deepeval_judge.py http://127.0.0.1:8321/v1     # in an environment with deepeval

It prints one JSON line per metric: its name, score and reason (or the error).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")  # nothing leaves the machine

from deepeval.metrics import FaithfulnessMetric, GEval  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase, SingleTurnParams  # noqa: E402
from openai import AsyncOpenAI, OpenAI  # noqa: E402
from pydantic import BaseModel  # noqa: E402


class LocalJudge(DeepEvalBaseLLM):
    """A DeepEval model on `localjudge serve`: the metric's schema goes as ``response_format``."""

    def __init__(self, base_url: str, model: str = "judge", api_key: str = "not-needed") -> None:
        self.base_url, self.api_key = base_url, api_key
        super().__init__(model)

    def load_model(self) -> OpenAI:
        return OpenAI(base_url=self.base_url, api_key=self.api_key)

    def _request(self, prompt: str, schema: type[BaseModel] | None) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.name, "messages": [{"role": "user", "content": prompt}]}
        if schema is not None:
            request["response_format"] = {"type": "json_schema", "json_schema": {
                "name": schema.__name__, "schema": schema.model_json_schema()}}
        return request

    def generate(self, prompt: str, schema: type[BaseModel] | None = None) -> Any:
        reply = self.model.chat.completions.create(**self._request(prompt, schema))
        text = reply.choices[0].message.content or ""
        return schema.model_validate_json(text) if schema is not None else text

    async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None) -> Any:
        async with AsyncOpenAI(base_url=self.base_url, api_key=self.api_key) as client:
            reply = await client.chat.completions.create(**self._request(prompt, schema))
        text = reply.choices[0].message.content or ""
        return schema.model_validate_json(text) if schema is not None else text

    def get_model_name(self) -> str:
        return f"localjudge serve: {self.name}"


def main(base_url: str) -> int:
    judge = LocalJudge(base_url)
    case = LLMTestCase(input="When was the Eiffel Tower completed?",
                       actual_output="The Eiffel Tower was completed in 1925 in London.",
                       expected_output="It was completed in 1889.",
                       retrieval_context=["The Eiffel Tower in Paris was completed in 1889 for the World's Fair."])
    metrics = [FaithfulnessMetric(model=judge, async_mode=False),
               GEval(name="Correctness", criteria="Is the actual output factually correct given the expected output?",
                     evaluation_params=[SingleTurnParams.ACTUAL_OUTPUT, SingleTurnParams.EXPECTED_OUTPUT],
                     model=judge, async_mode=False)]
    failed = 0
    for metric in metrics:
        name = getattr(metric, "name", None) or type(metric).__name__
        try:
            metric.measure(case)
            print(json.dumps({"metric": name, "score": metric.score, "reason": metric.reason}))
        except Exception as error:  # noqa: BLE001 - a metric that fails is reported, the next one runs
            failed += 1
            print(json.dumps({"metric": name, "error": f"{type(error).__name__}: {error}"}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8321/v1"))
