"""`run_evals`' scorer configs, as Mastra's `runEvals` takes them: ``{"agent", "trajectory"}``
(Mastra's AgentScorerConfig) and ``{"workflow", "steps"}`` (its WorkflowScorerConfig).

Mastra's `runEvals` calls an Agent or a Workflow and decides by the object which one it has; a
Python target is neither, so `run_evals`' ``target_type`` says which it stands for. An agent target
returns its output (text, or Mastra's messages with their tool invocations); a workflow target
returns Mastra's workflow result, ``{"status", "result"?, "steps": {step_id: {"status",
"payload"?, "output"?}}, ...}`` (what ``run.start()`` resolves to). Then, as Mastra's `runScorers`:

- `agent` scorers judge the item's input and the target's output, as a list of scorers does;
- `trajectory` scorers judge the same run: localjudge's trajectory scorers (and a custom scorer's
  `run.tool_calls`) read its tool calls as the steps Mastra's `extractTrajectory` makes of them
  (Mastra's trajectory from stored traces needs its storage: none here);
- `workflow` scorers judge the item's input and the workflow's `result` (a workflow that did not
  succeed has none: its run is unscored, ``target_failed``; Mastra gives the scorers no output);
- `steps` scorers (``{step_id: [scorers]}``) judge a step's `payload` (else the item's input) and
  `output` where the step succeeded with an output; Mastra skips any other step silently, here its
  run is recorded not scorable, saying why (a step the workflow did not run, or one that failed).

Each group lists scorers only: a ``{"scorer", "threshold"}`` entry, which Mastra's configs do not
take (it has no `run`), is refused, as are unknown keys, `steps` not mapping step ids to lists,
a config for the other kind of target and a config with no scorer, before any target runs.
A workflow's trajectory (Mastra's `extractWorkflowTrajectory`: its steps as ``workflow_step``
steps) is not read by localjudge's trajectory scorers, which read tool calls: refused too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from localjudge.evaluation.eval_items import Entry, entries_of
from localjudge.result import ScoreResult
from localjudge.scoring import Scorer

TargetType = Literal["agent", "workflow"]
TARGET_TYPES: tuple[TargetType, ...] = ("agent", "workflow")
CONFIG_KEYS: dict[str, tuple[str, ...]] = {"agent": ("agent", "trajectory"), "workflow": ("workflow", "steps")}
Path = tuple[str, ...]  # where a result goes: (id,) for a list, ("agent", id), ("steps", step_id, id)...


@dataclass(frozen=True)
class ScorerPlan:
    """Every scorer with where its results go (`slots`), and the thresholded entries of a list."""

    slots: list[tuple[Path, Scorer]]
    entries: list[Entry]
    target_type: TargetType


def plan_of(scorers: Sequence[Any] | Mapping[str, Any], target_type: str) -> ScorerPlan:
    """A list of scorer entries, or a scorer config for `target_type`, checked (module docstring)."""
    if target_type not in TARGET_TYPES:
        raise ValueError(f"target_type must be one of {', '.join(TARGET_TYPES)}, got {target_type!r}")
    kind: TargetType = "workflow" if target_type == "workflow" else "agent"
    if not isinstance(scorers, Mapping):
        entries = entries_of(scorers)
        return ScorerPlan([((s.id,), s) for s, _ in entries], entries, kind)
    keys, other = CONFIG_KEYS[kind], "workflow" if kind == "agent" else "agent"
    if kind == "workflow" and "trajectory" in scorers:
        raise ValueError("scorers['trajectory']: a workflow's trajectory (its steps as Mastra's workflow_step "
                         "steps) is not supported: localjudge's trajectory scorers read an agent's tool calls")
    unknown = [k for k in scorers if k not in keys]
    if unknown:
        hint = (f" ({', '.join(map(repr, unknown))} belong to {'a' if other == 'workflow' else 'an'} {other}'s "
                f"config: pass target_type={other!r})") if set(unknown) <= set(CONFIG_KEYS[other]) else ""
        raise ValueError(f"scorers: {'an' if kind == 'agent' else 'a'} {kind}'s scorer config takes "
                         f"{', '.join(map(repr, keys))}, not {', '.join(map(repr, unknown))}{hint}")
    slots: list[tuple[Path, Scorer]] = []
    for key in (k for k in keys if k in scorers):
        groups = _step_groups(scorers[key]) if key == "steps" else {(): scorers[key]}
        for where, group in groups.items():
            label = "scorers" + "".join(f"[{k!r}]" for k in (key, *where))
            slots += [((key, *where, s.id), s) for s in _listed(group, label)]
    if not slots:
        raise ValueError(f"scorers: give at least one {' or '.join(keys)} scorer")
    return ScorerPlan(slots, [], kind)


def _step_groups(steps: Any) -> dict[Path, Any]:
    if not isinstance(steps, Mapping) or not all(isinstance(k, str) for k in steps):
        raise ValueError(f"scorers['steps'] must map step ids to lists of scorers, got {type(steps).__name__}")
    return {(step_id,): group for step_id, group in steps.items()}


def _listed(group: Any, where: str) -> list[Scorer]:
    """One group's scorers: a list of scorers, each once, with no threshold."""
    if isinstance(group, (str, bytes, Mapping)) or not isinstance(group, Sequence):
        raise ValueError(f"{where} must be a list of scorers, got {type(group).__name__}")
    entries = entries_of(group, where)
    if any(threshold is not None for _, threshold in entries):
        raise ValueError(f"{where}: a threshold is not taken inside a scorer config (Mastra's configs list "
                         "scorers only): give a list of scorers, or use gates")
    return [s for s, _ in entries]


