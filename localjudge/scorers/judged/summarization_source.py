"""Summarization's source text, Mastra's `getSourceText`: the `source` and `source_extractor`
options as the scorer's `prepare_run`.

The extractor is called on an agent-shaped run (Mastra's agent input and stored output
messages), then the static `source` is used, else the run's own input; what this gives is what
is judged and keyed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from localjudge.samples import InvalidRunError


def _agent_run(run: Mapping[str, Any]) -> bool:
    """Mastra's ``isScorerRunInputForAgent(input) && isScorerRunOutputForAgent(output)``."""
    given, output = run.get("input"), run.get("output")
    return (isinstance(given, Mapping) and all(isinstance(given.get(k), list) for k in
                                               ("inputMessages", "rememberedMessages", "systemMessages"))
            and isinstance(given.get("taggedSystemMessages"), Mapping) and isinstance(output, list)
            and all(isinstance(m, Mapping) and isinstance(m.get("id"), str) and isinstance(m.get("role"), str)
                    and "content" in m and "createdAt" in m for m in output))


def source_of(source: str | None, source_extractor: Callable[[Any, Any], Any] | None) -> Callable[..., Any] | None:
    """Mastra's `getSourceText` as a `prepare_run`: the run with its `input` replaced by the source
    text: ``source_extractor(input, output)`` for an agent-shaped run, else `source`; None when
    neither is given (the run's input is the source). Each option is checked first."""
    if source is not None and not isinstance(source, str):
        raise ValueError(f"summarization: source must be text, got {type(source).__name__}")
    if source_extractor is not None and not callable(source_extractor):
        raise ValueError("summarization: source_extractor must be a function of (input, output)")
    if source is None and source_extractor is None:
        return None

    def prepare(run: Mapping[str, Any]) -> Mapping[str, Any]:
        if source_extractor is not None and _agent_run(run):
            text = source_extractor(run["input"], run["output"])
            if not isinstance(text, str):
                raise InvalidRunError(f"source_extractor gave {type(text).__name__}, not the source text")
            return {**run, "input": text}
        return run if source is None else {**run, "input": source}

    return prepare
