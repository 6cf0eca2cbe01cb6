"""The transformers engine (heavy: torch, transformers): a local model, greedy, grammar-constrained.

`judge` (`TransformersJudge`), `decode` (the own decode loop), `kv_cache`, `prefix_cache`,
`row_grammars` (one grammar per batch row; generate's logits processor), `model_config`.
"""

from localjudge.engines.transformers.judge import TransformersJudge

__all__ = ["TransformersJudge"]
