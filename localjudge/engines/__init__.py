"""Model engines: what judges with a model. Light to import: torch and vLLM load only with an engine.

`choice` picks an engine and checks its options (`load_judge`), `options` is the one table of
engine options (and the identity they give a judge); `chat_template`, `grammar` and
`model_files` are what every engine shares (rendering with a family's template, the answer's
grammar and label readings, local-only safe model paths). The engines themselves are the
sub-folders `transformers/` (own decode loop, KV and prefix caches, row grammars), `vllm/` and
`server/` (a running inference server over HTTP).
"""

from localjudge.engines.choice import EngineOptionError, check_engine, load_judge, rank_cpus, rank_gpus
from localjudge.engines.model_files import ModelPathError, check_model_dir
from localjudge.engines.options import ENGINE_OPTIONS, ENGINES, FLAGS, OPTIONS
from localjudge.engines.spec import JudgeSource, JudgeSpec, load_source

__all__ = ["ENGINES", "ENGINE_OPTIONS", "FLAGS", "OPTIONS", "EngineOptionError", "JudgeSource", "JudgeSpec",
           "ModelPathError", "check_engine", "check_model_dir", "load_judge", "load_source", "rank_cpus", "rank_gpus"]
