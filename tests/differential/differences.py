"""The closed table of where localjudge's scores differ from Mastra 1.10.2's on the same judge
answers, each with its reason, and what ``compat="mastra"`` does about it. docs/mastra-parity.md
holds the same table (by id, and whether compat switches each), and every entry is pinned by at
least one case (tests/differential/test_parity.py checks both ways). Each scorer page it shows
on (`Difference.pages`) names it too, and says what compat does."""

from __future__ import annotations

import re
from typing import NamedTuple


class Difference(NamedTuple):
    scorers: str  # where it shows
    mastra: str  # what Mastra 1.10.2's code does
    localjudge: str  # what localjudge does
    reason: str  # why localjudge keeps it
    compat: str = ""  # under compat="mastra": "Mastra's: ..." (switched), or "kept: why it cannot be"

    @property
    def switched(self) -> bool:
        """Whether compat="mastra" gives Mastra's outcome for it."""
        return self.compat.startswith(MASTRA)

    @property
    def pages(self) -> tuple[str, ...]:
        """The docs/scorers pages whose "differs from Mastra" section must name it: each named
        scorer's page, README.md for "every scorer ...", code-scorers.md for the code scorers and
        checks, ../writing-scorers.md for custom scorers (a parenthesis is a note, not a scorer)."""
        names = re.split(r"[,;]", re.sub(r"\([^)]*\)", "", self.scorers))
        return tuple(dict.fromkeys(_page(name.strip()) for name in names))


def _page(name: str) -> str:
    if name.startswith("custom scorer"):
        return "../writing-scorers.md"  # docs/writing-scorers.md: the page for scorers of your own
    if "code scorer" in name or name.startswith(("check_", "code_")) or name == "completeness":
        return "code-scorers.md"
    if name.startswith("every scorer"):
        return "README.md"
    return name.replace(" ", "-") + ".md"


MASTRA = "Mastra's"


