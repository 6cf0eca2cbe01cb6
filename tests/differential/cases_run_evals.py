"""The `run_evals` cases: Mastra's `runEvals` (an Agent whose mock model gives scripted replies) and
localjudge's (a target giving the same replies in the same order) with the same function scorers
and gates (`evalScorers` in tests/differential/node/custom_scorers.mjs, and their twins here).

Each case names scorers as the harness does: a name, or ``{"scorer": name, "threshold": t}``;
items are Mastra's (`input`, `inputs`, or `turns` naming their gates and scorers). Every case runs
under both settings: under ``compat="mastra"`` the scorers are built with it and every figure is
Mastra's; by default a mean may differ where the case pins it (`differs`, by scorer id).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from localjudge import Scorer, create_scorer, not_scorable
from localjudge.scorers import checks, code_trajectory_accuracy_scorer
from tests.differential.parity import Differs


def scorers(compat: str) -> dict[str, Scorer]:
    """The twins of custom_scorers.mjs's evalScorers, built under `compat`: a run's output is the
    last assistant message with text, as Mastra's getAssistantMessageFromRunOutput reads it."""
    def constant(name: str, value: float) -> Scorer:  # Mastra's generateScore(() => value)
        return create_scorer(name, score_returns="score", compat=compat).generate_score(lambda run, results: value)

    return {
        "hasX": create_scorer("has_x", compat=compat).generate_score(
            lambda run, results: 1 if "x" in run.output else 0),
        "polite": create_scorer("polite", compat=compat).generate_score(
            lambda run, results: 1 if "please" in run.output else 0),
        "long": (create_scorer("long", compat=compat)
                 .preprocess(lambda run, results: not_scorable("too short") if len(run.output) < 6 else {})
                 .generate_score(lambda run, results: min(1, len(run.output) / 20))),
        "broken": create_scorer("broken", compat=compat).generate_score(lambda run, results: 1 / 0),
        "third": constant("third", 1 / 3),
        "big": constant("big", 87.5),
        "negative": constant("negative", -1),
        "toolSteps": create_scorer("tool_steps", score_returns="score", compat=compat).generate_score(
            lambda run, results: float(sum(c.state == "result" and not c.is_error for c in run.tool_calls))),
        "trajectoryAccuracy": code_trajectory_accuracy_scorer(compat=compat),
        "outLength": create_scorer("out_length", score_returns="score", compat=compat).generate_score(
            lambda run, results: float(len(run.output))),
        "inLength": create_scorer("in_length", score_returns="score", compat=compat).generate_score(
            lambda run, results: float(len(run.input))),
        "saysPlease": create_scorer("says_please", compat=compat).generate_score(
            lambda run, results: 1 if "please" in run.output else 0),
        "digits": checks.matches("\\d+", flags="g", compat=compat),
    }


def workflow_runs(steps: list[tuple[str, str]]) -> Callable[[Any], Any]:
    """localjudge's twin of the harness's Workflow: steps run in turn, each output its input and its
    word, returned as Mastra 1.71.0's ``run.start()`` result (its step results carry no payload)."""
    def run(given: Any) -> dict[str, Any]:
        found: dict[str, Any] = {"input": given}
        out = given
        for step_id, word in steps:
            out = f"{out} {word}"
            found[step_id] = {"status": "success", "output": out}
        return {"status": "success", "steps": found, "input": given,
                "stepExecutionPath": [step_id for step_id, _ in steps], "result": out}

    return run


def agent_turns(replies: list[Any]) -> Callable[[Any], Any]:
    """localjudge's target giving Mastra's agent replies: text as it is; tool calls (``{"tool",
    "args"}``), each answered ``{"done": name}``, then the text, as Mastra's one assistant message."""
    def reply(message: Any) -> Any:
        parts = []
        while not isinstance(replies[0], str):
            call = replies.pop(0)
            parts.append({"type": "tool-invocation", "toolInvocation": {
                "state": "result", "toolCallId": f"call-{len(parts) + 1}", "toolName": call["tool"],
                "args": call.get("args", {}), "result": {"done": call["tool"]}}})
        text = replies.pop(0)
        if not parts:
            return text
        return [{"role": "assistant", "content": {"format": 2, "parts": [*parts, {"type": "text", "text": text}],
                                                  "content": text}}]

    return reply


