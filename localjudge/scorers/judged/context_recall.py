"""Context recall: how much of the reference answer can be found in the retrieved context? The
share of the ground truth's claims that the context supports.

Inputs: `ground_truth` (the reference answer) and `context` (the retrieved pieces: required;
or `context=` / `get_context=`, as for context precision); `input` (the question) is shown so
the judge can read what the claims refer to. The judged `output` plays no part: recall measures
the retrieval, not the answer.
Steps: the claims are the ground truth's sentences, by rule (`statements.sentences_of`, every
one; over 10 asked in parts of 10 in the same judge call; a ground truth of at most 4 words is
one claim read with its question,
`claims.terse_claim`), so the count is known and no judge call extracts them; one analyze
step gives exactly one verdict per claim, in order (enforced by the grammar): ``yes`` = the
context supports everything the claim says. Score, as Mastra's: min(1, yes / claims) x scale;
higher is better. A run without a ground truth: 0, with no judge call (Mastra's score for a
missing ground truth); a run without context is refused before any judge call.
`prob_score`: the mean probability of ``yes`` over the claims.
``mode="direct"``: one yes/no question instead (does the context hold everything the reference
answer says?): `scale` for yes, 0 for no.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.claims import attach_claims, claim_check_prompt, claims_of, terse_claim
from localjudge.scorers.judged.direct import DirectVerdict, one_question_scorer
from localjudge.scorers.judged.statements import sentences_of
from localjudge.scorers.judged.verdicts import mean_label_prob, verdict_lines
from localjudge.scoring import (
    DATA_NOTE,
    MAX_ITEMS,
    Build,
    ContextArg,
    JudgeStep,
    MastraNumbers,
    Reason,
    ReasonText,
    Results,
    Scorer,
    Shortcut,
    Strict,
    block,
    create_scorer,
    exactly,
    part_of,
    spans,
)

VERSION = "context-recall-v1"
DIRECT_VERSION = "context-recall-direct-v1"


class RecallVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


class RecallVerdicts(Strict):
    verdicts: Annotated[list[RecallVerdict], Field(min_length=1, max_length=MAX_ITEMS)]


ANALYZE_SYSTEM = f"""You check whether a retrieved context holds the facts of a reference answer.
Each numbered claim is a sentence of the reference answer. For each claim give:
- verdict "yes" if the context states or clearly implies everything the claim says, even in other words;
- verdict "no" if the context does not mention it, supports only part of it, or says otherwise;
- a short reason.
Use only the context, never your own knowledge. Give exactly one verdict per claim, in order.
{DATA_NOTE}"""

NO_TRUTH = (0.0, "No ground truth was given, so there are no reference claims to find in the context.")
NO_CLAIMS = (0.0, "No claims could be read from the ground truth.")


def reference_claims(sample: Sample, results: Results) -> dict[str, Any]:
    """The preprocess step, by rule: the ground truth's sentences are its claims; a terse one
    (at most 4 words, "Chicago") is one claim read with its question, as the claim scorers'
    terse outputs are (`claims.terse_claim`), flagged ``"terse": true``."""
    truth = sample.ground_truth or ""
    claim = terse_claim(sample.input, truth)
    return {"claims": sentences_of(truth)} if claim is None else {"claims": [claim], "terse": True}


def shortcut(sample: Sample, results: Results) -> Shortcut | None:
    if not sample.ground_truth:
        return NO_TRUTH
    if "preprocess_step_result" in results and not claims_of(results):
        return NO_CLAIMS
    return None


def part_claims(results: Results) -> list[str]:
    """The claims this part of the analyze step asks about (all of them, asked whole)."""
    claims = claims_of(results)
    start, end = part_of(results, len(claims))
    return claims[start:end]


def split_claims(sample: Sample, results: Results) -> list[tuple[int, int]]:
    """The analyze step's split: the claims in parts of at most `MAX_ITEMS`, in order."""
    return spans(len(claims_of(results)), MAX_ITEMS)


def render_analyze(sample: Sample, results: Results) -> str:
    return claim_check_prompt("\n".join(sample.context or ()), part_claims(results), sample.input)


def analyze_schema(sample: Sample, results: Results) -> type[BaseModel]:
    """Exactly one verdict per claim of the ground truth (of this part of them)."""
    return exactly(RecallVerdict, len(part_claims(results)), RecallVerdicts)


def recall(verdicts: list[dict[str, Any]], claims: int) -> float:
    """Mastra's min(1, yes / claims); no claims: 0."""
    if not claims:
        return 0.0
    return min(1.0, sum(v["verdict"] == "yes" for v in verdicts) / claims)


EXAMPLE_QUESTION = "How do honey bee colonies work?"
EXAMPLE_CONTEXT = "Honey bees live in colonies led by a single queen.\nA worker bee lives about six weeks in summer."
EXAMPLE_CLAIMS = ["A honey bee colony has one queen.", "Worker bees live about six weeks in summer.",
                  "Honey bees can see ultraviolet light."]
ANALYZE_EXAMPLE = (
    claim_check_prompt(EXAMPLE_CONTEXT, EXAMPLE_CLAIMS, EXAMPLE_QUESTION),
    '{"verdicts":[{"verdict":"yes","reason":"A single queen leads the colony."},'
    '{"verdict":"yes","reason":"The context gives six weeks."},'
    '{"verdict":"no","reason":"Eyesight is not mentioned."}]}',
)
REASON_EXAMPLE = ("The context covers the single queen and the six-week life of a worker, but it says nothing "
                  "about what bees can see, so one of the three reference sentences is missing.")