DIFFERENCES: dict[str, Difference] = {
    "toxicity-severity": Difference(
        "toxicity", "toxic verdicts / verdicts (a plain count)",
        "severity-weighted: low 1/3, medium 2/3, high 1",
        "the seed document and Mastra's own packaged docs describe severity weighting; a mild jibe and a threat "
        "should not weigh the same",
        compat="Mastra's: the plain count"),
    "empty-output-toxicity": Difference(
        "toxicity", "the judge finds no opinions in an empty text; no verdicts scores 1, unscaled (the worst)",
        "0, with no judge call", "an empty output contains nothing toxic",
        compat="Mastra's: 1, unscaled, with no judge call"),
    "faithfulness-no-claims": Difference(
        "faithfulness", "no claims (an empty output, or a judge that lists none) scores 0",
        "scale: nothing in the output is unfaithful", "an answer that asserts nothing cannot contradict its context",
        compat="Mastra's: 0"),
    "faithfulness-tool-parts": Difference(
        "faithfulness", "with no context given, the tool results are read from the legacy "
        "`content.toolInvocations` only: a run whose results are only in message parts (or OpenAI `tool` "
        "messages) is judged against an empty context", "the results in message parts and `tool` messages are "
        "read too", "reading every place a run keeps its tool results is what a user expects; Mastra's own "
        "current messages keep them in parts",
        compat="Mastra's: `toolInvocations` only, each JSON.stringify'd"),
    "no-context": Difference(
        "hallucination, faithfulness", "a run with no context is judged against an empty one",
        "refused before any judge call", "against an empty context every claim is unsupported: the score measures "
        "the missing context, not the output",
        compat="Mastra's: judged against an empty context"),
    "claim-cap": Difference(
        "hallucination, faithfulness", "the judge lists as many claims as it likes",
        "at most one claim per 4 words of output (at least 2), by the grammar; a long output asked in parts of "
        "64 words (16 claims each), every part's claims judged",
        "a small judge pads short answers with claims they do not make",
        compat="kept: the cap is the grammar the judge writes under; a judge's claims without it cannot be "
               "reproduced from its claims with it"),
    "scale-0": Difference(
        "every scorer with a scale", "scale 0 becomes 1 (`|| 1`), or scores 0 (`??`: answer relevancy and "
        "similarity, summarization, rubric, multi-turn judge)", "refused: scale must be a finite positive number",
        "a scale of 0 is a mistake, and Mastra's two readings of it disagree",
        compat="Mastra's: accepted, and read as 1 or kept as 0 (every score 0), scorer by scorer, as Mastra reads it"),
    "rounding": Difference(
        "every scorer that rounds", "Math.round((x + EPSILON) * 100) / 100 on the binary value",
        "half up on the decimal the value prints as (`round_half_up`)",
        "neither is exact on every boundary: 0.22499999999999998 (3 unsure of 4 statements) is 0.23 in Mastra and "
        "0.22 here; 2.175 is 2.17 in Mastra and 2.18 here",
        compat="Mastra's: its roundToTwoDecimals (`js_round`)"),
    "unrounded": Difference(
        "multi-turn judge, rubric, context relevance (empty context); every code scorer and check; custom scorers",
        "the score is 1 x scale, not rounded; a code scorer returns its raw fraction (0.5161290322580645), a "
        "custom scorer its `generateScore`'s number as it is (1/3 is 0.3333333333333333)",
        "every score is rounded to 2 decimals", "one rule for every score",
        compat="Mastra's: not rounded"),
    "non-finite-score": Difference(
        "custom scorers", "a `generateScore` that returns NaN or Infinity scores it (NaN; Infinity is null in JSON)",
        "unscored, saying why (`generate_score gave float nan, not a finite number (the score)`)",
        "a NaN or an infinity is a score function's bug (0 / 0, a division by zero), not a measure: it would make "
        "every mean and threshold over it NaN or infinite",
        compat="kept: the bug is the same under either setting; a NaN of Mastra's own formula (answer relevancy's) "
               "is Mastra's"),
    "no-input-relevancy": Difference(
        "answer relevancy", "judges relevance to an empty question (`\"\"`)", "unscored",
        "relevance to nothing cannot be judged",
        compat="Mastra's: judged against an empty question"),
    "relevancy-partial-options": Difference(
        "answer relevancy", "options given without uncertaintyWeight drop its default: an unsure verdict makes "
        "the score NaN", "each option has its own default", "a Mastra bug, not a behaviour to copy",
        compat="Mastra's: NaN, with `uncertainty_weight=None` (Mastra's options without the weight)"),
    "summary-repeated-question": Difference(
        "summarization", "a question the judge repeats counts twice in coverage", "repeated questions are dropped",
        "a repeat asks nothing new, and a small judge repeats",
        compat="kept: repeats are dropped before the judge is asked about coverage, so there are no answers to "
               "the repeats to count"),
    "context-parts-gaps": Difference(
        "context relevance", "the judge sees every piece at once and notes only the gaps none of them fills",
        "over 20 pieces are asked in parts of 20; each part notes the gaps among its own pieces, and every "
        "part's notes count (each once), even a gap another part's pieces fill",
        "the grammar bounds every list (20 pieces a prompt), so each piece gets its own evaluation; a part cannot "
        "see the other parts' pieces in the same judge call",
        compat="kept: the parts are asked in one judge call, so no part sees another's pieces; a judge's notes "
               "over all pieces cannot be rebuilt from the parts' notes"),
    "no-scale-option": Difference(
        "noise sensitivity, tool call accuracy, trajectory accuracy; the code scorers and checks",
        "no scale option: scores are 0 to 1",
        "scale, as for every scorer (1 by default: the same scores)", "one option for every scorer",
        compat="Mastra's: the scale is ignored (0 to 1)"),
    "rubric-all-optional": Difference(
        "rubric", "when no criterion is required, all count as required",
        "a criterion marked optional is always optional", "an explicit `required: false` means what it says",
        compat="Mastra's: all count as required"),
    "rubric-empty-unscaled": Difference(
        "rubric", "no rubric scores 1, whatever the scale", "no criteria scores scale (a pass), with no judge call",
        "a pass is `scale` everywhere else",
        compat="Mastra's: 1, unscaled"),
    "no-assistant-message": Difference(
        "every scorer", "an output list with no assistant message is judged as empty text",
        "refused (the run is malformed)", "a run with nothing the agent said is a wiring error, not an answer",
        compat="kept: the run is refused where it is read, for every scorer, before any scorer's rule; compat "
               "changes scores, not which runs can be read"),
    "repeated-tool-call-id": Difference(
        "tool call accuracy", "calls sharing a toolCallId within one message's parts each count",
        "one call per toolCallId (the last part wins)", "an id names one call; Mastra merges the legacy list and "
        "the parts by id too",
        compat="kept: how a run's tool calls are read is shared by every scorer and by result keys"),
    "joined-messages": Difference(
        "the code scorers (checks: the same on the assistant messages)",
        "the text of every input message and every output message, joined with ', ' (a tool-only message or an "
        "empty text part adds an empty piece); checks join the assistant messages with ' ' (includes, excludes, "
        "similarity) or '' (equals, matches), so an earlier 'error ...; retrying.' fails excludes('error')",
        "the first user message and the last assistant message with text, as every scorer reads a run",
        "one reading of a run for every scorer: the answer judged is the agent's last word, as the LLM scorers' "
        "getAssistantMessageFromRunOutput reads it",
        compat="Mastra's: each scorer's own joined text (tests/differential/cases_messages.py)"),
    "matches-global-state": Difference(
        "check_matches", "a /g (or /y) RegExp keeps its lastIndex from one output to the next: each test starts "
        "where the last match ended, and a failed test resets it, so five matching outputs can score 1, 1, 0, 1, 0",
        "each output tested afresh, from its start", "a Mastra bug, not a behaviour to copy: a score must not hang on "
        "the outputs scored before it, or on their order",
        compat="kept: the state is a bug, and it hangs on the order runs are scored in, which batches, resumes and "
        "workers do not keep"),
    "score-contract": Difference(
        "custom scorers", "generateScore's number is the score: any finite number, kept as returned "
        "(generateScore(() => 4), a 1-5 rating, scores 4)",
        "create_scorer reads a fraction in [0, 1] (times scale) unless score_returns='score'; a number outside it "
        "leaves the row unscored, saying why",
        "one scale for every scorer, built-in or not: thresholds, gates, calibration and benchmarks read a score "
        "in [0, scale]",
        compat="Mastra's: the number is the score (score_returns defaults to 'score')"),
    "completeness-elements": Difference(
        "completeness", "elements found by the npm NLP library compromise (its tagger, verbs rewritten in place)",
        "elements by a rule imitating it (words, contractions opened, verbs to their base form by lemminflect)",
        "no Python library tags words as compromise does; the agreement on real texts is measured and "
        "documented (docs/scorers/code-scorers.md)",
        compat='kept: no Python library tags words as compromise does'),
    "no-expected-trajectory": Difference(
        "code_trajectory_accuracy", "a run with no expected trajectory scores 0",
        "refused (invalid_run): it needs one", "0 would count a wiring mistake as a wrong trajectory",
        compat="Mastra's: 0"),
}