def check_workflow_items(data: Sequence[Mapping[str, Any]]) -> None:
    """Mastra's rule: a workflow runs one input per item (no `inputs`, no `turns`)."""
    for i, item in enumerate(data):
        for key in ("inputs", "turns"):
            if key in item:
                raise ValueError(f"item {i}: {key!r} is not supported for workflow targets")


def workflow_checked(ran: tuple[list[Any], str | None]) -> tuple[list[Any], str | None]:
    """A workflow target's return, or the error saying it is not Mastra's workflow result."""
    outputs, error = ran
    if error is not None:
        return ran
    found = outputs[0] if outputs else None
    if not isinstance(found, Mapping):
        why = f"got {type(found).__name__}"
    elif not isinstance(found.get("status"), str):
        why = "got one with no 'status'"
    elif not isinstance(found.get("steps", {}), Mapping):
        why = "its 'steps' must map step ids to step results"
    else:
        return outputs, None
    return outputs, f"target failed: a workflow target must return Mastra's workflow result {{'status', " \
                    f"'result'?, 'steps': {{step_id: ...}}}}: {why}"


def workflow_row(row: dict[str, Any]) -> dict[str, Any]:
    """The run of a workflow target's item: its output is the workflow's result (None unless the
    workflow succeeded), as Mastra's scoring data."""
    found = row["output"]
    return {**row, "output": found.get("result") if found.get("status") == "success" else None}


Unscored = tuple[Literal["target_failed", "not_scorable"], str]


def slot_run(path: Path, row: dict[str, Any], target_result: Any,
             target_type: TargetType) -> dict[str, Any] | Unscored:
    """The run the scorer at `path` judges for one item, or why it has none (module docstring)."""
    if target_type == "agent":
        return row
    if len(path) == 3:  # ("steps", step_id, id)
        step_id, step = path[1], (target_result.get("steps") or {}).get(path[1])
        if not isinstance(step, Mapping):
            return "not_scorable", f"the workflow result has no step {step_id!r}: not judged"
        if step.get("status") != "success" or "output" not in step:
            return "not_scorable", f"step {step_id!r} ended {step.get('status')!r} with no output: not judged"
        payload = step.get("payload")
        return {**row, "input": row.get("input") if payload is None else payload, "output": step["output"],
                "run_id": f"{row['run_id']}/step-{step_id}"}
    if target_result.get("status") != "success":
        return "target_failed", f"the workflow ended {target_result.get('status')!r}: no result to judge"
    return row


def slot_runs(plan: ScorerPlan, path: Path, scorer: Scorer, rows: list[dict[str, Any]],
              ran: list[tuple[list[Any], str | None]],
              found: list[dict[Path, ScoreResult]]) -> dict[int, dict[str, Any]]:
    """The runs the scorer at `path` judges, by item index; each item it has none for is given its
    unscored result in `found` (``target_failed`` where the target failed, or `slot_run`'s why)."""
    judged: dict[int, dict[str, Any]] = {}
    for i, (row, (outputs, error)) in enumerate(zip(rows, ran, strict=True)):
        run: dict[str, Any] | Unscored = ("target_failed", str(error)) if error is not None else slot_run(
            path, row, outputs[0] if outputs else None, plan.target_type)
        if isinstance(run, tuple):
            found[i][path] = ScoreResult.unscored(row["run_id"], scorer.name, *run)
        else:
            judged[i] = run
    return judged


def nested(found: Mapping[Path, Any]) -> dict[str, Any]:
    """Values by path as Mastra's nested results: ``{id: v}`` for a list, ``{"agent": {id: v}}``,
    ``{"steps": {step_id: {id: v}}}``..."""
    out: dict[str, Any] = {}
    for path, value in found.items():
        place = out
        for key in path[:-1]:
            place = place.setdefault(key, {})
        place[path[-1]] = value
    return out


__all__ = ["CONFIG_KEYS", "TARGET_TYPES", "Path", "ScorerPlan", "TargetType", "check_workflow_items", "nested",
           "plan_of", "slot_run", "slot_runs", "workflow_checked", "workflow_row"]
