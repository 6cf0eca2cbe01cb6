"""Model engines: what judges with a model. Light to import: torch and vLLM load only with an engine.

`choice` picks an engine and checks its options (`load_judge`); `chat_template`, `grammar` and
`model_files` are what every engine shares (rendering with a family's template, the answer's
grammar and label readings, local-only safe model paths). The engines themselves are the
sub-folders `transformers/` (own decode loop, KV and prefix caches, row grammars) and `vllm/`.
"""

from localjudge.engines.choice import ENGINES, OPTIONS, EngineOptionError, check_engine, load_judge, rank_gpus

__all__ = ["ENGINES", "OPTIONS", "EngineOptionError", "check_engine", "load_judge", "rank_gpus"]
