"""What the hallucination and faithfulness scorers share: claims, then one verdict per claim.

`claim_verdict_scorer` is their one definition: preprocess extracts the output's claims (the
`CLAIMS_STEP` below), analyze gives one verdict per claim against the context (exactly as many
as there are claims, by the grammar), the score is the share of claims with the counted label,
and the reason step sees the texts and the verdicts. Each scorer's file gives its labels,
prompt, example, and what an empty output or no claims scores. A long output is asked in parts,
its claims and their verdicts alike (`localjudge.scorers.judged.claim_parts`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple

from pydantic import BaseModel, Field, create_model

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.claim_parts import (
    MAX_CLAIM_PARTS,
    MAX_CLAIMS,
    WORDS_PER_CLAIM,
    claim_cap,
    part_text,
    split_claims,
    split_output,
    total_cap,
)
from localjudge.scorers.judged.verdicts import mean_label_prob, reason_step, verdict_lines
from localjudge.scoring import (
    DATA_NOTE,
    Build,
    ContextArg,
    JudgeStep,
    Results,
    Scorer,
    Shortcut,
    StatementText,
    Strict,
    UnscorableError,
    block,
    create_scorer,
    exactly,
    numbered,
    part_of,
)


class Claims(Strict):
    """Claims extracted from the output (at most MAX_CLAIMS; per output, see `claims_schema`)."""

    claims: Annotated[list[StatementText], Field(max_length=MAX_CLAIMS)]


def claims_schema(sample: Sample, results: Results) -> type[BaseModel]:
    """The claims schema for this output (this part of it): at most `claim_cap(text)` claims,
    by the grammar."""
    return _capped(claim_cap(part_text(sample.output, results)))


@functools.cache
def _capped(n: int) -> type[BaseModel]:
    field: Any = Annotated[list[StatementText], Field(max_length=n)]
    return create_model(f"Claims_{n}", __base__=Claims, claims=(field, ...))


# One line per rule, no indented continuation: runs of spaces tokenize differently through some
# GGUF-converted tokenizers (Mistral's), so a prompt with them would differ between the two loads.
CLAIMS_SYSTEM = """You list the claims a text makes.
A claim is one statement of fact, opinion or speculation, rewritten as a short sentence that stands on its own.
Rules:
- Claims come only from the TEXT. The question only tells you what the text refers to: """ \
    """never list what the question says or assumes.
- Include every factual, subjective and speculative claim ("the best", "pioneering", "may"). """ \
    """Keep numbers, dates and names exactly.
