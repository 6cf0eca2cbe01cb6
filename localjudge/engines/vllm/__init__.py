"""The vLLM engine (heavy: vLLM): token-id prompts, per-row guidance grammars, logprob labels.

`judge` (`VLLMJudge`), `guard` (the repetition guard as a logits processor vLLM loads).
"""

from localjudge.engines.vllm.judge import GUARD, EngineMissingError, EngineStartError, VLLMJudge

__all__ = ["GUARD", "EngineMissingError", "EngineStartError", "VLLMJudge"]
