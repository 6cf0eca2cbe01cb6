"""Tool call accuracy: were the tools the agent called the right ones for the request? The
share of its tool calls that were appropriate.

Inputs: `input` (the request: required, as Mastra throws without one), the run's tool calls
(`tool_calls`, or the tool invocations in the output's messages; see `localjudge.samples.tool_calls`)
and `output` (the agent's final text, shown). Option `available_tools`: the tools the agent
could call (names, or ``{"name" or "id", "description"}``, Mastra's `availableTools`), shown
to the judge and the only names it may give as missing.
Steps: preprocess (a function, Mastra's `extractToolCalls` step) lists the tools called; a run
with neither output text nor tool calls is unscored there (``unscorable``, no judge call), as
Mastra throws on an empty output. One analyze step gives exactly one verdict per tool call, in
order (enforced by the grammar; over 20 calls are asked in parts of at most 20 in the same judge
call, their verdicts joined in order): ``yes`` = the call was appropriate for the request; then
the tools that should have been called but were not (``missing_tools``, bounded; with
`available_tools`, only those names; from every part, each once). Score, as Mastra's: appropriate calls / calls; no tool
calls: 0 if a tool is missing, else 1. Higher is better.
`prob_score`: the mean ``yes`` probability over the calls (none for a run without calls).
``mode="direct"``: one yes/no question instead (were the tools chosen well: every call
appropriate and no needed tool left out?).
The tools and calls are shown one line each, as `tool_lines` writes them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from localjudge.judge import Judge
from localjudge.samples import Sample, ToolCall
from localjudge.scorers.judged.direct import (
    DirectVerdict,
    verdict_prob_score,
    verdict_reason,
    verdict_score,
)
from localjudge.scorers.judged.tool_lines import NAME_CHARS, Tool, call_line, check_tools
from localjudge.scorers.judged.verdicts import label_choices, reason_step, verdict_lines
from localjudge.scoring import (
    DATA_NOTE,
    Build,
    JudgeStep,
    MastraNumbers,
    ReasonText,
    Results,
    Scorer,
    Strict,
    UnscorableError,
    block,
    create_scorer,
    neutralise,
    part_of,
    spans,
)

VERSION = "tool-call-accuracy-v1"
DIRECT_VERSION = "tool-call-accuracy-direct-v1"
MAX_CALLS = 20  # tool calls per prompt: more are asked in parts of at most 20, in the same judge call
LISTED_MISSING = 30  # missing tool names at most, chosen from the available tools (any number of them)
MAX_MISSING = 5  # missing tool names, when no tool list bounds them

ToolName = Annotated[str, Field(min_length=1, max_length=NAME_CHARS)]


class ToolCallVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


class ToolCallVerdicts(Strict):
    evaluations: Annotated[list[ToolCallVerdict], Field(max_length=MAX_CALLS)]
    missing_tools: Annotated[list[ToolName], Field(max_length=MAX_MISSING)]


@functools.lru_cache(maxsize=512)  # per (count, names): bounded, for runs that differ in both
def verdicts_schema(calls: int, tools: tuple[str, ...] | None) -> type[BaseModel]:
    """`ToolCallVerdicts` with exactly `calls` evaluations and, when the tools are known, missing
    tools chosen from `tools` (the available tools not called; none left: an empty list)."""
    name: Any = Literal[tools] if tools else ToolName
    most = MAX_MISSING if tools is None else min(len(tools), LISTED_MISSING)
    evaluations: Any = Annotated[list[ToolCallVerdict], Field(min_length=calls, max_length=calls)]
    missing: Any = Annotated[list[name], Field(max_length=most)]
    return create_model(f"ToolCallVerdicts_{calls}", __base__=ToolCallVerdicts,
                        evaluations=(evaluations, ...), missing_tools=(missing, ...))


def calls_of(sample: Sample) -> tuple[ToolCall, ...]:
    return sample.tool_calls


def split_calls(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """The analyze step's split: the calls in parts of at most `MAX_CALLS`, in order (one part,
    with no calls, for a run that made none)."""
    return spans(len(calls_of(sample)), MAX_CALLS)


def part_calls(sample: Sample, results: Results) -> tuple[tuple[ToolCall, ...], int]:
    """The calls this part of the analyze step asks about, and the number of its first."""
    calls = calls_of(sample)
    start, end = part_of(results, len(calls))
    return calls[start:end], start + 1


def extract_tool_calls(sample: Sample, results: Results) -> dict[str, Any]:
    """The preprocess step, Mastra's: the tools called, in order; an empty run is refused."""
    if not sample.output.strip() and not sample.tool_calls:
        raise UnscorableError("tool call accuracy needs an output: the agent's response or the tool calls it made")
    return {"actual_tools": [c.name for c in sample.tool_calls], "has_tool_calls": bool(sample.tool_calls)}


