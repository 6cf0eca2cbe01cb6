"""Cases for the claim scorers: hallucination, faithfulness, context recall.

Mastra's judge lists the claims (of the output; of the ground truth for context recall), then
gives one verdict per claim. localjudge's judge does the same for the output's claims, except
where a rule decides (an empty output, a terse answer of at most 4 words as one claim); context
recall's claims are the ground truth's sentences, by rule. The Mastra answers are what its
judge, following its prompt, gives for the same run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.differential.parity import REFUSED, Case, Differs, Outcome, unscripted

CONTEXT = ["The Eiffel Tower in Paris was completed in 1889.", "It is 330 metres tall."]
QUESTION = "Tell me about the Eiffel Tower."
# Five sentences, twenty-odd words: room for up to 6 claims under localjudge's claim cap.
OUTPUT = ("The Eiffel Tower is in Paris. It was completed in 1925. It is about 330 metres tall. "
          "It is the most visited monument in the world. Its architect was Gustave Eiffel.")
CLAIMS = ["The Eiffel Tower is in Paris.", "The Eiffel Tower was completed in 1925.",
          "The Eiffel Tower is about 330 metres tall.", "The Eiffel Tower is the most visited monument in the world.",
          "The Eiffel Tower's architect was Gustave Eiffel."]
HALLUCINATED = {"yes": "unsupported", "no": "supported"}  # Mastra's label -> localjudge's judge word


def _verdicts(labels: list[str], words: dict[str, str] | None = None) -> dict[str, Any]:
    return {"verdicts": [{"verdict": (words or {}).get(v, v), "reason": "r"} for v in labels]}


def hallucination(name: str, labels: list[str], expect: Outcome | Differs, *, output: str = OUTPUT,
                  claims: list[str] | None = None, context: list[str] | None = CONTEXT, scale: float = 1.0,
                  mastra_scale: float | None = None, judge_claims: bool = True, local_calls: int | None = None,
                  local_claims: list[str] | None = None, hook: list[str] | None = None) -> Case:
    """A hallucination case: the claims (the first len(labels) of CLAIMS by default) and Mastra's
    verdicts (yes = hallucinated); `judge_claims=False` where localjudge makes the claim by rule;
    `local_claims`: the (fewer) claims localjudge's judge may list, with the first verdicts;
    `hook`: the context a get_context hook returns, on both sides."""
    claims = CLAIMS[:len(labels)] if claims is None else claims
    mine = claims if local_claims is None else local_claims
    answers: dict[str, Any] = {"HallucinationVerdicts": [_verdicts(labels[:len(mine)], HALLUCINATED)]}
    if judge_claims:
        answers["Claims"] = [{"claims": mine}]
    options: dict[str, Any] = {} if context is None else {"context": context}
    mastra_options: dict[str, Any] = {**options, "scale": scale if mastra_scale is None else mastra_scale}
    if hook is not None:
        options["get_context"] = lambda run: hook
        mastra_options["getContext"] = {"$returns": hook}
    return Case("hallucination", name, {"input": QUESTION, "output": output}, answers,
                [{"claims": claims}, {"verdicts": [{"statement": c, "verdict": v, "reason": "r"}
                                                   for c, v in zip(claims, labels, strict=True)]}],
                expect, scale=scale, options=options, mastra_args={"options": mastra_options}, local_calls=local_calls)


def faithfulness(name: str, labels: list[str], expect: Outcome | Differs, *, output: str = OUTPUT,
                 claims: list[str] | None = None, context: list[str] | None = CONTEXT,
                 run: dict[str, Any] | None = None, scale: float = 1.0, mastra_scale: float | None = None,
                 judge_claims: bool = True, local_calls: int | None = None,
                 reading: Callable[[list[dict[str, str]]], dict[str, Any]] | None = None,
                 mastra_labels: list[str] | None = None) -> Case:
    """A faithfulness case: yes = supported, no = contradicted, unsure = not verifiable.
    `reading`: localjudge's verdicts as a function of the prompt (a judge that reads the context
    it is shown); `mastra_labels`: Mastra's verdicts where its judge is shown another context."""
    claims = CLAIMS[:len(labels)] if claims is None else claims
    answers: dict[str, Any] = {"FaithfulnessVerdicts": reading or [_verdicts(labels)]}
    if judge_claims:
        answers["Claims"] = [{"claims": claims}]
    options: dict[str, Any] = {} if context is None else {"context": context}
    mastra_options: dict[str, Any] = {**options, "scale": scale if mastra_scale is None else mastra_scale}
    return Case("faithfulness", name, run or {"input": QUESTION, "output": output}, answers,
                [{"claims": claims}, {"verdicts": [{"verdict": v, "reason": "r"} for v in mastra_labels or labels]}],
                expect, scale=scale, options=options, mastra_args={"options": mastra_options}, local_calls=local_calls)


