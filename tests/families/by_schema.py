"""Every distinct output schema the registered scorers send a judge, and one call that asks them all.

What a scorer run proves on a random-weight family model depends on the schemas it sends (the
grammar compiled against the family's tokenizer, answers valid or cut off, the prompt rendered
by the family's template), not on the scorer: the scorers' logic is the fast tier's, on the fake
judge. So `gather` runs every registered scorer, in every mode, once on `FULL_RUN` against
`RecordingJudge` (no model: seconds), and keeps one row per distinct schema; `check_by_schema`
then asks a family's judge for all of them in one batched call. A new scorer adds rows to that
call (when its schemas are new), never calls.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from localjudge.judge import ChatPrompt, Generation
from localjudge.scorers import MODES, SCORERS, build_scorer
from localjudge.scoring.answers import Failure, parse_answer
from localjudge.scoring.steps import JudgeStep
from localjudge.scoring.versioning import ProbeJudge
from tests.families.runs import ALLOWED_UNSCORED, FULL_RUN
from tests.scorer_options import OPTIONS

STEPS = ("preprocess", "analyze", "reason")  # a scorer's steps that may ask the judge
StepId = tuple[str, str, str]  # (registered scorer, mode, step)


@dataclass(frozen=True)
class SchemaRow:
    """One distinct schema: every prompt that asked for it (the family call sends the first),
    the largest token budget it was asked with, and every scorer step that asked for it."""

    schema: type[BaseModel]
    prompts: tuple[ChatPrompt, ...]
    budget: int
    asked_by: tuple[StepId, ...]


class RecordingJudge(ProbeJudge):
    """`ProbeJudge` (a minimal valid instance of each schema, what it was asked in `record`) that
    also keeps the schema classes, so a family judge can be asked for them."""

    def __init__(self) -> None:
        super().__init__()
        self.schemas: list[type[BaseModel]] = []

    def generate(
        self, prompts: Sequence[ChatPrompt], schemas: Sequence[type[BaseModel]], *, max_new_tokens: int
    ) -> list[Generation]:
        self.schemas += schemas
        return super().generate(prompts, schemas, max_new_tokens=max_new_tokens)


@dataclass
class CountingJudge:
    """A judge that counts its `generate` calls (the rows of each) and passes them on."""

    judge: Any
    calls: list[int] = field(default_factory=list)

    @property
    def identity(self) -> str:
        return str(self.judge.identity)

    def generate(
        self, prompts: Sequence[ChatPrompt], schemas: Sequence[type[BaseModel]], *, max_new_tokens: int
    ) -> list[Generation]:
        self.calls.append(len(prompts))
        return list(self.judge.generate(prompts, schemas, max_new_tokens=max_new_tokens))


def modes_of(name: str) -> tuple[str, ...]:
    """The modes the scorer registered as `name` has (a direct mode only with a `mode` parameter)."""
    return MODES if "mode" in inspect.signature(SCORERS[name]).parameters else ("pipeline",)


def judge_steps() -> set[StepId]:
    """Every judge step of every registered scorer in each of its modes. A model-free scorer
    (function steps only) has none: it has nothing to ask a family."""
    return {(name, mode, step) for name in SCORERS for mode in modes_of(name)
            for step in STEPS if isinstance(getattr(scorer_of(name, mode, None), f"{step}_step"), JudgeStep)}


def scorer_of(name: str, mode: str, judge: Any) -> Any:
    return build_scorer(name, judge, mode=mode, options=OPTIONS.get(name))


def gather() -> list[SchemaRow]:
    """The registered scorers (as registered now) on `FULL_RUN`, each judge step answered by its
    own `RecordingJudge`: one row per distinct schema (by its JSON schema), in first-asked order."""
    asked: list[tuple[StepId, ChatPrompt, type[BaseModel], int]] = []
    for name in SCORERS:
        for mode in modes_of(name):
            scorer = scorer_of(name, mode, RecordingJudge())
            steps = {step: getattr(scorer, f"{step}_step") for step in STEPS}
            judges = {step: RecordingJudge() for step, value in steps.items() if isinstance(value, JudgeStep)}
            if not judges:  # model-free (Mastra's code scorers and checks): nothing to ask a family
                continue
            tagged = dataclasses.replace(scorer, **{f"{step}_step": dataclasses.replace(steps[step], judge=judge)
                                                    for step, judge in judges.items()})
            tagged.run_batch([FULL_RUN])
            for step, judge in judges.items():
                asked += [((name, mode, step), prompt, schema, budget)
                          for (prompt, _, budget), schema in zip(judge.record, judge.schemas, strict=True)]
    rows: dict[str, SchemaRow] = {}
    for step_id, prompt, schema, budget in asked:
        key = json.dumps(schema.model_json_schema(), sort_keys=True)
        row = rows.setdefault(key, SchemaRow(schema, (), budget, ()))
        rows[key] = dataclasses.replace(row, prompts=(*row.prompts, prompt), budget=max(row.budget, budget),
                                        asked_by=(*row.asked_by, step_id))
    return list(rows.values())


@cache
def gathered() -> tuple[SchemaRow, ...]:
    """`gather` with the built-in registry, once a session."""
    return tuple(gather())


def check_by_schema(judge: Any, rows: Sequence[SchemaRow]) -> list[Generation]:
    """Ask `judge` for every row in ONE batched call, at the largest budget of any row (a call
    has one `max_new_tokens`, and the step runner too asks a step's rows at their largest
    budget; a row's own budget is smaller, which could only cut off more of its answers, and
    cut-off answers are allowed here). Every answer validates against its row's schema or is
    cut off at the token limit; none fails otherwise, none runs past the budget (no hang)."""
    budget = max(row.budget for row in rows)
    outputs = judge.generate([row.prompts[0] for row in rows], [row.schema for row in rows], max_new_tokens=budget)
    assert len(outputs) == len(rows)
    for row, out in zip(rows, outputs, strict=True):
        name = row.schema.__name__
        assert out.error is None, (name, out.error)
        assert out.new_tokens <= budget + 1, (name, out.new_tokens, budget)  # the last may be the end token
        answer = parse_answer(out, row.schema)
        if isinstance(answer, Failure):
            assert not out.finished and any(why in answer.message for why in ALLOWED_UNSCORED), \
                (name, answer.message, out.text)
    return outputs