ANALYZE_SYSTEM = f"""You check the tools an AI agent called to handle a user's request.
For each numbered tool call give verdict "yes" if the call was appropriate: the tool does what the request
asks for, or a step it needs; "no" if the request did not need it or another tool was the right one.
Add a short reason. Then list in "missing_tools" the tools the agent should have called but did not
(an empty list if none). When the agent called no tool, judge whether that was right: a vague request may
need a question back first, but a clear request that a tool serves needs that tool.
Give exactly one verdict per tool call, in order.
{DATA_NOTE}"""


def calls_shown(request: str, response: str, tools: Sequence[Tool], calls: Sequence[ToolCall], first: int = 1) -> str:
    """The request, the agent's response (if any), the tools it could call (if known) and the
    calls it made, numbered, each in its block."""
    shown = [block("REQUEST", request)]
    if response.strip():
        shown.append(block("RESPONSE", response))
    if tools:
        lines = "\n".join(f"{t.name}: {t.description}" if t.description else t.name for t in tools)
        shown.append(f"The tools the agent could call, one a line:\n{block('TOOLS', lines)}")
    if calls:
        numbered = "\n".join(f"{i}. {call_line(c)}" for i, c in enumerate(calls, first))
        shown.append(f"The tool calls the agent made, one numbered call a line:\n{block('CALLS', numbered)}")
    else:
        shown.append("The agent called no tool.")
    return "\n".join(shown)


def calls_prompt(request: str, response: str, tools: Sequence[Tool], calls: Sequence[ToolCall],
                 first: int = 1) -> str:
    close = (f"Give exactly {len(calls)} verdicts, one per tool call, in order, then the missing tools." if calls
             else "Give no verdicts; list the tools it should have called, if any.")
    return f"{calls_shown(request, response, tools, calls, first)}\n{close}"


EXAMPLE_TOOLS = (Tool("convert_currency", "Converts an amount between currencies."),
                 Tool("get_share_price", "Latest price of a company's shares."),
                 Tool("send_email", "Sends an email."))
EXAMPLE = (
    calls_prompt("What is 50 euros in yen? Email the answer to Ana.", "50 euros is about 8,100 yen.",
                 EXAMPLE_TOOLS, [ToolCall("get_share_price", '{"company":"Sony"}'),
                                 ToolCall("convert_currency", '{"amount":50,"from":"EUR","to":"JPY"}')]),
    '{"evaluations":[{"verdict":"no","reason":"No share price was asked for."},'
    '{"verdict":"yes","reason":"Converts the euros asked about."}],"missing_tools":["send_email"]}',
)


def accuracy(verdicts: Sequence[str], missing: Sequence[str]) -> float:
    """Mastra's score: appropriate calls / calls; no calls: 0 if a tool is missing, else 1."""
    if not verdicts:
        return 0.0 if missing else 1.0
    return sum(v == "yes" for v in verdicts) / len(verdicts)


DIRECT_SYSTEM = f"""You answer one question about the tools an AI agent called for a user's request.
Answer "yes" if the agent chose its tools well: every call was appropriate for the request and no tool
the request needed was left out (no tool at all is right when none was needed, or when a vague request
needed a question back first). Answer "no" if a call was not needed or was the wrong tool, or a needed
tool was not called. The reason says which call, or which missing tool, decides the verdict.
{DATA_NOTE}"""


# createToolCallAccuracyScorerLLM: roundToTwoDecimals; no scale option (scores run from 0 to 1)
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="none")


