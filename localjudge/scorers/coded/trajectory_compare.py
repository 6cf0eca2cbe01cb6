"""Mastra's trajectory measures, ported for the code trajectory scorers: a run's tool calls as
Mastra's `Trajectory`, and `compareTrajectories`, `checkTrajectoryEfficiency`,
`checkTrajectoryBlacklist` and `analyzeToolFailures` (`@mastra/evals` 1.10.2,
`scorers/utils.ts`), line for line, with the same rounding (`js_round2`: `Math.round`).

A trajectory is ``{"steps": [step, ...], "totalDurationMs"?: ms}``; a step is Mastra's
``{"stepType", "name", "toolArgs"?, "toolResult"?, "success"?, "durationMs"?, "children"?, ...}``.
Steps from a run's messages are tool calls (`steps_of`), as Mastra's `extractTrajectory` makes
them: no durations, tokens or children, so a token or duration budget cannot be checked on them
(Mastra throws; the run is then unscored here).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from localjudge.samples import InvalidRunError, ToolCall
from localjudge.scorers.coded.js_strings import add_up

Step = dict[str, Any]
Result = dict[str, Any]

# The fields of each step type an expected step may pin (Mastra's COMPARABLE_FIELDS_BY_TYPE).
COMPARABLE_FIELDS = {
    "tool_call": ("toolArgs", "toolResult", "success"),
    "mcp_tool_call": ("toolArgs", "toolResult", "mcpServer", "success"),
    "model_generation": ("modelId", "promptTokens", "completionTokens", "finishReason"),
    "agent_run": ("agentId",),
    "workflow_step": ("stepId", "status", "output"),
    "workflow_run": ("workflowId", "status"),
    "workflow_conditional": ("conditionCount", "selectedSteps"),
    "workflow_parallel": ("branchCount", "parallelSteps"),
    "workflow_loop": ("loopType", "totalIterations"),
    "workflow_sleep": ("sleepDurationMs", "sleepType"),
    "workflow_wait_event": ("eventName", "eventReceived"),
    "processor_run": ("processorId",),
}
TOOL_STEPS = ("tool_call", "mcp_tool_call")


def js_round2(value: float) -> float:
    """Mastra's `roundToTwoDecimals`: ``Math.round((x + Number.EPSILON) * 100) / 100``."""
    return math.floor((value + 2.220446049250313e-16) * 100 + 0.5) / 100


