"""Rubric: does the output meet every required criterion of a rubric you write? Pass or fail.

Inputs: `output` (judged); `input` is shown to the judge as the request answered.
Options: `criteria`, each a plain-English criterion (``"cites at least one source"``) or a
mapping ``{"criterion": ..., "required": bool}``; a criterion is required unless marked
``"required": False``. Steps: one analyze step gives exactly one
verdict per criterion, in order (enforced by the grammar): ``yes`` = the output meets it.
Score, as Mastra's: `scale` if every required criterion is met, else 0; higher is better.
No criteria: `scale` (Mastra: no rubric gives 1).
The reason lists the criteria met and missed (no judge call, as Mastra's formatted reason).
`prob_score`: the probability that every required criterion is met, the product of the judge's
``yes`` probabilities over them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scorers.judged.verdicts import label_choices
from localjudge.scoring import (
    DATA_NOTE,
    Build,
    Exact,
    JudgeStep,
    MastraNumbers,
    ReasonText,
    Results,
    Scorer,
    Shortcut,
    Strict,
    block,
    create_scorer,
    exactly,
)

VERSION = "rubric-v1"
MAX_CRITERIA = 20


class Criterion(NamedTuple):
    text: str
    required: bool


class CriterionVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


class CriterionVerdicts(Strict):
    verdicts: Annotated[list[CriterionVerdict], Field(min_length=1, max_length=MAX_CRITERIA)]


ANALYZE_SYSTEM = f"""You check a response against a rubric.
For each numbered criterion give verdict "yes" if the response meets it, "no" if it does not, and a short reason.
Judge each criterion on its own, by what the response actually says.
Give exactly one verdict per criterion, in order.
{DATA_NOTE}"""


def rubric_prompt(request: str, response: str, criteria: Sequence[Criterion]) -> str:
    shown = block("REQUEST", request) + "\n" if request.strip() else ""
    lines = "\n".join(f"{i}. {c.text}" for i, c in enumerate(criteria, 1))
    return (f"{shown}{block('RESPONSE', response)}\nThe rubric, one numbered criterion a line:\n"
            f"{block('CRITERIA', lines)}\nGive exactly {len(criteria)} verdicts, one per criterion, in order.")


EXAMPLE = (
    rubric_prompt("Write a one-line greeting for our shop's website.", "Welcome to Bloom & Co, Leeds' friendliest "
                  "florist!", [Criterion("Names the shop.", True), Criterion("Mentions opening hours.", True)]),
    '{"verdicts":[{"verdict":"yes","reason":"Names Bloom & Co."},'
    '{"verdict":"no","reason":"No hours given."}]}',
)


RUBRIC_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")  # Mastra's parseRubricString: a list marker


def check_criteria(criteria: str | Sequence[str | Mapping[str, Any]]) -> tuple[Criterion, ...]:
    """The criteria as (text, required): required unless marked ``"required": False``, so a
    rubric with none marked is all required (Mastra's rule). As Mastra's `createRubricScorer`
    takes them too: ``{"description": ..., "required": ...}``, or one string, a criterion a line
    (a leading ``-``, ``*``, ``\u2022`` or ``1.`` / ``1)`` dropped; blank lines skipped; all required)."""
    if isinstance(criteria, str):
        lines = (RUBRIC_BULLET.sub("", line).strip() for line in criteria.split("\n"))
        criteria = [line for line in lines if line]
    if isinstance(criteria, bytes) or not isinstance(criteria, Sequence):
        raise TypeError("criteria must be a list of criteria (strings or {'criterion': ..., 'required': ...}) "
                        "or one string, a criterion a line")
    if len(criteria) > MAX_CRITERIA:
        raise ValueError(f"at most {MAX_CRITERIA} criteria per rubric, got {len(criteria)}")
    parsed = []
    for item in criteria:
        if not isinstance(item, (str, Mapping)):
            raise ValueError(f"a criterion must be text or {{'criterion': ..., 'required': ...}}, got {item!r}")
        text = item if isinstance(item, str) else item.get("criterion", item.get("description"))
        required = None if isinstance(item, str) else item.get("required")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"a criterion must be non-empty text (its 'criterion', or Mastra's 'description'), "
                             f"got {item!r}")
        if required is not None and not isinstance(required, bool):
            raise ValueError(f"'required' must be true or false, got {required!r}")
        parsed.append(Criterion(text.strip(), required is not False))
    return tuple(parsed)


# createRubricScorer: 1 x scale, not rounded; `options.scale ?? 1` (0 kept: every score 0)
MASTRA_NUMBERS = MastraNumbers(rounded=False, scale="zero_stays")


def rubric_scorer(judge: Judge, *, criteria: str | Sequence[str | Mapping[str, Any]], scale: float = 1.0,
                  compat: str = "localjudge") -> Scorer:
    """Build a rubric scorer (higher is better: `scale` if every required criterion is met, else 0).

    Args:
        judge: The local model judging.
        criteria: The rubric: plain-English criteria, or ``{"criterion": text, "required": bool}``
            mappings (Mastra's ``{"description": ...}`` too), at most 20; or one string, a
            criterion a line. A criterion is required unless marked ``"required": False``.
        scale: Scores lie in [0, scale]; must be positive.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`) and rules: with no
            criterion required every one counts, and no rubric scores 1 whatever the scale.
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, compat=compat)
    scale = build.kept  # the scale kept: 0 where Mastra keeps a scale of 0
    rubric = check_criteria(criteria)
    mastra = build.mastra
    if mastra and not any(c.required for c in rubric):  # Mastra: none required -> all required
        rubric = tuple(Criterion(c.text, True) for c in rubric)
    passed = (Exact(1.0) if mastra else 1.0, "No rubric criteria were given, so nothing can fail.")

    def shortcut(sample: Sample, results: Results) -> Shortcut | None:
        return passed if not rubric else None

    def render(sample: Sample, results: Results) -> str:
        return rubric_prompt(sample.input, sample.output, rubric)

    def schema(sample: Sample, results: Results) -> type[BaseModel]:
        return exactly(CriterionVerdict, len(rubric), CriterionVerdicts)

    def attach(sample: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        return {"verdicts": [{"criterion": c.text, "required": c.required, **v}
                             for c, v in zip(rubric, parsed["verdicts"], strict=True)]}

    def score(sample: Sample, results: Results) -> float:
        return float(all(v["verdict"] == "yes" for v in results["analyze_step_result"]["verdicts"] if v["required"]))

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        verdicts = results["analyze_step_result"]["verdicts"]
        choices = label_choices(label_probs["analyze"], "yes")
        if len(choices) != len(verdicts):
            return None
        probability = 1.0
        for choice, verdict in zip(choices, verdicts, strict=True):
            if verdict["required"]:
                probability *= choice["yes"]
        return probability

    def reason(sample: Sample, results: Results) -> str:
        verdicts = results["analyze_step_result"]["verdicts"]
        missed = [v for v in verdicts if v["verdict"] == "no"]
        failed = [v for v in missed if v["required"]]
        head = (f"Failed: {len(failed)} required criteria not met." if failed
                else f"Passed: every required criterion met ({sum(v['required'] for v in verdicts)}).")
        lines = [f"- {'met' if v['verdict'] == 'yes' else 'missed'}{'' if v['required'] else ' (optional)'}: "
                 f"{v['criterion']} ({v['reason']})" for v in verdicts]
        return "\n".join([head, *lines])

    step = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render, schema=schema, examples=(EXAMPLE,), finish=attach)
    return (
        create_scorer("rubric", judge=judge, version=VERSION, shortcut=shortcut, prob_score=prob_score,
                      positive="meets the rubric", higher_is_better=True, **build.create_keywords())
        .analyze(step)
        .generate_score(score)
        .generate_reason(reason)
    )
