"""Code trajectory (Mastra's `createTrajectoryScorerCode`, no model): the agent's steps judged on
accuracy, efficiency, forbidden tools and tool failures at once.

Inputs: the run's tool calls (as Mastra's `extractTrajectory` reads them) and the expectation:
the `defaults` option (Mastra's `TrajectoryExpectation`: ``steps``, ``ordering``,
``allowRepeatedSteps``, ``maxSteps``, ``maxTotalTokens``, ``maxTotalDurationMs``,
``noRedundantCalls``, ``blacklistedTools``, ``blacklistedSequences``, ``maxRetriesPerTool``),
each key overridden by the run's own `expected_trajectory` / `expectedTrajectory`.

Score, as Mastra's: each dimension that is configured gives a score (accuracy: `steps` given;
efficiency: a budget or `noRedundantCalls` given; tool failures: when a tool was retried after
failing; blacklist: forbidden tools or sequences given), and the score is their mean weighted by
`weights` (default accuracy 0.4, efficiency 0.3, tool failures 0.2, blacklist 0.1), rounded as
`Math.round(x * 100) / 100`. Any forbidden tool or sequence scores 0. Expected steps with
``children`` are checked against the matching step's children the same way, and count 30%. No
dimension at all scores 1. A token or duration budget needs measurements that tool calls read
from messages do not carry: such a run is unscored (Mastra throws). Higher is better.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import InvalidRunError, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, RunSample, code_build, code_scorer, plain
from localjudge.scorers.coded.code_trajectory_accuracy import check_ordering, given, run_expectation
from localjudge.scorers.coded.trajectory_compare import (
    blacklist,
    compare,
    efficiency,
    expected_steps,
    steps_of,
    tool_failures,
)
from localjudge.scoring import Results

WEIGHTS = {"accuracy": 0.4, "efficiency": 0.3, "toolFailures": 0.2, "blacklist": 0.1}
BUDGETS = ("maxSteps", "maxTotalTokens", "maxTotalDurationMs", "noRedundantCalls")


def js_round(value: float) -> float:
    """``Math.round(value * 100) / 100`` (halves up, on the binary value)."""
    return math.floor(value * 100 + 0.5) / 100


def weighted(scores: list[tuple[float, float]]) -> float:
    """Mastra's weighted mean of (weight, value) pairs, summed in its order; 1 when none weigh."""
    total = 0.0
    for weight, _ in scores:
        total += weight
    if total <= 0:
        return 1.0
    mean = 0.0
    for weight, value in scores:
        mean += (weight / total) * value
    return mean


def dimensions(steps: list[dict[str, Any]], config: Mapping[str, Any], duration: Any = None) -> dict[str, Any]:
    """Accuracy, efficiency, blacklist and tool failures of `steps` under `config` (each None when
    not configured; tool failures always)."""
    found: dict[str, Any] = {"accuracy": None, "efficiency": None, "blacklist": None}
    if config.get("steps") is not None:
        found["accuracy"] = compare(steps, expected_steps(config["steps"], "expected steps"),
                                    given(dict(config), "ordering", "relaxed"),
                                    given(dict(config), "allowRepeatedSteps", True))
    if any(config.get(key) is not None for key in BUDGETS):
        trajectory: dict[str, Any] = {"steps": steps}
        if duration is not None:
            trajectory["totalDurationMs"] = duration
        found["efficiency"] = efficiency(trajectory, config.get("maxSteps"), config.get("maxTotalTokens"),
                                         config.get("maxTotalDurationMs"),
                                         given(dict(config), "noRedundantCalls", True))
    if config.get("blacklistedTools") or config.get("blacklistedSequences"):
        found["blacklist"] = blacklist(steps, config.get("blacklistedTools") or (),
                                       config.get("blacklistedSequences") or ())
    found["toolFailures"] = tool_failures(steps, given(dict(config), "maxRetriesPerTool", 2))
    return found


