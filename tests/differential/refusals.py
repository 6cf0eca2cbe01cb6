"""Why each side refuses a case of the differential tier, pinned by case id: a piece of the
error Mastra's scorer threw (or its not-scorable reason), and of localjudge's error (or
unscored reason). An outcome of `REFUSED` says only that a side refused; this table says it
refused for the case's reason, not for another (a typo in a run, a harness error, a judge
asked for an answer the case does not script).

The table is closed: every refusing side of every case has its entry, and under the default
setting every entry's side refuses (tests/differential/test_parity.py, test_code_parity.py).
Under ``compat="mastra"`` a side may score where a switched difference makes it Mastra's;
where it still refuses, it refuses for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Why:
    """Pieces of each side's refusal, or None where that side does not refuse."""

    mastra: str | None = None
    local: str | None = None


HARNESS_ERROR = "unscripted judge call"  # the harness's own error: never a case's refusal

SCALE_0 = "ValueError: scale must be a finite positive number, got 0"
NO_ASSISTANT = "InvalidRunError: run 0: output has no assistant message"
def needs_input(scorer: str) -> str:
    """An agent input with no user message reads as no input: the scorer that needs one says so."""
    return f"InvalidRunError: run 0: {scorer} needs an input"
MASTRA_NO_MESSAGES = "Input and output messages cannot be null or empty"


def needs_context(scorer: str) -> str:
    return f"InvalidRunError: run 0: {scorer} needs context: give the run a"


REFUSALS: dict[str, Why] = {
    **{f"{scorer}/scale-0": Why(local=SCALE_0) for scorer in (
        "hallucination", "faithfulness", "context_recall", "toxicity", "bias", "answer_relevancy",
        "answer_similarity", "summarization", "context_precision", "context_relevance", "prompt_alignment",
        "multi_turn_judge", "rubric")},
    "hallucination/no-context": Why(local=needs_context("hallucination")),
    "faithfulness/no-context": Why(local=needs_context("faithfulness")),
    "context_recall/empty-context": Why("Context array cannot be empty if provided", needs_context("context_recall")),
    "toxicity/no-assistant-message": Why(local=NO_ASSISTANT),
    "answer_relevancy/no-input": Why(local="unscored (unscorable): analyze step: answer relevancy needs an input"),
    "answer_similarity/no-ground-truth": Why("Answer Similarity Scorer requires ground truth to be provided",
                                            "InvalidRunError: run 0: answer_similarity needs a ground truth"),
    "context_precision/no-context": Why("Either context or contextExtractor is required for Context Precision",
                                       needs_context("context_precision")),
    "context_relevance/no-context": Why("Either context or contextExtractor is required for Context Relevance",
                                       needs_context("context_relevance")),
    "noise_sensitivity/empty-response": Why(
        "Both original query and noisy response are required for evaluation",
        "unscored (unscorable): analyze step: noise sensitivity needs both the query and the response to it"),
    "noise_sensitivity/no-baseline": Why("Both baselineResponse and noisyQuery are required",
                                         "InvalidRunError: run 0: noise_sensitivity needs a baseline response"),
    "prompt_alignment/system-mode-no-system": Why("System prompt is required for system prompt alignment scoring",
                                                  "InvalidRunError: run 0: prompt_alignment needs a system prompt"),
    "prompt_alignment/user-mode-no-request": Why("User prompt is required for user prompt alignment scoring",
                                                 needs_input("prompt_alignment")),
    "prompt_alignment/both-mode-neither": Why("A user or system prompt is required for combined alignment scoring",
                                              "prompt alignment needs a user request ('input') or a system prompt"),
    "prompt_alignment/empty-response": Why("Agent response is required for prompt alignment scoring", NO_ASSISTANT),
    "multi_turn_judge/no-assistant-message": Why(local=NO_ASSISTANT),
    "tool_call_accuracy/no-request": Why(MASTRA_NO_MESSAGES, needs_input("tool_call_accuracy")),
    "tool_call_accuracy/empty-output": Why(MASTRA_NO_MESSAGES, NO_ASSISTANT),
    # the code scorers' cases
    "code_tool_call_accuracy/no-input": Why(MASTRA_NO_MESSAGES, needs_input("code_tool_call_accuracy")),
    "code_trajectory_accuracy/no-expectation": Why(
        local="InvalidRunError: run 0: code_trajectory_accuracy needs an expected trajectory"),
    "code_trajectory/token-budget": Why(
        "Cannot evaluate token budget: missing model-generation measurements or invalid total tokens",
        "unscored (step_error): preprocess step: InvalidRunError: Cannot evaluate token budget: missing"),
}


def refusal_problem(case_id: str, side: str, said: str | None, *, strict: bool) -> str | None:
    """What is wrong with `side`'s refusal of the case, or None: `said` is why it refused (None
    where it did not). A refusal must say the case's pinned piece; with `strict` (the default
    setting), a side that does not refuse must have no piece pinned."""
    pinned = getattr(REFUSALS.get(case_id, Why()), side)
    if said is None:
        return f"{case_id}: {side} did not refuse, but the case pins its refusal: {pinned!r}" if (
            strict and pinned is not None) else None
    if HARNESS_ERROR in said:
        return f"{case_id}: {side} refused with the harness's own error, not the case's: {said}"
    if pinned is None:
        return f"{case_id}: {side} refused, and the case pins no reason (add one to REFUSALS): {said}"
    return None if pinned in said else f"{case_id}: {side} refused saying {said!r}, not {pinned!r}"
