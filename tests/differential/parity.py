"""The differential tier's machinery: a case (one run, the same judge answers in each side's
shape), the closed table of known differences, and how each side is run.

A `Case` holds one run and the judge's answers twice: as localjudge's FakeJudge script (by
schema family) and as the answers Mastra's judge gives, in order, to its JSON steps (its
free-text reason step is answered by the harness). Both say the same thing: the same claims
and verdicts, in each side's words and shapes. Where localjudge decides a step by rule (a terse
answer as one claim, an empty output) the Mastra answers are what the case author expects a
judge following Mastra's prompt to give for that run. Where localjudge splits text into units by
rule (statements, sentences) the Mastra answers list the same units: those cases compare the
score functions on the same units, not the splitting (no real model runs Mastra's prompt here).

`expect` is the outcome both sides must have (a score, or `REFUSED`: a run refused or left
unscored, an error thrown), or a `Differs` naming an entry of `DIFFERENCES` with each side's
pinned outcome. docs/mastra-parity.md lists the same entries: the table is closed. Why a side
refuses is pinned too, by case, in tests/differential/refusals.py.

Each side's judge answers only what the case scripts: a call the script does not cover fails
the case (Mastra's harness throws, localjudge's `scripted_judge` raises; no default answer
fills it), and an answer left unasked fails it too. Only the free-text reason step is answered
by the tier itself, on both sides alike.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from localjudge.judge import FakeJudge, ScriptEntry, UnscriptedCallError
from localjudge.samples import InvalidRunError
from localjudge.scorers import build_scorer

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "differential" / "node"
NODE = NODE_DIR / "node_modules" / ".bin" / "node"
HARNESS = NODE_DIR / "harness.mjs"
REFUSED = "refused"  # a run refused before scoring, left unscored, or whose scorer threw
Outcome = float | str

# localjudge's scorer -> Mastra 1.10.2's factory in @mastra/evals/scorers/prebuilt
FACTORIES = {
    "hallucination": "createHallucinationScorer",
    "faithfulness": "createFaithfulnessScorer",
    "toxicity": "createToxicityScorer",
    "answer_relevancy": "createAnswerRelevancyScorer",
    "bias": "createBiasScorer",
    "context_precision": "createContextPrecisionScorer",
    "context_recall": "createContextRecallScorer",
    "context_relevance": "createContextRelevanceScorerLLM",
    "answer_similarity": "createAnswerSimilarityScorer",
    "summarization": "createSummarizationScorer",
    "prompt_alignment": "createPromptAlignmentScorerLLM",
    "multi_turn_judge": "createMultiTurnJudgeScorer",
    "rubric": "createRubricScorer",
    "tool_call_accuracy": "createToolCallAccuracyScorerLLM",
    "trajectory_accuracy": "createTrajectoryAccuracyScorerLLM",
    "noise_sensitivity": "createNoiseSensitivityScorerLLM",
}


@dataclass(frozen=True)
class Differs:
    """A pinned difference: `DIFFERENCES[what]`, with what each side gives on the case."""

    what: str
    mastra: Outcome
    local: Outcome


@dataclass(frozen=True)
class Case:
    """One run scored by both sides on the same judge answers.

    Attributes:
        scorer: localjudge's scorer name (a key of `FACTORIES`).
        name: The case, unique within the scorer (``"mixed"``, ``"empty-output"``).
        run: The run both score (Mastra's shapes; localjudge reads them all).
        answers: localjudge's FakeJudge script, by schema family.
        mastra_answers: Mastra's judge answers to its JSON steps, in order.
        expect: The outcome of both (a score or `REFUSED`), or a `Differs`.
        scale: localjudge's `scale` (Mastra's goes in `mastra_args`).
        options: localjudge's scorer options.
        mastra_args: Mastra's factory arguments besides `model`.
        mastra_run: Mastra's run where its shape differs (a trajectory scorer's output).
        local_calls: How many judge calls localjudge makes, where that is the point (0: the
            run is decided by rule).
    """

    scorer: str
    name: str
    run: Mapping[str, Any]
    answers: Mapping[str, Any]
    mastra_answers: Sequence[Any]
    expect: Outcome | Differs
    scale: float = 1.0
    options: Mapping[str, Any] = field(default_factory=dict)
    mastra_args: Mapping[str, Any] = field(default_factory=dict)
    mastra_run: Mapping[str, Any] | None = None
    local_calls: int | None = None

    @property
    def id(self) -> str:
        return f"{self.scorer}/{self.name}"

    def for_mastra(self) -> dict[str, Any]:
        """The harness's case (tests/differential/node/harness.mjs)."""
        return {"id": self.id, "factory": FACTORIES[self.scorer], "args": dict(self.mastra_args),
                "run": dict(self.mastra_run if self.mastra_run is not None else self.run),
                "answers": list(self.mastra_answers)}


