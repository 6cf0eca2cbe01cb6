"""The closed table of where localjudge's scores differ from Mastra 1.10.2's on the same judge
answers, each with its reason. docs/mastra-parity.md holds the same table (by id), and every
entry is pinned by at least one case (tests/differential/test_parity.py checks both ways)."""

from __future__ import annotations

from typing import NamedTuple


class Difference(NamedTuple):
    scorers: str  # where it shows
    mastra: str  # what Mastra 1.10.2's code does
    localjudge: str  # what localjudge does
    reason: str  # why localjudge keeps it


DIFFERENCES: dict[str, Difference] = {
    "toxicity-severity": Difference(
        "toxicity", "toxic verdicts / verdicts (a plain count)",
        "severity-weighted: low 1/3, medium 2/3, high 1",
        "the seed document and Mastra's own packaged docs describe severity weighting; a mild jibe and a threat "
        "should not weigh the same"),
    "empty-output-toxicity": Difference(
        "toxicity", "the judge finds no opinions in an empty text; no verdicts scores 1, unscaled (the worst)",
        "0, with no judge call", "an empty output contains nothing toxic"),
    "faithfulness-no-claims": Difference(
        "faithfulness", "no claims (an empty output, or a judge that lists none) scores 0",
        "scale: nothing in the output is unfaithful", "an answer that asserts nothing cannot contradict its context"),
    "no-context": Difference(
        "hallucination, faithfulness", "a run with no context is judged against an empty one",
        "refused before any judge call", "against an empty context every claim is unsupported: the score measures "
        "the missing context, not the output"),
    "claim-cap": Difference(
        "hallucination, faithfulness", "the judge lists as many claims as it likes",
        "at most one claim per 4 words of output (2 to 16), by the grammar",
        "a small judge pads short answers with claims they do not make"),
    "scale-0": Difference(
        "every scorer with a scale", "scale 0 becomes 1 (`|| 1`), or scores 0 (`??`: answer relevancy and "
        "similarity, summarization, rubric, multi-turn judge)", "refused: scale must be a finite positive number",
        "a scale of 0 is a mistake, and Mastra's two readings of it disagree"),
    "rounding": Difference(
        "every scorer that rounds", "Math.round((x + EPSILON) * 100) / 100 on the binary value",
        "half up on the decimal the value prints as (`round_half_up`)",
        "neither is exact on every boundary: 0.22499999999999998 (3 unsure of 4 statements) is 0.23 in Mastra and "
        "0.22 here; 2.175 is 2.17 in Mastra and 2.18 here"),
    "unrounded": Difference(
        "multi-turn judge, rubric, context relevance (empty context); every code scorer and check",
        "the score is 1 x scale, not rounded; a code scorer returns its raw fraction (0.5161290322580645)",
        "every score is rounded to 2 decimals", "one rule for every score"),
    "no-input-relevancy": Difference(
        "answer relevancy", "judges relevance to an empty question (`\"\"`)", "unscored",
        "relevance to nothing cannot be judged"),
    "relevancy-partial-options": Difference(
        "answer relevancy", "options given without uncertaintyWeight drop its default: an unsure verdict makes "
        "the score NaN", "each option has its own default", "a Mastra bug, not a behaviour to copy"),
    "summary-repeated-question": Difference(
        "summarization", "a question the judge repeats counts twice in coverage", "repeated questions are dropped",
        "a repeat asks nothing new, and a small judge repeats"),
    "no-scale-option": Difference(
        "noise sensitivity, tool call accuracy, trajectory accuracy; the code scorers and checks",
        "no scale option: scores are 0 to 1",
        "scale, as for every scorer (1 by default: the same scores)", "one option for every scorer"),
    "rubric-all-optional": Difference(
        "rubric", "when no criterion is required, all count as required",
        "a criterion marked optional is always optional", "an explicit `required: false` means what it says"),
    "rubric-empty-unscaled": Difference(
        "rubric", "no rubric scores 1, whatever the scale", "no criteria scores scale (a pass), with no judge call",
        "a pass is `scale` everywhere else"),
    "no-assistant-message": Difference(
        "every scorer", "an output list with no assistant message is judged as empty text",
        "refused (the run is malformed)", "a run with nothing the agent said is a wiring error, not an answer"),
    "repeated-tool-call-id": Difference(
        "tool call accuracy", "calls sharing a toolCallId within one message's parts each count",
        "one call per toolCallId (the last part wins)", "an id names one call; Mastra merges the legacy list and "
        "the parts by id too"),
    "joined-messages": Difference(
        "the code scorers (checks: the same on the assistant messages)",
        "the text of every input message and every output message, joined with ', ' (a tool-only message adds an "
        "empty piece); checks join the assistant messages with ' ' or ''",
        "the first user message and the last assistant message with text, as every scorer reads a run",
        "one reading of a run for every scorer, and keyed results: a run's score depends on what it answered"),
    "completeness-elements": Difference(
        "completeness", "elements found by the npm NLP library compromise (its tagger, verbs rewritten in place)",
        "elements by a rule imitating it (words, contractions opened, verbs to their base form by lemminflect)",
        "no Python library tags words as compromise does; the agreement on real texts is measured and "
        "documented (docs/scorers/code-scorers.md)"),
    "tool-is-error": Difference(
        "check_no_tool_errors, code_trajectory's tool failures",
        "a result invocation flagged isError: true is a failure", "it is a success: localjudge's reading of a "
        "run's tool calls keeps no isError flag", "the flag is Mastra's own addition to stored messages; a failed "
        "call is recorded as output-error, which both read as a failure"),
    "no-expected-trajectory": Difference(
        "code_trajectory_accuracy", "a run with no expected trajectory scores 0",
        "refused (invalid_run): it needs one", "0 would count a wiring mistake as a wrong trajectory"),
}
