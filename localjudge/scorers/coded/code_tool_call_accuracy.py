"""Code tool call accuracy (Mastra's `createToolCallAccuracyScorerCode`, no model): did the agent
call the expected tool, or the expected tools in order?

Inputs: the run's tool calls (`tool_calls`, or the tool invocations in the output's messages:
every call made, failed ones too), and an `input` (Mastra refuses a run without input messages,
and one without output messages: here, a run with no input text, or with neither output text
nor tool calls). Options: `expected_tool` or `expected_tool_order` (one is required; the order
wins when both are given) and `strict_mode`. Score, as Mastra's: 0 when no tool was called; with
an order, 1 when the expected tools appear in that order (strict: the calls are exactly that
list), else 0; with a tool, 1 when it was called (strict: it was the only call), else 0.
Higher is better.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import InvalidRunError, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, RunSample, code_build, code_scorer
from localjudge.scoring import Results


def in_order(tools: Sequence[str], order: Sequence[str], strict: bool = False) -> bool:
    """Mastra's `checkToolOrder`: strict, the calls are `order`; else each expected tool's first
    call comes after the one before it."""
    if strict:
        return list(tools) == list(order)
    firsts = []
    for tool in order:
        if tool not in tools:
            return False
        firsts.append(list(tools).index(tool))
    return all(later > earlier for earlier, later in zip(firsts, firsts[1:], strict=False))


def accuracy(tools: Sequence[str], expected_tool: str | None, order: Sequence[str] | None, strict: bool) -> float:
    """Mastra's `calculateAccuracy`."""
    if not tools:
        return 0.0
    if order:
        return 1.0 if in_order(tools, order, strict) else 0.0
    if not expected_tool:
        return 0.0
    if strict:
        return 1.0 if len(tools) == 1 and tools[0] == expected_tool else 0.0
    return 1.0 if expected_tool in tools else 0.0


def _check_run(run: RunSample) -> None:
    if not run.input.strip():
        raise InvalidRunError("code_tool_call_accuracy needs an input: the user's request ('input')")
    if not run.output.strip() and not run.tool_calls:
        raise InvalidRunError("code_tool_call_accuracy needs an output: messages or tool calls ('output')")


def code_tool_call_accuracy_scorer(judge: Judge | None = None, *, expected_tool: str | None = None,
                                   expected_tool_order: Sequence[str] | None = None, strict_mode: bool = False,
                                   scale: float = 1.0, compat: str = "localjudge") -> CodeScorer:
    """Mastra's code tool call accuracy scorer (no model: `judge` is not used).

    Args:
        expected_tool: The tool the agent should call.
        expected_tool_order: The tools it should call, in this order (wins over `expected_tool`).
        strict_mode: Only that one call, or exactly that list of calls.
    """
    if not expected_tool and not expected_tool_order:
        raise ValueError("code_tool_call_accuracy needs expected_tool or expected_tool_order")
    if expected_tool is not None and not isinstance(expected_tool, str):
        raise TypeError(f"expected_tool must be a tool name, got {expected_tool!r}")
    order = list(expected_tool_order or [])
    if isinstance(expected_tool_order, str) or not all(isinstance(t, str) for t in order):
        raise TypeError(f"expected_tool_order must be a list of tool names, got {expected_tool_order!r}")
    if not isinstance(strict_mode, bool):
        raise TypeError(f"strict_mode must be true or false, got {strict_mode!r}")

    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        tools = [call.name for call in run.tool_calls]
        correct = (len(tools) == 1 and tools[0] == expected_tool if strict_mode else expected_tool in tools
                   ) if expected_tool else False
        return {"expected_tool": expected_tool, "actual_tools": tools, "strict_mode": strict_mode,
                "expected_tool_order": order or None, "has_tool_calls": bool(tools), "correct_tool_called": correct,
                "correct_order_called": in_order(tools, order, strict_mode) if order else None,
                "accuracy": accuracy(tools, expected_tool, order, strict_mode)}

    def reason(run: Sample, results: Results) -> str:
        step = results["preprocess_step_result"]
        called = ", ".join(step["actual_tools"]) or "no tool"
        wanted = f"the order {' -> '.join(order)}" if order else f"{expected_tool}"
        verdict = "matches" if step["accuracy"] else "does not match"
        return f"Called {called}; that {verdict} {wanted}{' (strict)' if strict_mode else ''}."

    return code_scorer("code_tool_call_accuracy", code_build(scale, compat), preprocess=preprocess,
                       score=lambda run, results: results["preprocess_step_result"]["accuracy"], reason=reason,
                       reads=("input", "output", "tool_calls"), positive="called the expected tools",
                       check_run=_check_run,
                       settings={"expected_tool": expected_tool, "order": order, "strict": strict_mode},
                       description="Whether the expected tool, or tools in the expected order, were called")


__all__ = ["accuracy", "code_tool_call_accuracy_scorer", "in_order"]
