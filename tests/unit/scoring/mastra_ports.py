"""Two custom scorers from Mastra's own docs, ported to `create_scorer` as written.

Sources (the packaged docs of `@mastra/core` 1.71.0, tests/differential/node/node_modules/
@mastra/core/dist/docs/references/):

- `gluten_checker`: docs-evals-custom-scorers.md, "Example: Create a custom scorer"
  (`glutenCheckerScorer`): a prompt-object analyze step, a function score, a prompt-object reason.
- `refund_judge`: reference-evals-not-scorable.md, "Usage example" (`refundJudge`): a function
  preprocess step that reads the original run's messages and returns `notScorable(...)`, and a
  prompt-object `generateScore` (the judge writes ``{score}``: Mastra's contract, the number is
  the score).

The TypeScript originals, verbatim, are in tests/differential/node/custom_scorers.mjs, where
the differential tier runs them under Mastra on the same judge answers
(tests/differential/test_custom_parity.py). The prompts are the originals' text; what differs
is only what localjudge always does: bounded schemas (at most 10 gluten sources of 80
characters) and a reason step answering ``{"reason"}`` under a schema where Mastra's writes
free text.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field

from localjudge import JudgeStep, Scorer, create_scorer, extract_tool_calls, not_scorable
from localjudge.judge import Judge
from localjudge.scoring import Reason, Strict

GLUTEN_INSTRUCTIONS = "You are a Chef that identifies if recipes contain gluten."


def generate_gluten_prompt(output: str) -> str:
    return f"""Check if this recipe is gluten-free.

Check for:
- Wheat
- Barley
- Rye
- Common sources like flour, pasta, bread

Example with gluten:
"Mix flour and water to make dough"
Response: {{
  "isGlutenFree": false,
  "glutenSources": ["flour"]
}}

Example gluten-free:
"Mix rice, beans, and vegetables"
Response: {{
  "isGlutenFree": true,
  "glutenSources": []
}}

Recipe to analyze:
{output}

Return your response in this format:
{{
  "isGlutenFree": boolean,
  "glutenSources": ["list ingredients containing gluten"]
}}"""


def generate_reason_prompt(is_gluten_free: bool, gluten_sources: list[str]) -> str:
    sources = (f"Sources of gluten: {', '.join(gluten_sources)}" if gluten_sources
               else "No gluten-containing ingredients found")
    return f"""Explain why this recipe is{'' if is_gluten_free else ' not'} gluten-free.

{sources}

Return your response in this format:
"This recipe is [gluten-free/contains gluten] because [explanation]\""""


class GlutenAnalysis(Strict):
    """The original's `z.object({isGlutenFree: z.boolean(), glutenSources: z.array(z.string())})`, bounded."""

    isGlutenFree: bool  # noqa: N815 - the original's key, so both judges write the same JSON
    glutenSources: Annotated[list[Annotated[str, Field(min_length=1, max_length=80)]],  # noqa: N815
                             Field(max_length=10)]


def gluten_checker(judge: Judge, compat: str = "localjudge") -> Scorer:
    return (
        create_scorer("gluten_checker", id="gluten-checker", description="Check if the output contains any gluten",
                      judge=judge, instructions=GLUTEN_INSTRUCTIONS, compat=compat)
        .analyze(JudgeStep(instructions="", prompt=lambda run, results: generate_gluten_prompt(run.output),
                           schema=GlutenAnalysis))
        .generate_score(lambda run, results: 1 if results["analyze_step_result"]["isGlutenFree"] else 0)
        .generate_reason(JudgeStep(
            instructions="", schema=Reason,
            prompt=lambda run, results: generate_reason_prompt(results["analyze_step_result"]["isGlutenFree"],
                                                               results["analyze_step_result"]["glutenSources"])))
    )


REFUND_INSTRUCTIONS = "You are a strict QA reviewer for customer-support refund handling."


def refund_tools(run: Any, results: Any) -> Any:
    """The original's preprocess: `extractToolCalls(run.output)`, on the run's own messages."""
    tools = [call["tool_name"] for call in extract_tool_calls(run.raw["output"])]
    return {"tools": tools} if "refundCustomer" in tools else not_scorable("refundCustomer was not called")


def refund_prompt(run: Any, results: Any) -> str:
    """The original's createPrompt: ``JSON.stringify(run.output)`` is compact JSON of the messages."""
    messages = json.dumps(run.raw["output"], ensure_ascii=False, separators=(",", ":"))
    return f"Rate this refund handling from 0 to 1:\n{messages}"


def refund_judge(judge: Judge, compat: str = "localjudge") -> Scorer:
    return (
        create_scorer("refund_judge", id="refund-judge", description="Judges how well refund requests were handled",
                      judge=judge, instructions=REFUND_INSTRUCTIONS, score_returns="score", compat=compat)
        .preprocess(refund_tools)
        .generate_score({"description": "Score the refund handling from 0 to 1", "create_prompt": refund_prompt})
    )


def agent_run(text: str, tools: list[str], run_id: str) -> dict[str, Any]:
    """An agent-shaped run (Mastra's `type: 'agent'`): one user message, the agent's reply with
    `tools` called (each with a result) and its text."""
    parts: list[dict[str, Any]] = [
        {"type": "tool-invocation", "toolInvocation": {"toolCallId": f"call-{i}", "toolName": name,
                                                       "args": {"orderId": "A-17"}, "result": {"ok": True},
                                                       "state": "result"}}
        for i, name in enumerate(tools)]
    parts.append({"type": "text", "text": text})
    user = {"id": "u1", "role": "user", "createdAt": "2026-01-01T00:00:00.000Z",
            "content": {"format": 2, "parts": [{"type": "text", "text": "I want my money back for order A-17."}],
                        "content": "I want my money back for order A-17."}}
    reply = {"id": "a1", "role": "assistant", "createdAt": "2026-01-01T00:00:01.000Z",
             "content": {"format": 2, "parts": parts, "content": text}}
    return {"runId": run_id,
            "input": {"inputMessages": [user], "rememberedMessages": [], "systemMessages": [],
                      "taggedSystemMessages": {}},
            "output": [reply]}
