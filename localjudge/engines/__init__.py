"""Model engines: what judges with a model. Light to import: torch and vLLM load only with an engine.

`spec` is the judge spec every door builds (`JudgeSpec`: which judge, checked with typed errors,
loaded and placed in its process); `choice` declares each engine (what it needs, its loader, its
placement) and checks a choice (`check_judge`, `load_judge`); `placement` sets a process up for a
local engine (threads, a data-parallel rank's GPUs or cores, vLLM's environment); `options` is
the one table of engine options (and the identity they give a judge); `chat_template`, `grammar`
and `model_files` are what every engine shares (rendering with a family's template, the answer's
grammar and label readings, local-only safe model paths). The engines themselves are the
sub-folders `transformers/` (own decode loop, KV and prefix caches, row grammars), `vllm/` and
`server/` (a running inference server over HTTP).
"""

from localjudge.engines.choice import (
    EngineOptionError,
    MissingOptionError,
    OptionValueError,
    check_engine,
    check_judge,
    check_threads,
    engine_needs,
    load_judge,
)
from localjudge.engines.model_files import ModelPathError, check_model_dir
from localjudge.engines.options import ENGINE_OPTIONS, ENGINES, FLAGS, OPTIONS, EngineOption
from localjudge.engines.placement import rank_cpus, rank_gpus
from localjudge.engines.spec import JudgeSource, JudgeSpec, load_source, set_threads

__all__ = ["ENGINES", "ENGINE_OPTIONS", "FLAGS", "OPTIONS", "EngineOption", "EngineOptionError", "JudgeSource",
           "JudgeSpec", "MissingOptionError", "ModelPathError", "OptionValueError", "check_engine", "check_judge",
           "check_model_dir", "check_threads", "engine_needs", "load_judge", "load_source", "rank_cpus", "rank_gpus",
           "set_threads"]