def tool_call_accuracy_scorer(judge: Judge, *, scale: float = 1.0, mode: str = "pipeline",
                              available_tools: Sequence[str | Mapping[str, Any]] | None = None,
                              compat: str = "localjudge") -> Scorer:
    """Build the tool call accuracy scorer (higher is better).

    Args:
        judge: The local model judging.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (a verdict per tool call, the missing tools, a reason) or
            ``"direct"`` (one yes/no: were the tools chosen well? `scale` if so, else 0).
        available_tools: The tools the agent could call (Mastra's `availableTools`, required
            there, optional here): names, or ``{"name" or "id": ..., "description": ...}``
            mappings, or OpenAI tool definitions; any number (an MCP toolset's 100 too: a row
            whose prompt the judge's window cannot hold is unscored, saying so). Shown to the
            judge whole with every part of the calls; the missing tools it names (at most 30)
            are then chosen from them.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`: no scale).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    scale = build.scale
    tools = check_tools(available_tools)
    names = tuple(t.name for t in tools) if tools else None

    def start(version: str, prob_score: Callable[[Results, Mapping[str, Any]], float | None]) -> Scorer:
        return create_scorer("tool_call_accuracy", judge=judge, version=version, requires=("input",),
                             id="llm-tool-call-accuracy-scorer", prob_score=prob_score,
                             description="Whether the agent called the right tools for the request",
                             positive="appropriate tool calls", higher_is_better=True,
                             **build.create_keywords()).preprocess(extract_tool_calls)

    if build.direct:
        def ask(sample: Sample, results: Results) -> str:
            return (f"{calls_shown(sample.input, sample.output, tools, calls_of(sample))}\n"
                    "Did the agent choose its tools well? Answer yes or no, then give a short reason.")

        return (
            start(DIRECT_VERSION, verdict_prob_score)
            .analyze(JudgeStep(instructions=DIRECT_SYSTEM, prompt=ask, schema=DirectVerdict))
            .generate_score(verdict_score)
            .generate_reason(verdict_reason)
        )

    def render(sample: Sample, results: Results) -> str:
        return calls_prompt(sample.input, sample.output, tools, *part_calls(sample, results))

    def schema(sample: Sample, results: Results) -> type[BaseModel]:
        called = {c.name for c in calls_of(sample)}
        return verdicts_schema(len(part_calls(sample, results)[0]), None if names is None else
                               tuple(n for n in names if n not in called))

    def attach(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        evaluations = [{"tool_called": c.name, "args": c.args, **v}
                       for c, v in zip(calls_of(sample), parsed["evaluations"], strict=True)]
        return {"evaluations": evaluations, "missing_tools": list(dict.fromkeys(parsed["missing_tools"]))}

    def score(sample: Sample, results: Results) -> float:
        found = results["analyze_step_result"]
        return accuracy([e["verdict"] for e in found["evaluations"]], found["missing_tools"])

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        evaluations = results["analyze_step_result"]["evaluations"]
        choices = label_choices(label_probs["analyze"], "yes")
        if not evaluations or len(choices) != len(evaluations):
            return None
        return sum(c["yes"] for c in choices) / len(choices)

    def summary(sample: Sample, results: Results) -> str:
        found = results["analyze_step_result"]
        verdicts = verdict_lines(found["evaluations"], "tool_called") or "(no tool calls)"
        missing = ", ".join(neutralise(m) for m in found["missing_tools"]) or "none"
        return (f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better: the share of tool calls that "
                f"were appropriate; with no tool calls, {scale:g} unless a needed tool was not called).\n"
                f"Verdicts on the tool calls (yes = appropriate):\n{block('VERDICTS', verdicts)}\n"
                f"Tools that should have been called but were not: {missing}.\n"
                "Explain the score: which calls fit the request, which did not, and what was missing.")

    step = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render, schema=schema, examples=(EXAMPLE,), finish=attach,
                     split=split_calls)
    return (
        start(VERSION, prob_score)
        .analyze(step)
        .generate_score(score)
        .generate_reason(reason_step(summary, show_context=False))
    )