def active(found: Mapping[str, Any], weights: Mapping[str, float]) -> list[tuple[float, float]]:
    """The (weight, score) of each dimension in play, in Mastra's order."""
    scores = []
    for key in ("accuracy", "efficiency"):
        if found.get(key) is not None:
            scores.append((weights[key], found[key]["score"]))
    failures = found.get("toolFailures")
    if failures is not None and failures["patterns"]:
        scores.append((weights["toolFailures"], failures["score"]))
    if found.get("blacklist") is not None:
        scores.append((weights["blacklist"], found["blacklist"]["score"]))
    return scores


def violated(nested: list[dict[str, Any]]) -> bool:
    """Mastra's `hasBlacklistViolation`: a forbidden tool or sequence at any nested level."""
    return any((r.get("blacklist") or {}).get("score") == 0 or violated(r.get("nested") or []) for r in nested)


def nested_results(expected: list[dict[str, Any]], actual: list[dict[str, Any]],
                   weights: Mapping[str, float]) -> list[dict[str, Any]]:
    """Mastra's `evaluateNestedExpectations`: each expected step with ``children`` against the
    first unmatched step of that name (and type) taken, recursively."""
    results: list[dict[str, Any]] = []
    used: set[int] = set()
    for want in expected:
        config = want.get("children")
        if not config:
            continue
        index = next((i for i, s in enumerate(actual) if i not in used and s.get("name") == want.get("name")
                      and (not want.get("stepType") or s.get("stepType") == want["stepType"])), None)
        if index is None:
            count = len(config.get("steps") or [])
            accuracy = ({"score": 0, "matchedSteps": 0, "totalExpectedSteps": count, "totalActualSteps": 0,
                         "missingSteps": [s.get("name") for s in config["steps"]], "extraSteps": [],
                         "outOfOrderSteps": [], "repeatedSteps": []} if count else None)
            results.append({"stepName": want.get("name"), "score": 0, "accuracy": accuracy})
            continue
        used.add(index)
        children = list(actual[index].get("children") or [])
        found = dimensions(children, config, actual[index].get("durationMs"))
        deeper = nested_results(expected_steps(config["steps"], "children steps"), children, weights) \
            if config.get("steps") else []
        entry = {"stepName": want.get("name"), **found, "nested": deeper}
        if (found["blacklist"] or {}).get("score") == 0 or (deeper and violated(deeper)):
            results.append({**entry, "score": 0})
            continue
        scores = active(found, weights)
        level = weighted(scores) if scores else 1.0
        if deeper:
            level = 0.7 * level + 0.3 * (_add([r["score"] for r in deeper]) / len(deeper))
        results.append({**entry, "score": js_round(level), "nested": deeper or None})
    return results