TERSE = "Paris, France."  # at most 4 words: one claim, read with its question, by rule
TERSE_CLAIM = f'The answer to "{QUESTION}" is: {TERSE}'

# An agent's output whose tool returned the context (legacy `toolInvocations`: both read it).
TOOL_OUTPUT = [{"role": "assistant", "content": {
    "format": 2, "parts": [{"type": "text", "text": OUTPUT}], "content": OUTPUT,
    "toolInvocations": [{"state": "result", "toolCallId": "c1", "toolName": "lookup", "args": {"q": "tower"},
                         "result": {"built": 1889, "height_m": 330}}]}}]
# The same call in message parts only, as Mastra's current messages keep it: Mastra 1.10.2's
# fallback reads only `toolInvocations`, so its judge sees an empty context.
PARTS_OUTPUT = [{"role": "assistant", "content": {
    "format": 2, "content": OUTPUT, "parts": [
        {"type": "text", "text": OUTPUT},
        {"type": "tool-invocation", "toolInvocation": TOOL_OUTPUT[0]["content"]["toolInvocations"][0]}]}}]


def _reads_tool_result(prompt: list[dict[str, str]]) -> dict[str, Any]:
    """A judge reading its context: shown the tool result, the first claim is supported and the
    second contradicted; shown none, neither can be verified."""
    return _verdicts(["yes", "no"] if "height_m" in prompt[-1]["content"] else ["unsure", "unsure"])


CLAIM_CASES = [
    hallucination("all-supported", ["no", "no", "no"], 0.0),
    hallucination("all-hallucinated", ["yes", "yes"], 1.0),
    hallucination("mixed", ["no", "yes", "no", "yes", "no"], 0.4),
    hallucination("one-of-three", ["yes", "no", "no"], 0.33),
    hallucination("two-of-three", ["yes", "yes", "no"], 0.67),
    hallucination("scale-5", ["no", "yes", "no"], 1.67, scale=5),
    hallucination("scale-10", ["yes", "yes", "no"], 6.67, scale=10),
    hallucination("scale-1-of-3", ["yes", "no", "no"], 0.33, scale=1),
    unscripted(hallucination("no-claims", [], 0.0, local_calls=1), "HallucinationVerdicts"),
    unscripted(hallucination("empty-output", [], 0.0, output="", judge_claims=False, local_calls=0)),
    hallucination("terse-answer", ["no"], 0.0, output=TERSE, claims=[TERSE_CLAIM], judge_claims=False, local_calls=2),
    hallucination("terse-hallucinated", ["yes"], 1.0, output=TERSE, claims=[TERSE_CLAIM], judge_claims=False),
    hallucination("claim-cap", ["no", "no", "no", "yes"], Differs("claim-cap", mastra=0.25, local=0.0),
                  output="The tower is tall, old, famous and it is in Paris.", local_claims=CLAIMS[:3]),
    hallucination("context-from-hook", ["no", "yes"], 0.5, context=None, hook=CONTEXT),
    hallucination("no-context", ["yes", "yes"], Differs("no-context", mastra=1.0, local=REFUSED), context=None,
                  local_calls=0),
    hallucination("scale-0", ["yes", "no", "no"], Differs("scale-0", mastra=0.33, local=REFUSED), scale=0),
    faithfulness("all-supported", ["yes", "yes", "yes"], 1.0),
    faithfulness("all-contradicted", ["no", "no"], 0.0),
    faithfulness("all-unsure", ["unsure", "unsure", "unsure"], 0.0),
    faithfulness("mixed", ["yes", "no", "unsure", "yes", "yes"], 0.6),
    faithfulness("two-of-three", ["yes", "unsure", "yes"], 0.67),
    faithfulness("scale-5", ["yes", "yes", "no"], 3.33, scale=5),
    faithfulness("scale-10", ["yes", "unsure", "no"], 3.33, scale=10),
    faithfulness("terse-answer", ["yes"], 1.0, output=TERSE, claims=[TERSE_CLAIM], judge_claims=False, local_calls=2),
    faithfulness("tool-results-as-context", ["yes", "no"], 0.5, context=None, run={"input": QUESTION,
                                                                                     "output": TOOL_OUTPUT}),
    faithfulness("tool-results-in-parts", ["yes", "no"], Differs("faithfulness-tool-parts", mastra=0.0, local=0.5),
                 context=None, run={"input": QUESTION, "output": PARTS_OUTPUT}, reading=_reads_tool_result,
                 mastra_labels=["unsure", "unsure"]),
    unscripted(faithfulness("no-claims", [], Differs("faithfulness-no-claims", mastra=0.0, local=1.0), local_calls=1),
               "FaithfulnessVerdicts"),
    unscripted(faithfulness("empty-output", [], Differs("faithfulness-no-claims", mastra=0.0, local=1.0), output="",
                            judge_claims=False, local_calls=0)),
    faithfulness("no-context", ["unsure", "unsure"], Differs("no-context", mastra=0.0, local=REFUSED), context=None),
    faithfulness("scale-0", ["yes", "no"], Differs("scale-0", mastra=0.5, local=REFUSED), scale=0),
]