REASON = {"reason": "Scripted reason."}  # the reason step's answer, as the harness answers Mastra's


def scripted_judge(answers: Mapping[str, Any]) -> FakeJudge:
    """localjudge's judge for a case: the case's answers by schema family (a list handed out in
    order, a function of the prompt, or one output) and the reason step's, nothing else. A call
    the case does not script raises `UnscriptedCallError`: no default answer fills it."""
    def entry(answer: Any) -> ScriptEntry:
        return answer if callable(answer) or isinstance(answer, (list, tuple)) else (lambda prompt: answer)

    return FakeJudge({"Reason": entry(REASON), **{name: entry(answer) for name, answer in answers.items()}})


def unasked(judge: FakeJudge, answers: Mapping[str, Any]) -> dict[str, int]:
    """The case's scripted answers the judge was never asked for, by family: how many of a list
    are left, or 1 for a function or single output never called."""
    left = {}
    for name, answer in answers.items():
        asked = sum(call.schema_names.count(name) for call in judge.calls)
        unused = len(answer) - asked if isinstance(answer, (list, tuple)) else int(asked == 0)
        if unused:
            left[name] = unused
    return left


@dataclass(frozen=True)
class LocalOutcome:
    outcome: Outcome
    calls: int
    detail: str  # why it refused, or the result's step results, for a failing test's message
    unasked: Mapping[str, int] = field(default_factory=dict)  # the case's answers never asked for


def run_local(case: Case, compat: str = "localjudge") -> LocalOutcome:
    """localjudge's scorer on the case's run, with the case's answers scripted and nothing else
    (a NaN score is ``"NaN"``, as `mastra_outcome` gives Mastra's).

    Raises:
        AssertionError: localjudge asked its judge for an answer the case does not script.
    """
    judge = scripted_judge(case.answers)
    try:
        scorer = build_scorer(case.scorer, judge, scale=case.scale, options=case.options, compat=compat)
        result = scorer.run(case.run)
    except UnscriptedCallError as error:
        raise AssertionError(f"{case.id} (compat={compat}): localjudge's judge call {len(judge.calls)} asked for "
                             f"an answer the case does not script: {error}") from None
    except (InvalidRunError, ValueError) as error:
        why = f"{type(error).__name__}: {error}"
        return LocalOutcome(REFUSED, len(judge.calls), why, unasked(judge, case.answers))
    if result.score is None:
        why = f"unscored ({result.error_kind}): {result.error}"
        return LocalOutcome(REFUSED, len(judge.calls), why, unasked(judge, case.answers))
    detail = json.dumps({"preprocess": result.preprocess_step_result, "analyze": result.analyze_step_result},
                        default=str)
    return LocalOutcome("NaN" if math.isnan(result.score) else result.score, len(judge.calls), detail,
                        unasked(judge, case.answers))


NON_FINITE = ("NaN", "Infinity", "-Infinity")  # how the harness writes those scores (JSON has none)


def mastra_outcome(result: Mapping[str, Any]) -> Outcome:
    """A harness result as an outcome: its score (``"NaN"``, ``"Infinity"`` for those), or
    `REFUSED` when it threw or was not scorable."""
    if result.get("score") in NON_FINITE:
        return str(result["score"])
    if "error" in result or result.get("notScorable") or result.get("score") is None:
        return REFUSED
    return float(result["score"])


def mastra_refusal(result: Mapping[str, Any]) -> str:
    """Why Mastra refused a case: the error its scorer threw, or its not-scorable reason."""
    if "error" in result:
        return f"{result.get('stage', 'run')}: {result['error']}"
    found = result.get("notScorable")
    return f"not scorable: {found.get('reason', found) if isinstance(found, dict) else found}"


def node_ready() -> bool:
    return NODE.exists() and (NODE_DIR / "node_modules" / "@mastra" / "evals").is_dir()


def run_harness(cases: Sequence[Mapping[str, Any]], timeout: float = 600) -> dict[str, dict[str, Any]]:
    """Every case through Mastra's scorers in one Node process; results by case id."""
    env = {**os.environ, "MASTRA_TELEMETRY_DISABLED": "1", "NODE_ENV": "test"}
    done = subprocess.run([str(NODE), str(HARNESS)], input=json.dumps(list(cases)), capture_output=True, text=True,
                          cwd=NODE_DIR, env=env, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the Mastra harness failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return {r["id"]: r for r in json.loads(done.stdout)}


def unscripted(case: Case, *families: str, mastra: bool = False) -> Case:
    """The case with no answer scripted for localjudge's `families` (for every family when none
    is named), and with `mastra` none for Mastra's judge: that side decides the run by rule, or
    refuses it, before asking its judge (the tier fails an answer left unasked)."""
    kept = {name: answer for name, answer in case.answers.items() if families and name not in families}
    return replace(case, answers=kept, mastra_answers=[] if mastra else case.mastra_answers)