def js_json(value: Any) -> str:
    """`JSON.stringify`, near enough to compare two values: compact, integral floats as integers."""
    def js(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
            return int(v)
        if isinstance(v, Mapping):
            return {str(k): js(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [js(x) for x in v]
        return v
    return json.dumps(js(value), ensure_ascii=False, separators=(",", ":"))


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _as_object(value: Any) -> Any:
    """Mastra's rule for a tool's args and result: an object as is, anything else as ``{value}``."""
    return value if isinstance(value, dict) else {"value": value}


def steps_of(calls: Sequence[ToolCall]) -> list[Step]:
    """A run's tool calls as Mastra's `extractTrajectory` steps: a call succeeded when it has a
    result not flagged ``isError: true`` (a flagged call keeps its result)."""
    steps = []
    for call in calls:
        step: Step = {"stepType": "tool_call", "name": call.name, "toolArgs": _as_object(_parsed(call.args))}
        if call.state == "result" and call.result is not None:
            step["toolResult"] = _as_object(_parsed(call.result))
        step["success"] = call.state == "result" and not call.is_error
        steps.append(step)
    return steps


def expected_steps(value: Any, where: str) -> list[Step]:
    """Expected steps as Mastra's `ExpectedStep`s: a step name alone becomes ``{"name": ...}``."""
    if not isinstance(value, list):
        raise InvalidRunError(f"{where} must be a list of step names or steps ({{name, stepType?, ...}})")
    steps = []
    for i, step in enumerate(value):
        step = {"name": step} if isinstance(step, str) else step
        if not isinstance(step, dict) or not isinstance(step.get("name"), str):
            raise InvalidRunError(f"{where}[{i}]: a step must be a name or a dict with a name")
        steps.append(step)
    return steps


def step_matches(actual: Step, expected: Step) -> bool:
    """Mastra's `expectedStepMatches`: the name, the step type when given, and each comparable
    field the expected step gives."""
    if actual.get("name") != expected.get("name"):
        return False
    kind = expected.get("stepType")
    if kind and actual.get("stepType") != kind:
        return False
    for name in COMPARABLE_FIELDS.get(kind, ()) if kind else ():
        if expected.get(name) is None:
            continue
        if actual.get(name) is None or js_json(actual[name]) != js_json(expected[name]):
            return False
    return True


def compare(actual: Sequence[Step], expected: Sequence[Step], ordering: str = "relaxed",
            allow_repeated: bool = True) -> Result:
    """Mastra's `compareTrajectories`: matched expected steps / expected steps (strict order
    also takes half the extra steps' share off), 0.1 off per repeated step name when repeats
    are not allowed; no expected steps scores 1 only when none were taken."""
    names = [s.get("name") for s in actual]
    if not expected:
        return {"score": 1 if not actual else 0, "matchedSteps": 0, "totalExpectedSteps": 0,
                "totalActualSteps": len(actual), "missingSteps": [], "extraSteps": names, "outOfOrderSteps": [],
                "repeatedSteps": []}
    counts: dict[Any, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    repeated = [name for name, n in counts.items() if n > 1]
    wanted = [s.get("name") for s in expected]
    matched: set[int] = set()
    out_of_order: list[Any] = []
    if ordering == "strict":
        for i in range(max(len(names), len(wanted))):
            got, want = (names[i] if i < len(names) else None), (wanted[i] if i < len(wanted) else None)
            if got == want:
                if step_matches(actual[i], expected[i]):
                    matched.add(i)
            elif got and got in wanted:
                out_of_order.append(got)
    elif ordering == "unordered":
        used: set[int] = set()
        for i, step in enumerate(expected):
            for j, taken in enumerate(actual):
                if j not in used and step_matches(taken, step):
                    matched.add(i)
                    used.add(j)
                    break
    else:  # relaxed: in order, other steps allowed between
        last = -1
        for i, want in enumerate(wanted):
            for j in range(last + 1, len(names)):
                if names[j] == want and step_matches(actual[j], expected[i]):
                    matched.add(i)
                    last = j
                    break
            else:
                if want in names:
                    out_of_order.append(want)
    score = len(matched) / len(expected)
    if ordering == "strict" and len(names) > len(wanted):
        score = max(0.0, score - (len(names) - len(wanted)) / len(wanted) * 0.5)
    if not allow_repeated and repeated:
        score = max(0.0, score - len(repeated) * 0.1)
    return {"score": js_round2(max(0.0, min(1.0, score))), "matchedSteps": len(matched),
            "totalExpectedSteps": len(expected), "totalActualSteps": len(actual),
            "missingSteps": [w for i, w in enumerate(wanted) if i not in matched],
            "extraSteps": [n for n in names if n not in set(wanted)], "outOfOrderSteps": out_of_order,
            "repeatedSteps": repeated}


def _measure(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def efficiency(trajectory: Mapping[str, Any], max_steps: Any = None, max_total_tokens: Any = None,
               max_total_duration_ms: Any = None, no_redundant_calls: bool = True) -> Result:
    """Mastra's `checkTrajectoryEfficiency`: the mean over the budgets given (1, or less by the
    share over budget) and redundant calls (the same tool with the same args twice in a row:
    0.2 off each). A budget that cannot be checked raises `ValueError`, as Mastra's throws."""
    for name, limit in (("maxSteps", max_steps), ("maxTotalTokens", max_total_tokens),
                        ("maxTotalDurationMs", max_total_duration_ms)):
        if limit is not None and not _measure(limit):
            raise ValueError(f"Invalid {name} budget: expected a finite nonnegative number")
    steps = list(trajectory.get("steps") or [])
    tokens, generations, waiting = 0, 0, list(steps)
    while waiting:
        step = waiting.pop()
        if step.get("stepType") == "model_generation":
            generations += 1
            if max_total_tokens is not None and not (_measure(step.get("promptTokens"))
                                                     and _measure(step.get("completionTokens"))):
                raise ValueError(f'Cannot evaluate token budget: model generation "{step.get("name")}" has '
                                 "missing or invalid token counts")
            tokens += (step.get("promptTokens") or 0) + (step.get("completionTokens") or 0)
        waiting += list(step.get("children") or [])
    if max_total_tokens is not None and (generations == 0 or not _measure(tokens)):
        raise ValueError("Cannot evaluate token budget: missing model-generation measurements or invalid total tokens")
    total_ms = trajectory.get("totalDurationMs")
    if total_ms is None:
        total_ms = 0
        for step in steps:
            total_ms += step.get("durationMs") or 0
    if max_total_duration_ms is not None:
        has = (_measure(trajectory["totalDurationMs"]) if trajectory.get("totalDurationMs") is not None
               else bool(steps) and all(_measure(s.get("durationMs")) for s in steps))
        if not has or not _measure(total_ms):
            raise ValueError("Cannot evaluate duration budget: missing or invalid duration measurements")
    redundant = []
    if no_redundant_calls:
        for i in range(1, len(steps)):
            before, now = steps[i - 1], steps[i]
            if (before.get("name") == now.get("name") and before.get("stepType") == now.get("stepType")
                    and before.get("stepType") in TOOL_STEPS
                    and js_json(before.get("toolArgs")) == js_json(now.get("toolArgs"))):
                redundant.append({"name": now.get("name"), "index": i})
    over_steps = max_steps is not None and len(steps) > max_steps
    over_tokens = max_total_tokens is not None and tokens > max_total_tokens
    over_ms = max_total_duration_ms is not None and total_ms > max_total_duration_ms
    parts: list[float] = []
    for limit, used, over in ((max_steps, len(steps), over_steps), (max_total_tokens, tokens, over_tokens),
                              (max_total_duration_ms, total_ms, over_ms)):
        if limit is not None:
            parts.append(max(0.0, 1 - (used - limit) / limit if limit else -math.inf) if over else 1)  # JS: x / 0 = inf
    if no_redundant_calls:
        parts.append(1 if not redundant else max(0.0, 1 - len(redundant) * 0.2))
    score = add_up(parts) / len(parts) if parts else 1
    return {"score": js_round2(max(0.0, min(1.0, score))), "totalSteps": len(steps), "overStepBudget": over_steps,
            "totalTokens": tokens, "overTokenBudget": over_tokens, "totalDurationMs": total_ms,
            "overDurationBudget": over_ms, "redundantCalls": redundant}


def blacklist(steps: Sequence[Step], tools: Sequence[str] = (), sequences: Sequence[Sequence[str]] = ()) -> Result:
    """Mastra's `checkTrajectoryBlacklist`: 0 when a forbidden tool was called or a forbidden
    sequence of steps was taken (contiguous), else 1."""
    names = [s.get("name") for s in steps]
    tools_hit = [t for t in tools if t in names]
    sequences_hit = []
    for sequence in sequences:
        sequence = list(sequence)
        if sequence and any(names[i:i + len(sequence)] == sequence for i in range(len(names) - len(sequence) + 1)):
            sequences_hit.append(sequence)
    return {"score": 0 if tools_hit or sequences_hit else 1, "violatedTools": tools_hit,
            "violatedSequences": sequences_hit}


def tool_failures(steps: Sequence[Step], max_retries_per_tool: int = 2) -> Result:
    """Mastra's `analyzeToolFailures`: runs of calls to one tool after a failed call are retries;
    each retry of a tool beyond `max_retries_per_tool` takes 0.2 off."""
    calls = [s for s in steps if s.get("stepType") in TOOL_STEPS]
    if not calls:
        return {"score": 1, "patterns": [], "totalRetries": 0, "excessiveRetryTools": []}
    patterns: list[dict[str, Any]] = []
    i, total = 0, 0
    while i < len(calls):
        retries, j = 0, i + 1
        while j < len(calls) and calls[j].get("name") == calls[i].get("name"):
            if calls[j - 1].get("success") is False:
                retries += 1
            j += 1
        if retries > 0:
            after = calls[j] if j < len(calls) else None
            succeeded = calls[j - 1].get("success") is not False
            pattern = {"toolName": calls[i].get("name"), "retryCount": retries,
                       "fellBackToAlternative": after is not None and not succeeded,
                       "eventuallySucceeded": succeeded}
            if after is not None and not succeeded:
                pattern["alternativeTool"] = after.get("name")
            patterns.append(pattern)
            total += retries
        i = j
    excessive = [p["toolName"] for p in patterns if p["retryCount"] > max_retries_per_tool]
    extra = sum(max(0, p["retryCount"] - max_retries_per_tool) for p in patterns)
    return {"score": js_round2(max(0.0, min(1.0, max(0.0, 1 - extra * 0.2)))), "patterns": patterns,
            "totalRetries": total, "excessiveRetryTools": excessive}


__all__ = ["blacklist", "compare", "efficiency", "expected_steps", "js_json", "js_round2", "step_matches", "steps_of",
           "tool_failures"]
