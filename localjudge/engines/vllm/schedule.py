"""What makes the vLLM engine's schedule a function of the rows (`VLLMJudge.load(fixed_schedule=True)`).

vLLM's bf16 kernels on CPU pick their path by what a step computes together (AMX tiles or
AVX-512 on Intel Xeon), so a row's numbers depend on which rows share its steps. In vLLM's own
layout that is decided by timing: its engine core, in a process of its own, starts stepping with
the rows that have arrived, and grammars compile on a thread pool whose rows wait. With the
engine core in the calling process every row of a call is added before the first step, and with
grammars compiled as rows are added no row waits: two runs of the same rows take the same steps
(docs/engines.md "Determinism"). Imports vLLM only inside its functions.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LAYOUT_VARIABLE = "VLLM_ENABLE_V1_MULTIPROCESSING"  # read by vLLM when it builds an engine


@contextmanager
def engine_core_layout(*, in_process: bool) -> Iterator[None]:
    """vLLM's engine core in this process or in its own, for the engine built inside the block;
    the variable is put back after."""
    try:
        from vllm import envs
    except ImportError:  # a stand-in vllm (tests), or one without the module: nothing cached to drop
        envs = None
    previous = os.environ.get(LAYOUT_VARIABLE)
    os.environ[LAYOUT_VARIABLE] = "0" if in_process else (previous or "1")
    if hasattr(envs, "disable_envs_cache"):
        envs.disable_envs_cache()  # an engine built before cached the variables it read
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(LAYOUT_VARIABLE, None)
        else:
            os.environ[LAYOUT_VARIABLE] = previous


def compile_off_here() -> bool:
    """Whether torch.compile is off in this process (torch read TORCHDYNAMO_DISABLE=1 at import):
    an engine core in this process must then run eagerly."""
    dynamo = sys.modules.get("torch._dynamo.config")
    return bool(getattr(dynamo, "disable", False))


def compile_grammars_when_added(llm: Any) -> None:
    """Make the in-process engine core compile a row's grammar when the row is added, not on its
    thread pool (vLLM does the same itself for its ``external_launcher`` backend, for the same
    reason). Raises AttributeError, naming what is missing, on a vLLM whose engine core differs."""
    manager = llm.llm_engine.engine_core.engine_core.scheduler.structured_output_manager
    manager._use_async_grammar_compilation  # noqa: B018 - present in the vLLM versions this knows
    manager._use_async_grammar_compilation = False
