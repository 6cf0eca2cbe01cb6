"""Cases for the scorers of whole responses and agent runs: prompt alignment, multi-turn judge,
rubric, tool call accuracy, trajectory accuracy. The runs are Mastra's agent shapes, which
localjudge reads too (a trajectory scorer's run is Mastra's `Trajectory` on its side)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from tests.differential.parity import REFUSED, Case, Differs, Outcome, unscripted

REQUEST = "Give me three tips for growing tomatoes, as a bulleted list."
RESPONSE = "- Water them deeply.\n- Give them full sun.\n- Stake the plants."
SYSTEM = "Answer in at most three bullet points. Never recommend pesticides."


def message(role: str, text: str, **content: Any) -> dict[str, Any]:
    """A Mastra DB message (format 2) with one text part."""
    parts = [{"type": "text", "text": text}] if text else []
    return {"id": f"{role}-{len(text)}", "role": role, "createdAt": "2026-01-01T00:00:00.000Z",
            "content": {"format": 2, "parts": parts + content.pop("parts", []), "content": text, **content}}


def tool_part(name: str, args: dict[str, Any], result: Any, state: str = "result",
              call_id: str | None = None) -> dict[str, Any]:
    return {"type": "tool-invocation", "toolInvocation": {"toolCallId": call_id or f"call-{name}-{json.dumps(args)}",
                                                          "toolName": name, "args": args, "state": state,
                                                          "result": result}}


def agent_input(text: str, system: str | None = None) -> dict[str, Any]:
    return {"inputMessages": [message("user", text)] if text else [], "rememberedMessages": [],
            "systemMessages": [{"role": "system", "content": system}] if system else [], "taggedSystemMessages": {}}


RATING = {"fully": 1.0, "mostly": 0.7, "partly": 0.4, "not": 0.0}


def alignment(name: str, ratings: tuple[str, str, str], met: list[bool], expect: Outcome | Differs, *,
              mode: str | None = None, request: str = REQUEST, system: str | None = None, response: str = RESPONSE,
              scale: float = 1.0, mastra_scale: float | None = None) -> Case:
    """A prompt alignment case: intent, completeness and appropriateness ratings (Mastra's judge
    writes their numbers) and whether each requirement is met (Mastra's judge writes the ratio)."""
    intent, completeness, appropriateness = ratings
    requirements = [{"requirement": f"Requirement {i}.", "met": "yes" if m else "no"} for i, m in enumerate(met)]
    local = {"intent": {"rating": intent}, "requirements": requirements, "completeness": {"rating": completeness},
             "appropriateness": {"rating": appropriateness}}
    mastra = {"intentAlignment": {"score": RATING[intent], "primaryIntent": "p", "isAddressed": True, "reasoning": "r"},
              "requirementsFulfillment": {"requirements": [{"requirement": r["requirement"], "isFulfilled": m,
                                                            "reasoning": "r"} for r, m in zip(requirements, met,
                                                                                              strict=True)],
                                          "overallScore": sum(met) / len(met)},
              "completeness": {"score": RATING[completeness], "missingElements": [], "reasoning": "r"},
              "responseAppropriateness": {"score": RATING[appropriateness], "formatAlignment": True,
                                          "toneAlignment": True, "reasoning": "r"},
              "overallAssessment": "a"}
    options = {} if mode is None else {"evaluation_mode": mode}
    given: dict[str, Any] = {"scale": scale if mastra_scale is None else mastra_scale}
    if mode is not None:
        given["evaluationMode"] = mode
    run = {"input": agent_input(request, system), "output": [message("assistant", response)] if response else []}
    return Case("prompt_alignment", name, run, {"AlignmentAnalysis": [local]}, [mastra], expect, scale=scale,
                options=options, mastra_args={"options": given})


def signal(role: str, text: str) -> dict[str, Any]:
    """A message the agent's signal API delivered: Mastra stores it as ``role: 'signal'`` with
    its role on `type` and `content.metadata.signal` (`getEffectiveMessageRole` reads it)."""
    sent = message(role, text, metadata={"signal": {"type": role, "tagName": role}})
    return {**sent, "role": "signal", "type": role}


def with_signal_request(case: Case) -> Case:
    """The case's run with its request delivered as a signal message."""
    return replace(case, run={**case.run, "input": {**case.run["input"], "inputMessages": [signal("user", REQUEST)]}})


FULLY = ("fully", "fully", "fully")
ALIGNMENT_CASES = [
    alignment("perfect", FULLY, [True, True], 1.0),
    alignment("mixed-user", ("mostly", "partly", "fully"), [True, True, False], 0.66, mode="user"),
    alignment("mixed-both", ("mostly", "partly", "fully"), [True, True, False], 0.66),
    alignment("system-mode", ("mostly", "fully", "partly"), [True, False], 0.63, mode="system", system=SYSTEM),
    alignment("not-aligned", ("not", "not", "not"), [False], 0.0),
    alignment("scale-5", ("mostly", "mostly", "mostly"), [True, False], 3.2, scale=5),
    alignment("scale-10", ("fully", "partly", "mostly"), [True, True], 8.5, scale=10),
    alignment("rounding-0.925", FULLY, [True, True, True, False], Differs("rounding", mastra=0.93, local=0.92),
              mode="user"),
    alignment("rounding-0.6849", ("fully", "mostly", "mostly"), [True, False, False, False],
              Differs("rounding", mastra=0.69, local=0.68), mode="user"),
    unscripted(alignment("system-mode-no-system", FULLY, [True], REFUSED, mode="system"), mastra=True),
    unscripted(alignment("user-mode-no-request", FULLY, [True], REFUSED, mode="user", request="", system=SYSTEM),
               mastra=True),
    unscripted(alignment("both-mode-neither", FULLY, [True], REFUSED, request=""), mastra=True),
    with_signal_request(alignment("signal-request", ("mostly", "partly", "fully"), [True, True, False], 0.66,
                                  mode="user")),
    alignment("both-mode-system-only", ("mostly", "fully", "partly"), [True, False], 0.67, request="", system=SYSTEM),
    unscripted(alignment("empty-response", FULLY, [True], REFUSED, response=""), mastra=True),
    alignment("scale-0", ("mostly", "mostly", "mostly"), [True, False],
              Differs("scale-0", mastra=0.64, local=REFUSED), scale=0),
]

CRITERION = "The assistant gave the forecast for both cities."
CONVERSATION = {"input": agent_input("How's the weather in London?"),
                "output": [message("assistant", "London: rain, 12 C."), message("assistant", "Paris: sun, 18 C.")]}


def multi_turn(name: str, satisfied: bool, expect: Outcome | Differs, *, run: dict[str, Any] | None = None,
               scale: float = 1.0, local_calls: int | None = None) -> Case:
    """A multi-turn judge case: whether the judge finds the criterion satisfied."""
    return Case("multi_turn_judge", name, run or CONVERSATION,
                {"ConversationVerdict": [{"verdict": "yes" if satisfied else "no", "reason": "r"}]},
                [{"satisfied": satisfied, "reasoning": "r"}], expect, scale=scale, options={"criterion": CRITERION},
                mastra_args={"criterion": CRITERION, "options": {"scale": scale}}, local_calls=local_calls)


MULTI_TURN_CASES = [
    multi_turn("satisfied", True, 1.0),
    multi_turn("not-satisfied", False, 0.0),
    multi_turn("scale-5", True, 5.0, scale=5),
    multi_turn("scale-10", True, 10.0, scale=10),
    multi_turn("scale-0.5", True, 0.5, scale=0.5),
    multi_turn("plain-strings", True, 1.0, run={"input": "Weather in London and Paris?",
                                               "output": "London: rain. Paris: sun."}),
    unscripted(multi_turn("tool-calls-only", False, 0.0, local_calls=0, run={
        "input": agent_input("Weather?"),
        "output": [message("assistant", "", parts=[tool_part("get_weather", {"city": "Paris"}, {"sky": "sun"})])]})),
    unscripted(multi_turn("no-assistant-message", False, Differs("no-assistant-message", mastra=0.0, local=REFUSED),
                          run={"input": agent_input("Hello?"), "output": []})),
    multi_turn("scale-0.125", True, Differs("unrounded", mastra=0.125, local=0.13), scale=0.125),
    multi_turn("scale-0", True, Differs("scale-0", mastra=0.0, local=REFUSED), scale=0),
]

TIPS, BULLETS, COMPOST = "Gives three tips.", "Uses a bulleted list.", "Mentions compost."
CRITERIA = [(TIPS, True), (BULLETS, True), (COMPOST, False)]


def rubric(name: str, met: list[bool], expect: Outcome | Differs, *, criteria: list[tuple[str, bool]] | None = None,
           scale: float = 1.0, local_calls: int | None = None) -> Case:
    """A rubric case: whether each criterion is met (Mastra's judge echoes each one's `required`)."""
    criteria = CRITERIA[:len(met)] if criteria is None else criteria
    local = {"verdicts": [{"verdict": "yes" if m else "no", "reason": "r"} for m in met]}
    mastra = {"criteria": [{"criterion": c, "satisfied": m, "required": r, "reasoning": "r"}
                           for (c, r), m in zip(criteria, met, strict=True)], "overallAssessment": "a"}
    return Case("rubric", name, {"input": REQUEST, "output": RESPONSE}, {"CriterionVerdicts": [local]}, [mastra],
                expect, scale=scale, options={"criteria": [{"criterion": c, "required": r} for c, r in criteria]},
                mastra_args={"criteria": [{"description": c, "required": r} for c, r in criteria],
                             "options": {"scale": scale}}, local_calls=local_calls)


def given_as(case: Case, criteria: Any) -> Case:
    """The rubric case with `criteria` given to both sides as they are (Mastra's own shapes)."""
    return replace(case, options={"criteria": criteria}, mastra_args={**case.mastra_args, "criteria": criteria})


RUBRIC_CASES = [
    rubric("all-met", [True, True, True], 1.0),
    rubric("required-missed", [True, False, True], 0.0),
    rubric("optional-missed", [True, True, False], 1.0),
    rubric("scale-5", [True, True], 5.0, scale=5),
    rubric("scale-10-missed", [False, True], 0.0, scale=10),
    rubric("all-optional-one-missed", [True, False], Differs("rubric-all-optional", mastra=0.0, local=1.0),
           criteria=[("Gives three tips.", False), ("Mentions compost.", False)]),
    unscripted(rubric("no-criteria", [], 1.0, criteria=[], local_calls=0)),
    unscripted(rubric("no-criteria-scale-5", [], Differs("rubric-empty-unscaled", mastra=1.0, local=5.0), criteria=[],
                      scale=5)),
    rubric("scale-0", [True, True], Differs("scale-0", mastra=0.0, local=REFUSED), scale=0),
    # Mastra's spellings, given to both sides as they are: {description, required}, and one string
    given_as(rubric("description-key", [True, False], 1.0, criteria=[(TIPS, True), (BULLETS, False)]),
             [{"description": TIPS, "required": True}, {"description": BULLETS, "required": False}]),
    given_as(rubric("string-rubric", [True, True, False], 0.0,
                    criteria=[(TIPS, True), (BULLETS, True), (COMPOST, True)]),
             f"- {TIPS}\n\n2. {BULLETS}\n* {COMPOST}\n"),
]

TOOLS = [{"id": "get_weather", "description": "The weather in a city."},
         {"id": "search_web", "description": "Search the web."},
         {"id": "send_email", "description": "Send an email."}]


def tool_run(calls: list[str], *, request: str = "What's the weather in Paris?",
             text: str = "It is sunny in Paris.") -> dict[str, Any]:
    parts = [tool_part(c, {"city": "Paris", "n": i}, {"ok": True}) for i, c in enumerate(calls)]
    return {"input": agent_input(request), "output": [message("assistant", text, parts=parts)]}


def tool_accuracy(name: str, calls: list[str], appropriate: list[bool], missing: list[str],
                  expect: Outcome | Differs, *, run: dict[str, Any] | None = None, scale: float = 1.0,
                  local_verdicts: list[bool] | None = None) -> Case:
    """A tool call accuracy case: the calls made, whether each was appropriate, the tools missing
    (`local_verdicts`: localjudge's judge's, where it sees other calls)."""
    verdicts = appropriate if local_verdicts is None else local_verdicts
    local = {"evaluations": [{"verdict": "yes" if a else "no", "reason": "r"} for a in verdicts],
             "missing_tools": missing}
    mastra = {"evaluations": [{"toolCalled": c, "wasAppropriate": a, "reasoning": "r"}
                              for c, a in zip(calls, appropriate, strict=True)], "missingTools": missing}
    return Case("tool_call_accuracy", name, run or tool_run(calls), {"ToolCallVerdicts": [local]}, [mastra], expect,
                scale=scale, options={"available_tools": [{"name": t["id"], "description": t["description"]}
                                                          for t in TOOLS]},
                mastra_args={"availableTools": TOOLS})


TOOL_CASES = [
    tool_accuracy("right-tool", ["get_weather"], [True], [], 1.0),
    tool_accuracy("one-of-three", ["get_weather", "send_email", "search_web"], [True, False, False], [], 0.33),
    tool_accuracy("two-of-three", ["search_web", "get_weather", "get_weather"], [True, True, False], [], 0.67),
    tool_accuracy("no-calls-none-missing", [], [], [], 1.0),
    tool_accuracy("no-calls-tool-missing", [], [], ["get_weather"], 0.0),
    unscripted(tool_accuracy("no-request", ["get_weather"], [True], [], REFUSED, run={**tool_run(["get_weather"]),
                                                                                      "input": agent_input("")}),
               mastra=True),
    unscripted(tool_accuracy("empty-output", [], [], [], REFUSED, run={"input": agent_input("Weather?"), "output": []}),
               mastra=True),
    tool_accuracy("repeated-call-id", ["search_web", "get_weather", "get_weather"], [True, True, False], [],
                  Differs("repeated-tool-call-id", mastra=0.67, local=0.5), local_verdicts=[True, False],
                  run={"input": agent_input("What's the weather in Paris?"), "output": [message(
                      "assistant", "Sunny.", parts=[
                          tool_part("search_web", {"q": "Paris"}, {"ok": True}, call_id="a"),
                          tool_part("get_weather", {"city": "Paris"}, {"ok": True}, call_id="b"),
                          tool_part("get_weather", {"city": "Rome"}, {"ok": True}, call_id="b")])]}),
    tool_accuracy("scale-5", ["get_weather", "send_email"], [True, False], [],
                  Differs("no-scale-option", mastra=0.5, local=2.5), scale=5),
]

EXPECTED = [{"stepType": "tool_call", "name": "search_flights"}, {"stepType": "tool_call", "name": "book_flight"}]


def trajectory(name: str, steps: list[str], judged: list[tuple[bool, bool]], missing: list[str],
               expect: Outcome | Differs, *, expected: list[dict[str, Any]] | None = None, scale: float = 1.0,
               local_calls: int | None = None) -> Case:
    """A trajectory accuracy case: the steps taken (tool calls), (necessary, in order) for each,
    the steps missing; Mastra's run output is the `Trajectory` of the same calls."""
    run = tool_run(steps, request="Book me a flight to Rome.", text="Booked.")
    trajectory_steps = [{"stepType": "tool_call", "name": s, "toolArgs": {"city": "Paris", "n": i},
                         "toolResult": {"ok": True}} for i, s in enumerate(steps)]
    yes = {True: "yes", False: "no"}
    local_missing = [f"[tool_call] {m}" if expected else m for m in missing]
    local = {"step_evaluations": [{"necessary": yes[n], "in_order": yes[o], "reason": "r"} for n, o in judged],
             "missing_steps": local_missing}
    mastra = {"stepEvaluations": [{"stepName": s, "wasNecessary": n, "wasInOrder": o, "reasoning": "r"}
                                  for s, (n, o) in zip(steps, judged, strict=True)],
              "missingSteps": missing, "extraSteps": [s for s, (n, _) in zip(steps, judged, strict=True) if not n],
              "overallAssessment": "a"}
    options: dict[str, Any] = {} if expected is None else {"expected_trajectory": expected}
    args: dict[str, Any] = {} if expected is None else {"expectedTrajectory": {"steps": expected}}
    mastra_run = {"input": run["input"], "output": {"steps": trajectory_steps, "rawOutput": run["output"]}}
    return Case("trajectory_accuracy", name, run, {"TrajectoryVerdicts": [local]}, [mastra], expect, scale=scale,
                options=options, mastra_args=args, mastra_run=mastra_run, local_calls=local_calls)


TRAJECTORY_CASES = [
    trajectory("flawless", ["search_flights", "book_flight"], [(True, True), (True, True)], [], 0.9),
    trajectory("one-unneeded", ["search_flights", "get_weather", "book_flight"],
               [(True, True), (False, True), (True, True)], [], 0.7),
    trajectory("out-of-order", ["book_flight", "search_flights"], [(True, False), (True, True)], [], 0.75),
    trajectory("one-missing", ["search_flights", "get_weather"], [(True, True), (False, True)], ["book_flight"],
               0.57, expected=EXPECTED),
    trajectory("nothing-right", ["get_weather"], [(False, False)], ["search_flights", "book_flight"], 0.0,
               expected=EXPECTED),
    trajectory("rounding-0.475", ["search_flights", "book_flight", "get_weather"],
               [(True, True), (True, False), (False, False)], ["send_receipt"],
               Differs("rounding", mastra=0.48, local=0.47)),
    trajectory("no-steps-none-missing", [], [], [], 1.0),
    trajectory("no-steps-missing", [], [], ["search_flights"], 0.0),
    unscripted(trajectory("no-steps-expected", [], [], ["search_flights", "book_flight"], 0.0, expected=EXPECTED,
                          local_calls=0)),
    trajectory("scale-5", ["search_flights", "book_flight"], [(True, True), (True, False)], [],
               Differs("no-scale-option", mastra=0.75, local=3.75), scale=5),
]

CASES = ALIGNMENT_CASES + MULTI_TURN_CASES + RUBRIC_CASES + TOOL_CASES + TRAJECTORY_CASES
