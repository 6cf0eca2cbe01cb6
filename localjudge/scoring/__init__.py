"""The scorer author's kit: what a scorer is made of and how it runs.

A scorer (`Scorer`, built with `create_scorer`) declares steps (`JudgeStep`: a prompt and a
bounded output schema; or a plain function), a pure score function and a reason step.
`calls` is the judge-call protocol (a batch is a generator of the calls it needs; several batches
run in lock step, their calls merged into one per round: `run_together`), `step_runner` runs one
scorer over a batch (one judge call per judge step: `items` holds each run's state and result,
`asking` renders a step's prompts and asks), `answers` is the one
place judge output is parsed, `copying` catches replayed worked examples, `versioning` hashes
what a scorer sends the judge, `schemas` and `prompting` are the bounded-schema and
untrusted-text helpers every scorer uses. `build` is what a factory works out once from its
``scale``, ``mode`` and ``compat`` (`Build`), handed to the kit it builds with.
"""

from localjudge.scoring.build import MODES, Build, Mode, check_mode
from localjudge.scoring.calls import Ask, BatchSteps, Outcome, answered_alone, ask_merged, merged, rounds, run_together
from localjudge.scoring.classifier import Classifier, create_classifier_scorer
from localjudge.scoring.compat import (
    AS_RETURNED,
    COMPATS,
    LOCALJUDGE,
    Compat,
    CompatName,
    Exact,
    MastraNumbers,
    check_compat,
    check_scale,
    js_number,
    js_round,
    round_half_up,
)
from localjudge.scoring.copying import normal
from localjudge.scoring.create import create_scorer
from localjudge.scoring.items import read_samples
from localjudge.scoring.prompting import DATA_NOTE, block, neutralise, numbered
from localjudge.scoring.run_filter import filter_run
from localjudge.scoring.schemas import (
    MAX_ITEMS,
    REASON_CHARS,
    STATEMENT_CHARS,
    Reason,
    ReasonText,
    ScoreAnswer,
    StatementText,
    Strict,
    exactly,
    score_answer,
    text,
    token_budget,
)
from localjudge.scoring.scorer import Scorer
from localjudge.scoring.steps import (
    ContextArg,
    JudgeStep,
    NotScorable,
    Results,
    Shortcut,
    StepFunction,
    UnscorableError,
    call_get_context,
    join_lists,
    not_scorable,
    part_of,
    prompt_object,
    resolve,
    spans,
)

__all__ = [
    "AS_RETURNED",
    "Ask",
    "Build",
    "MODES",
    "Mode",
    "check_mode",
    "Outcome",
    "BatchSteps",
    "Classifier",
    "COMPATS",
    "LOCALJUDGE",
    "Compat",
    "CompatName",
    "Exact",
    "MastraNumbers",
    "check_compat",
    "js_number",
    "js_round",
    "DATA_NOTE",
    "MAX_ITEMS",
    "REASON_CHARS",
    "STATEMENT_CHARS",
    "ContextArg",
    "JudgeStep",
    "NotScorable",
    "Reason",
    "ReasonText",
    "Results",
    "ScoreAnswer",
    "Scorer",
    "Shortcut",
    "StatementText",
    "StepFunction",
    "Strict",
    "UnscorableError",
    "block",
    "call_get_context",
    "answered_alone",
    "ask_merged",
    "merged",
    "check_scale",
    "create_classifier_scorer",
    "create_scorer",
    "exactly",
    "filter_run",
    "neutralise",
    "normal",
    "not_scorable",
    "join_lists",
    "part_of",
    "spans",
    "numbered",
    "prompt_object",
    "read_samples",
    "resolve",
    "rounds",
    "round_half_up",
    "run_together",
    "score_answer",
    "text",
    "token_budget",
]