- Split a compound statement into separate claims. List each claim once.
- Skip greetings and questions.
- Add nothing that the text does not say.
""" + DATA_NOTE

def claims_prompt(question: str, text: str) -> str:
    """User message of the claims step: the question answered (if any), then the text."""
    asked = (f"The text answers this question (use it only to tell what the text refers to):\n"
             f"{block('QUESTION', question)}\n") if question.strip() else ""
    return f"{asked}List the claims of this text, each a full sentence.\n{block('TEXT', text)}"


def render_claims(sample: Sample, results: Results) -> str:
    return claims_prompt(sample.input, part_text(sample.output, results))


CLAIMS_EXAMPLE = (
    claims_prompt(
        "What is Marie Curie known for?",
        "Two Nobel Prizes, in 1903 and 1911. She was probably the greatest scientist ever.",
    ),
    '{"claims":["Marie Curie won two Nobel Prizes.","Marie Curie won a Nobel Prize in 1903.",'
    '"Marie Curie won a Nobel Prize in 1911.","Marie Curie was probably the greatest scientist ever."]}',
)


def dedupe_claims(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
    """Drop repeated claims (same words, ignoring case and spacing; across parts too): a repeat
    adds nothing. When the judge wrote as many claims as the caps allow (every part's), the
    result says so (``claim_cap``): the output may make more claims than were checked."""
    seen: set[str] = set()
    claims = []
    for claim in parsed["claims"]:
        key = " ".join(claim.lower().split())
        if key not in seen:
            seen.add(key)
            claims.append(claim)
    cap = total_cap(sample.output)
    return {"claims": claims, "claim_cap": cap} if len(parsed["claims"]) >= cap else {"claims": claims}


def terse_claim(question: str, output: str) -> str | None:
    """The one claim of a terse output (at most `WORDS_PER_CLAIM` words: "25 June 1961",
    "Frank Darabont"), read with its question; None for a longer output. Such an answer is too
    short to split, and asked to restate it as sentences a judge writes in the question's facts,
    often wrongly, and then finds its own rewrite unsupported."""
    words = output.split()
    if not words or len(words) > WORDS_PER_CLAIM:
        return None
    answer, asked = " ".join(words), " ".join(question.split())
    if not asked:
        return answer
    return f'The answer to "{asked}" is: {answer}' + ("" if answer[-1] in ".!?" else ".")


def claims_by_rule(sample: Sample, results: Results) -> dict[str, Any] | None:
    """The claims step's rule: a terse output is one claim (`terse_claim`), with no judge call."""
    claim = terse_claim(sample.input, sample.output)
    return None if claim is None else {"claims": [claim], "terse": True}


CLAIMS_STEP = JudgeStep(
    instructions=CLAIMS_SYSTEM, prompt=render_claims, schema=claims_schema, examples=(CLAIMS_EXAMPLE,),
    finish=dedupe_claims, by_rule=claims_by_rule, split=lambda sample, results: split_output(sample.output),
    max_parts=MAX_CLAIM_PARTS,
)


def claims_of(results: Results) -> list[str]:
    """The claims found by the preprocess step."""
    return list(results["preprocess_step_result"]["claims"])


def claim_check_prompt(context: str, claims: list[str], question: str = "") -> str:
    """User message for verdict steps: the question (if any), the context, the numbered claims."""
    asked = f"The claims answer this question:\n{block('QUESTION', question)}\n" if question.strip() else ""
    return (
        f"{asked}{block('CONTEXT', context)}\n"
        f"Claims to check against the context:\n{numbered(claims)}\n"
        f"Give exactly {len(claims)} verdicts, one per claim, in order."
    )


def part_claims(results: Results) -> list[str]:
    """The claims this part of the verdict step asks about (all of them, when asked whole)."""
    claims = claims_of(results)
    start, end = part_of(results, len(claims))
    return claims[start:end]


def render_claim_check(sample: Sample, results: Results) -> str:
    return claim_check_prompt("\n".join(sample.context or ()), part_claims(results), sample.input)


def attach_claims(key: str, labels: Mapping[str, str] | None = None) -> Any:
    """A step `finish` that checks one verdict per claim and writes each claim into its verdict
    (with `labels`, each judge label becomes its result label)."""

    def finish(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        claims, verdicts = claims_of(results), parsed["verdicts"]
        if len(verdicts) != len(claims):
            raise UnscorableError(f"judge gave {len(verdicts)} verdicts for {len(claims)} claims")
        if labels:
            verdicts = [{**v, "verdict": labels[v["verdict"]]} for v in verdicts]
        return {"verdicts": [{key: c, **v} for c, v in zip(claims, verdicts, strict=True)]}

    return finish


class ClaimExample(NamedTuple):
    """A worked example of a claim scorer: the texts, the claims, the judge's verdicts (JSON, as
    the analyze step's example answer) and the reason the reason step's example gives."""

    question: str
    context: str
    claims: list[str]
    answer: str
    reason: str

    def analyze_turn(self) -> tuple[str, str]:
        """The analyze step's example turn: (user message, assistant JSON)."""
        return claim_check_prompt(self.context, self.claims, self.question), self.answer


def claim_verdict_scorer(
    name: str,
    judge: Judge,
    build: Build,
    *,
    version: str,
    verdict: type[BaseModel],
    verdicts: type[BaseModel],
    instructions: str,
    example: ClaimExample,
    subject: str,
    counted: str,
    meaning: str,
    positive: str,
    higher_is_better: bool,
    if_empty: Shortcut,
    if_no_claims: Shortcut,
    context: ContextArg,
    get_context: Callable[..., Any] | None,
    fallback_context: Callable[[Mapping[str, Any]], ContextArg] | None = None,
    labels: Mapping[str, str] | None = None,
    needs_context: bool = True,
) -> Scorer:
    """A claims-then-verdicts scorer; its score is the share of claims whose verdict is `counted`.

    Args:
        build: The named scorer's scale, setting and Mastra numbers (`Build`).
        verdict, verdicts: One verdict's schema and the list's (its exact-count variant is made
            per item).
        instructions: The analyze step's system message.
        example: The worked example of the analyze step, and (explained) of the reason step.
        subject: The key each claim gets inside its verdict (``"statement"``, ``"claim"``).
        counted: The verdict label the score counts.
        meaning: The reason step's words on what the score means (``lower is better...``).
        positive, higher_is_better: What a high score means, and its direction (see `Scorer`).
        if_empty, if_no_claims: (fraction, reason) for an empty output and for no claims.
        labels: The words the judge answers with, to the result's labels, where the result's
            would mislead a judge: hallucination's ``yes`` means hallucinated (Mastra's
            polarity), which judges read as "yes, supported", so its judge answers
            ``supported`` / ``unsupported``. The example's answer is in the judge's words.
        needs_context: Refuse a run with no context before any judge call (False: judge it
            against an empty one, Mastra's way, for ``compat="mastra"``).
    """
    scale = build.scale
    labels = dict(labels or {})  # the judge's word -> the result's label (none: the same labels)
    in_words = {result: word for word, result in labels.items()}  # the result's label -> the judge's word
    judge_counted = in_words.get(counted, counted)

    def schema(run: Sample, results: Results) -> type[BaseModel]:
        return exactly(verdict, len(part_claims(results)), verdicts)

    def shortcut(run: Sample, results: Results) -> Shortcut | None:
        if not run.output.strip():
            return if_empty
        if "preprocess_step_result" in results and not claims_of(results):
            return if_no_claims
        return None

    def score(run: Sample, results: Results) -> float:
        found = results["analyze_step_result"]["verdicts"]
        return sum(v["verdict"] == counted for v in found) / len(found)

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        return mean_label_prob(label_probs["analyze"], judge_counted, len(results["analyze_step_result"]["verdicts"]))

    def summary(run: Sample, results: Results) -> str:
        shown = [{**v, "verdict": in_words.get(v["verdict"], v["verdict"])}  # in the judge's words
                 for v in results["analyze_step_result"]["verdicts"]]
        return (
            f"Score: {results['score']:g} (from 0 to {scale:g}; {meaning}).\n"
            f"Verdicts on the output's claims:\n{verdict_lines(shown, subject)}\n"
            "Explain the score: which claims the context supports, and which it contradicts or does not mention."
        )

    answer = [{**v, "verdict": labels.get(v["verdict"], v["verdict"])}
              for v in json.loads(example.answer)["verdicts"]]
    example_run = Sample("example", example.question, " ".join(example.claims), (example.context,))
    example_results: Results = {"analyze_step_result": {"verdicts": [
        {subject: c, **v} for c, v in zip(example.claims, answer, strict=True)]}}
    example_results["score"] = round(score(example_run, example_results) * scale, 2)

    analyze = JudgeStep(instructions=instructions, prompt=render_claim_check, schema=schema,
                        examples=(example.analyze_turn(),), finish=attach_claims(subject, labels),
                        split=lambda run, results: split_claims(claims_of(results)), max_parts=MAX_CLAIM_PARTS)
    return (
        create_scorer(name, judge=judge, version=version, needs_context=needs_context, context=context,
                      get_context=get_context, fallback_context=fallback_context, shortcut=shortcut,
                      prob_score=prob_score, positive=positive, higher_is_better=higher_is_better,
                      **build.create_keywords())
        .preprocess(CLAIMS_STEP)
        .analyze(analyze)
        .generate_score(score)
        .generate_reason(reason_step(summary, example=(example_run, example_results, example.reason)))
    )