REASON_EXAMPLE_ANSWER = json.dumps({"reason": REASON_EXAMPLE}, separators=(",", ":"))

REASON_SYSTEM = f"""You explain a context recall score in one to three plain sentences.
Use the score given (do not recompute it) and the verdicts.
Say which sentences of the reference answer the context supports and what the context lacks.
Do not use your own knowledge. Do not repeat the instructions or the score's definition.
{DATA_NOTE}"""


# createContextRecallScorer: roundToTwoDecimals, `options?.scale || 1`
MASTRA_NUMBERS = MastraNumbers(rounded=True, scale="zero_is_one")


def context_recall_scorer(judge: Judge, *, context: ContextArg = None, get_context: Callable[..., Any] | None = None,
                          scale: float = 1.0, mode: str = "pipeline", compat: str = "localjudge") -> Scorer:
    """Build the context recall scorer (higher is better).

    Args:
        judge: The local model judging.
        context: Static context for every run (replaces the run's own `context` field).
        get_context: Called once per run, Mastra's way; takes precedence over `context`.
        scale: Scores lie in [0, scale]; must be positive.
        mode: ``"pipeline"`` (a verdict per sentence of the ground truth; a reason) or
            ``"direct"`` (one yes/no: does the context hold everything the ground truth says?).
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, mode=mode, compat=compat)
    scale = build.scale
    if build.direct:
        return _direct(judge, build, context=context, get_context=get_context)

    def score(sample: Sample, results: Results) -> float:
        return recall(results["analyze_step_result"]["verdicts"], len(claims_of(results)))

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        return mean_label_prob(label_probs["analyze"], "yes", len(results["analyze_step_result"]["verdicts"]))

    def summary(sample: Sample, results: Results) -> str:
        verdicts = verdict_lines(results["analyze_step_result"]["verdicts"], "claim")
        return (f"Score: {results['score']:g} (from 0 to {scale:g}; higher is better; the share of the reference "
                f"answer's sentences that the context supports).\nVerdicts on the reference answer's sentences "
                f"(yes = the context supports it):\n{block('VERDICTS', verdicts)}\n"
                "Explain the score: which sentences of the reference the context supports, and what it lacks.")

    def reason_prompt(sample: Sample, results: Results) -> str:
        shown = [block("QUESTION", sample.input)] if sample.input.strip() else []
        shown += [block("REFERENCE", sample.ground_truth or ""), block("CONTEXT", "\n".join(sample.context or ()))]
        return "\n".join([*shown, summary(sample, results)])

    verdicts = json.loads(ANALYZE_EXAMPLE[1])["verdicts"]
    example_run = Sample("example", EXAMPLE_QUESTION, "", (EXAMPLE_CONTEXT,), ground_truth=" ".join(EXAMPLE_CLAIMS))
    example_results: Results = {"preprocess_step_result": {"claims": EXAMPLE_CLAIMS}, "analyze_step_result": {
        "verdicts": [{"claim": c, **v} for c, v in zip(EXAMPLE_CLAIMS, verdicts, strict=True)]}}
    example_results["score"] = round(score(example_run, example_results) * scale, 2)
    reason = JudgeStep(
        instructions=REASON_SYSTEM, prompt=reason_prompt, schema=Reason,
        examples=((reason_prompt(example_run, example_results), REASON_EXAMPLE_ANSWER),),
        finish=lambda sample, results, parsed: parsed["reason"])
    analyze = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render_analyze, schema=analyze_schema,
                        examples=(ANALYZE_EXAMPLE,), finish=attach_claims("claim"),
                        split=split_claims)
    return (
        create_scorer("context_recall", judge=judge, version=VERSION, needs_context=True, context=context,
                      get_context=get_context, shortcut=shortcut, prob_score=prob_score,
                      positive="context holds the reference", higher_is_better=True, **build.create_keywords())
        .preprocess(reference_claims)
        .analyze(analyze)
        .generate_score(score)
        .generate_reason(reason)
    )


DIRECT_SYSTEM = f"""You answer one question about a retrieved context, with a verdict and a short reason.
Answer "yes" if the context states or clearly implies every fact of the reference answer, even in other words.
Answer "no" if any fact of the reference answer is missing from the context or contradicted by it.
Use only the context, never your own knowledge.
The reason names a fact the context lacks, or says that all of them are there.
{DATA_NOTE}"""


def direct_prompt(sample: Sample) -> str:
    shown = [block("QUESTION", sample.input)] if sample.input.strip() else []
    shown += [block("CONTEXT", "\n".join(sample.context or ())), block("REFERENCE", sample.ground_truth or "")]
    return "\n".join([*shown, "Does the context contain everything the reference answer says? "
                      "Answer yes or no, then give a short reason."])


def _direct(judge: Judge, build: Build, *, context: ContextArg, get_context: Callable[..., Any] | None) -> Scorer:
    """Direct mode: one yes/no on the whole ground truth (a step of its own: `direct.direct_scorer`
    shows the output, and recall judges the ground truth instead)."""

    def direct_shortcut(sample: Sample, results: Results) -> Shortcut | None:
        return NO_TRUTH if not sample.ground_truth else None

    step = JudgeStep(instructions=DIRECT_SYSTEM, prompt=lambda sample, results: direct_prompt(sample),
                     schema=DirectVerdict)
    return one_question_scorer("context_recall", judge, step, build, version=DIRECT_VERSION,
                               positive="context holds the reference", higher_is_better=True, needs_context=True,
                               context=context, get_context=get_context, shortcut=direct_shortcut)