def context_recall(name: str, truth: str | None, labels: list[str], expect: Outcome | Differs, *,
                   claims: list[str] | None = None, context: list[str] | None = CONTEXT, scale: float = 1.0,
                   mastra_scale: float | None = None, local_calls: int | None = None) -> Case:
    """A context recall case: the ground truth's claims (its sentences, by rule, for localjudge;
    the same sentences from Mastra's judge) and one verdict each (yes = the context holds it)."""
    run: dict[str, Any] = {"input": QUESTION, "output": "The tower is in Paris."}
    if truth is not None:
        run["groundTruth"] = truth
    claims = claims if claims is not None else [s.strip() + "." for s in (truth or "").split(".") if s.strip()]
    options: dict[str, Any] = {} if context is None else {"context": context}
    return Case("context_recall", name, run, {"RecallVerdicts": [_verdicts(labels)]},
                [{"claims": claims}, {"verdicts": [{"verdict": v, "reason": "r"} for v in labels]}], expect,
                scale=scale, options=options,
                mastra_args={"options": {**options, "scale": scale if mastra_scale is None else mastra_scale}},
                local_calls=local_calls)


TRUTH = "The tower was completed in 1889. It is 330 metres tall. It was painted red in 1968."
RECALL_CASES = [
    context_recall("all-found", TRUTH, ["yes", "yes", "yes"], 1.0),
    context_recall("none-found", TRUTH, ["no", "no", "no"], 0.0),
    context_recall("two-of-three", TRUTH, ["yes", "yes", "no"], 0.67),
    context_recall("scale-5", TRUTH, ["yes", "no", "no"], 1.67, scale=5),
    context_recall("scale-10", TRUTH, ["yes", "yes", "no"], 6.67, scale=10),
    context_recall("terse-truth", "In 1889.", ["yes"], 1.0, claims=[f'The answer to "{QUESTION}" is: In 1889.']),
    unscripted(context_recall("no-ground-truth", None, [], 0.0, local_calls=0)),
    unscripted(context_recall("empty-context", TRUTH, ["no"] * 3, REFUSED, context=[]), mastra=True),
    context_recall("scale-0", TRUTH, ["yes", "no", "no"], Differs("scale-0", mastra=0.33, local=REFUSED), scale=0),
]

CASES = CLAIM_CASES + RECALL_CASES