def _add(values: list[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


def _check_weights(weights: Mapping[str, Any] | None) -> dict[str, float]:
    given_weights = dict(weights or {})
    unknown = set(given_weights) - set(WEIGHTS)
    if unknown:
        raise ValueError(f"weights has unknown keys {sorted(unknown)}; known: {', '.join(WEIGHTS)}")
    out = {}
    for key, default in WEIGHTS.items():
        value = given_weights.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise TypeError(f"weights.{key} must be a number, got {value!r}")
        out[key] = max(0.0, float(value))
    return out


def code_trajectory_scorer(judge: Judge | None = None, *, defaults: Mapping[str, Any] | None = None,
                           weights: Mapping[str, float] | None = None, scale: float = 1.0,
                           compat: str = "localjudge") -> CodeScorer:
    """Mastra's unified code trajectory scorer (no model: `judge` is not used).

    Args:
        defaults: The expectation for every run (Mastra's `TrajectoryExpectation` keys); a run's
            own `expected_trajectory` overrides it key by key.
        weights: Weights of ``accuracy``, ``efficiency``, ``toolFailures`` and ``blacklist``.
    """
    base = plain(dict(defaults or {}))
    if not isinstance(base, dict):
        raise TypeError("defaults must be a mapping of Mastra's TrajectoryExpectation keys")
    if base.get("steps") is not None:
        expected_steps(base["steps"], "defaults.steps")
    check_ordering(given(base, "ordering", "relaxed"), "defaults.ordering")
    chosen = _check_weights(weights)

    def config_of(run: Sample) -> dict[str, Any]:
        return {**base, **run_expectation(run)}

    def check_run(run: RunSample) -> None:
        config = config_of(run)
        if config.get("steps") is not None:
            expected_steps(config["steps"], "expected_trajectory steps")
        check_ordering(given(config, "ordering", "relaxed"), "expected_trajectory ordering")

    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        config, steps = config_of(run), steps_of(run.tool_calls)
        try:
            found = dimensions(steps, config)
        except ValueError as error:  # a budget it cannot check: Mastra throws
            raise InvalidRunError(str(error)) from None
        nested = nested_results(expected_steps(config["steps"], "steps"), steps, chosen) if config.get("steps") else []
        return {**found, "nested": nested or None, "config": config}

    def score(run: Sample, results: Results) -> float:
        found = results["preprocess_step_result"]
        if (found["blacklist"] or {}).get("score") == 0:
            return 0.0
        scores, nested = active(found, chosen), found["nested"]
        if not scores and not nested:
            return 1.0
        level = weighted(scores) if scores else 1.0
        if nested:
            if violated(nested):
                return 0.0
            level = 0.7 * level + 0.3 * (_add([r["score"] for r in nested]) / len(nested))
        return js_round(level)

    return code_scorer("code_trajectory", code_build(scale, compat), preprocess=preprocess, score=score,
                       reason=trajectory_reason, reads=("output", "tool_calls", "expectation"),
                       positive="a sound trajectory",
                       check_run=check_run, settings={"defaults": base, "weights": chosen},
                       description="Trajectory accuracy, efficiency, forbidden tools and tool failures, weighted")


def trajectory_reason(run: Sample, results: Results) -> str:
    """Mastra's `generateReason` of this scorer, line for line (the score localjudge's)."""
    found = results["preprocess_step_result"]
    accuracy, used, banned, failures, nested = (found[k] for k in ("accuracy", "efficiency", "blacklist",
                                                                   "toolFailures", "nested"))
    parts = [f"Score: {results['score']:g}"]
    if banned and banned["score"] == 0:
        said = []
        if banned["violatedTools"]:
            said.append(f"forbidden tools used: {', '.join(banned['violatedTools'])}")
        if banned["violatedSequences"]:
            said.append("forbidden sequences: " + "; ".join(" → ".join(s) for s in banned["violatedSequences"]))
        return "\n".join([*parts, f"Blacklist violation: {'. '.join(said)}."])
    if nested and violated(nested):
        return "\n".join([*parts, f"Nested blacklist violation in: "
                                  f"{', '.join(r['stepName'] for r in nested if violated([r]))}."])
    if accuracy:
        said = [f"{accuracy['matchedSteps']}/{accuracy['totalExpectedSteps']} expected steps matched"]
        for key, label in (("missingSteps", "missing"), ("extraSteps", "extra"), ("outOfOrderSteps", "out of order")):
            if accuracy[key]:
                said.append(f"{label}: {', '.join(map(str, accuracy[key]))}")
        parts.append(f"Accuracy ({accuracy['score']:g}): {'. '.join(said)}.")
    if used:
        said = []
        if used["overStepBudget"]:
            said.append(f"over step budget ({used['totalSteps']} steps)")
        if used["overTokenBudget"]:
            said.append(f"over token budget ({used['totalTokens']} tokens)")
        if used["overDurationBudget"]:
            said.append(f"over duration budget ({used['totalDurationMs']}ms)")
        if used["redundantCalls"]:
            said.append(f"redundant calls: {', '.join(c['name'] for c in used['redundantCalls'])}")
        parts.append(f"Efficiency ({used['score']:g}): "
                     + (f"{'. '.join(said)}." if said else "all budgets met, no redundant calls."))
    if failures and failures["patterns"]:
        said = [f"{failures['totalRetries']} total retries"] if failures["totalRetries"] else []
        if failures["excessiveRetryTools"]:
            said.append(f"excessive retries: {', '.join(failures['excessiveRetryTools'])}")
        parts.append(f"Tool failures ({failures['score']:g}): {'. '.join(said)}.")
    if nested:
        scores = ", ".join(f"{r['stepName']}: {r['score']:g}" for r in nested)
        parts.append(f"Nested scores: {scores}.")
    return "\n".join(parts)


__all__ = ["WEIGHTS", "code_trajectory_scorer", "js_round", "nested_results", "trajectory_reason", "weighted"]