@dataclass(frozen=True)
class RunEvalsCase:
    """One `runEvals` run on both sides: the replies, in order, the items, scorers and gates; and
    by scorer id, a mean the default setting gives otherwise (a difference of the closed table)."""

    name: str
    replies: list[Any]  # text, or {"tool": name, "args": {...}}: a tool call
    data: list[dict[str, Any]]
    scorers: list[Any] | dict[str, Any]  # entries, or a config: {"agent": [...], "trajectory": [...]}, ...
    gates: list[str]
    differs: Mapping[str, Differs] = field(default_factory=dict)
    workflow: list[tuple[str, str]] | None = None  # the target is a Workflow of these (id, word) steps

    def for_mastra(self) -> dict[str, Any]:
        return {"id": f"run-evals/{self.name}", "runEvals": {
            "replies": self.replies, "data": self.data, "scorers": self.scorers, "gates": self.gates,
            **({"workflow": [list(s) for s in self.workflow]} if self.workflow else {})}}

    def target(self, replies: list[Any]) -> tuple[Callable[[Any], Any], str]:
        """localjudge's target and its `target_type`: the Workflow's twin, or the replies in turn."""
        return (workflow_runs(self.workflow), "workflow") if self.workflow else (agent_turns(replies), "agent")

    def for_local(self, compat: str = "localjudge") -> dict[str, Any]:
        """`run_evals`' arguments: the names made scorers, built under `compat`."""
        made = scorers(compat)

        def entry(e: Any) -> Any:
            return made[e] if isinstance(e, str) else {"scorer": made[e["scorer"]], "threshold": e["threshold"]}

        def item(it: Mapping[str, Any]) -> dict[str, Any]:
            if "turns" not in it:
                return dict(it)
            return {**it, "turns": [{"input": t["input"], "gates": [made[g] for g in t.get("gates", [])],
                                     "scorers": [entry(s) for s in t.get("scorers", [])]} for t in it["turns"]]}

        given = self.scorers
        def group(names: Any) -> Any:  # a config's list of names, or its steps: {step_id: [names]}
            return {k: group(v) for k, v in names.items()} if isinstance(names, dict) else [made[n] for n in names]

        chosen = group(given) if isinstance(given, dict) else [entry(e) for e in given]
        return {"data": [item(it) for it in self.data], "scorers": chosen,
                "gates": [made[g] for g in self.gates]}


RUN_EVALS_CASES = [
    RunEvalsCase("gates-thresholds", ["hello x", "ok", "please x indeed", "tiny"],
                 [{"input": "a"}, {"inputs": ["b", "c"]}, {"turns": [{"input": "d", "gates": ["hasX"]}]}],
                 ["long", {"scorer": "polite", "threshold": 0.5}], ["hasX", "broken"]),
    RunEvalsCase("turns", ["x please, welcome", "x", "no", "please and thank you"],
                 [{"turns": [{"input": "hi", "gates": ["hasX"], "scorers": ["long"]},
                             {"input": "more", "scorers": [{"scorer": "polite", "threshold": 0.5}, "hasX"]}]},
                  {"turns": [{"input": "hi", "gates": ["hasX"]},
                             {"input": "more", "scorers": [{"scorer": "polite", "threshold": 0.5}]}]}],
                 [{"scorer": "long", "threshold": {"min": 0.2, "max": 0.9}}], []),
    RunEvalsCase("all-not-scorable", ["a", "b"], [{"input": "q1"}, {"input": "q2"}],
                 [{"scorer": "long", "threshold": 0.5}], ["long"]),
    RunEvalsCase("passed", ["x, please", "please x, thanks"], [{"input": "q1"}, {"input": "q2"}],
                 [{"scorer": "polite", "threshold": {"min": 0.5}}, "long"], ["hasX"]),
    # Custom scores kept as returned: the mean of 1/3 and 1/3, of 87.5 (a gate it passes), of -1
    # (below a threshold of 0); by default the mean of 0.33 and 0.33.
    RunEvalsCase("raw-scores", ["a", "b"], [{"input": "q1"}, {"input": "q2"}],
                 ["third", {"scorer": "negative", "threshold": 0}], ["big"],
                 differs={"third-scorer": Differs("unrounded", 1 / 3, 0.33)}),
    # Mastra's AgentScorerConfig: agent scorers judge the reply, trajectory scorers the tool calls as
    # Mastra's extractTrajectory makes steps of them, with the item's expectedTrajectory.
    RunEvalsCase("agent-config", [{"tool": "weather", "args": {"city": "Paris"}}, "please take an umbrella",
                                  "sunny", {"tool": "weather", "args": {"city": "Rome"}},
                                  {"tool": "forecast", "args": {"days": 2}}, "x, please plan ahead"],
                 [{"input": "rain", "expectedTrajectory": {"steps": [{"name": "weather"}]}},
                  {"input": "sun", "expectedTrajectory": {"steps": [{"name": "weather"}]}},
                  {"input": "week", "expectedTrajectory": {"steps": [{"name": "weather"}, {"name": "forecast"}]}}],
                 {"agent": ["polite", "long"], "trajectory": ["trajectoryAccuracy", "toolSteps"]}, ["hasX"]),
    # Mastra's WorkflowScorerConfig: workflow scorers judge the result, step scorers each step's output
    # (with the item's input: 1.71.0's result carries no step payload).
    RunEvalsCase("workflow-config", [], [{"input": "trip"}, {"input": "a plan"}],
                 {"workflow": ["outLength", "saysPlease"], "steps": {"draft": ["outLength", "inLength"],
                                                                      "polish": ["saysPlease"]}},
                 ["saysPlease"], workflow=[("draft", "drafted"), ("polish", "please")]),
    # checks.matches(/\d+/g) on five replies that each hold a number: Mastra's RegExp starts each test
    # where the last match ended (3, then 5: past "9"; reset; 3: past "8 y"), so 1, 1, 0, 1, 0.
    RunEvalsCase("global-regex", ["a 1", "b c 7", "9", "x 5", "8 y"],
                 [{"input": f"q{i}"} for i in range(1, 6)], ["digits"], [],
                 differs={"check-matches": Differs("matches-global-state", 0.6, 1.0)}),
]
