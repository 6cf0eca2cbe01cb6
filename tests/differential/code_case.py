"""What a code scorer's differential case is: `CodeCase` and the builders of its runs (see
cases_code.py's docstring for how a case is compared)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.differential.cases_agents import agent_input, message, tool_part
from tests.differential.parity import Differs

SAME = "same"  # whatever Mastra's score is: localjudge's is it, rounded

# localjudge's code scorer or check -> Mastra 1.10.2's factory in @mastra/evals/scorers/prebuilt
CODE_FACTORIES = {
    "completeness": "createCompletenessScorer", "content_similarity": "createContentSimilarityScorer",
    "keyword_coverage": "createKeywordCoverageScorer", "textual_difference": "createTextualDifferenceScorer",
    "tone": "createToneScorer", "code_tool_call_accuracy": "createToolCallAccuracyScorerCode",
    "code_trajectory_accuracy": "createTrajectoryAccuracyScorerCode", "code_trajectory": "createTrajectoryScorerCode",
    "check_includes": "includes", "check_excludes": "excludes", "check_equals": "equals", "check_matches": "matches",
    "check_similarity": "similarity", "check_called_tool": "calledTool", "check_did_not_call": "didNotCall",
    "check_tool_order": "toolOrder", "check_max_tool_calls": "maxToolCalls", "check_used_no_tools": "usedNoTools",
    "check_no_tool_errors": "noToolErrors",
}


@dataclass(frozen=True)
class CodeCase:
    """One run through a code scorer on both sides (see the module docstring)."""

    scorer: str
    name: str
    run: Mapping[str, Any]
    expect: float | str | Differs
    options: Mapping[str, Any] = field(default_factory=dict)
    positional: Sequence[Any] = ()
    trajectory: bool = False
    same: Mapping[str, str] = field(default_factory=dict)
    reason: bool = False  # the reason is Mastra's too (code_trajectory's is a function in Mastra)

    @property
    def id(self) -> str:
        return f"{self.scorer}/{self.name}"

    def for_mastra(self) -> dict[str, Any]:
        return {"id": self.id, "factory": CODE_FACTORIES[self.scorer], "positional": list(self.positional),
                "run": dict(self.run), "trajectory": self.trajectory}


def texts(given: str, made: str) -> dict[str, Any]:
    """An agent run of one user message (its text may be empty) and one assistant message."""
    return {"input": {**agent_input(""), "inputMessages": [message("user", given)]},
            "output": [message("assistant", made)]}


def tools(*calls: dict[str, Any], text: str = "Done.", request: str = "What is the weather in Paris?",
          **more: Any) -> dict[str, Any]:
    """An agent run whose one assistant message holds these tool calls and `text`."""
    return {"input": agent_input(request), "output": [message("assistant", text, parts=list(calls))], **more}


def call(name: str, args: dict[str, Any] | None = None, result: Any = None, state: str = "result",
         call_id: str | None = None, **extra: Any) -> dict[str, Any]:
    part = tool_part(name, args if args is not None else {"city": "Paris"}, {"ok": True} if result is None else result,
                     state, call_id)
    if state != "result":
        del part["toolInvocation"]["result"]
    part["toolInvocation"].update(extra)
    return part


def case(scorer: str, name: str, run: Mapping[str, Any], expect: float | str | Differs = SAME, *args: Any,
         options: Mapping[str, Any] | None = None, **more: Any) -> CodeCase:
    return CodeCase(scorer, name, run, expect, options or {}, args, **more)
