"""Result keys cannot go stale: a changed prompt or model rescores, an unchanged setup resumes.

Prompts: every kind of edit a maintainer might make to a scorer (instructions, worked example,
rendered user message, schema, reason prompt, the shared reason instructions, how untrusted text
is neutralised, the score formula) changes `Scorer.prompt_hash` and so every result key, with
the readable `version` label left as it was. (Weights: new weights of the same size change the
model's fingerprint, tests/unit/engines/test_model_files.py.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field

from localjudge import FakeJudge, faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.evaluation.dataset_runs import evaluate
from localjudge.evaluation.store import ResultStore
from localjudge.scorers.judged import toxicity, verdicts
from localjudge.scoring import prompting
from localjudge.scoring.scorer import Scorer
from localjudge.scoring.steps import JudgeStep
from tests.fakes import FakeJudgeFactory

ROWS = [{"input": f"q{i}", "output": f"Answer {i}. <<<x>>> {'you idiot' if i % 2 else 'fine'}."} for i in range(4)]
TOXIC = {"verdicts": [{"verdict": "yes", "severity": "high", "reason": "r"}]}


ANSWERS = {"ToxicityVerdicts": TOXIC, "LooserVerdicts": TOXIC}  # with the default reason, "ok"


def judged_rows(fake: FakeJudge) -> int:
    return sum(len(c.prompts) for c in fake.calls if c.schema_names[0] != "Reason")


class LooserVerdicts(toxicity.ToxicityVerdicts):
    """The same shape with a longer list allowed: a schema edit."""

    verdicts: Annotated[list[toxicity.ToxicityVerdict], Field(min_length=1, max_length=12)]  # type: ignore[assignment]


def _step(scorer: Scorer, **change: object) -> Scorer:
    return scorer.analyze(dataclasses.replace(scorer.analyze_step, **change))  # type: ignore[arg-type]


def _example(scorer: Scorer) -> Scorer:
    user, answer = scorer.analyze_step.examples[0]  # type: ignore[union-attr]
    return _step(scorer, examples=((user, answer.replace("Insult.", "An insult.")),))


def _reason(scorer: Scorer) -> Scorer:
    def summary(run: Any, results: Any) -> str:
        return toxicity.summary(1.0)(run, results).replace("Explain the score.", "Explain it.")

    return scorer.generate_reason(verdicts.reason_step(summary, show_context=False))


def _patched(mp: pytest.MonkeyPatch, target: Any, name: str, value: Any) -> Scorer:
    mp.setattr(target, name, value)
    return toxicity_scorer(judge_of[0])


judge_of: list[FakeJudge] = []  # the judge the edited scorer is built on, set per test
EDITS: dict[str, Callable[[Scorer, pytest.MonkeyPatch], Scorer]] = {
    "instructions": lambda s, mp: _step(s, instructions=s.analyze_step.instructions.replace("short", "brief")),  # type: ignore[union-attr]
    "worked-example": lambda s, mp: _example(s),
    "user-message": lambda s, mp: _step(s, prompt=lambda run, results: toxicity.render_analyze(run, results) + "."),
    "schema": lambda s, mp: _step(s, schema=LooserVerdicts),
    "reason-prompt": lambda s, mp: _reason(s),
    "reason-instructions": lambda s, mp: _patched(mp, verdicts, "REASON_SYSTEM", "Explain."),
    "neutralise": lambda s, mp: _patched(mp, prompting, "neutralise", lambda text: text),
    "score-formula": lambda s, mp: s.generate_score(lambda run, results: min(1.0, 2 * toxicity.score(run, results))),
}


def test_an_unchanged_setup_resumes_everything(tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    evaluate(ROWS, [toxicity_scorer(fake_judge(ANSWERS))], store=ResultStore(tmp_path / "log"))
    again = fake_judge(ANSWERS)
    resumed = evaluate(ROWS, [toxicity_scorer(again)], store=ResultStore(tmp_path / "log"))
    assert resumed.summary["toxicity"].resumed == len(ROWS) and again.calls == []


@pytest.mark.parametrize("edit", EDITS)
def test_an_edited_prompt_rescores_without_a_version_bump(edit: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          fake_judge: FakeJudgeFactory) -> None:
    original = toxicity_scorer(fake_judge(ANSWERS))
    evaluate(ROWS, [original], store=ResultStore(tmp_path / "log"))
    fake = fake_judge(ANSWERS)
    judge_of[:] = [fake]
    edited = EDITS[edit](toxicity_scorer(fake), monkeypatch)
    assert edited.version == original.version  # nobody bumped the label
    assert edited.prompt_hash != original.prompt_hash
    result = evaluate(ROWS, [edited], store=ResultStore(tmp_path / "log"))
    assert result.summary["toxicity"].resumed == 0 and judged_rows(fake) == len(ROWS)


def test_prompt_hashes_differ_by_scorer_and_are_stable(fake_judge: FakeJudgeFactory) -> None:
    factories = (hallucination_scorer, faithfulness_scorer, toxicity_scorer)
    hashes = [f(fake_judge(ANSWERS)).prompt_hash for f in factories]
    assert len(set(hashes)) == 3
    assert hashes == [f(FakeJudge({})).prompt_hash for f in factories]


def test_the_hash_covers_a_steps_rule() -> None:
    """A step's `by_rule` (the terse-answer rule) decides results: editing it changes the key."""
    base = hallucination_scorer(FakeJudge({}))
    step = base.preprocess_step
    assert isinstance(step, JudgeStep) and step.by_rule is not None
    def bare(run: Any, results: Any) -> Any:  # the same rule, less the question: differs on terse outputs only
        return {"claims": [run.output], "terse": True} if len(run.output.split()) <= 4 else None

    looser = dataclasses.replace(step, by_rule=bare)
    assert dataclasses.replace(base, preprocess_step=looser).prompt_hash != base.prompt_hash


@pytest.mark.parametrize("factory", [hallucination_scorer, faithfulness_scorer, toxicity_scorer])
def test_the_probe_reaches_every_step(factory: Callable[..., Scorer]) -> None:
    """The hash covers the reason step too: the probe run is scored, not cut short."""
    from localjudge.scoring.versioning import PROBE_RUN, ProbeJudge

    probe = ProbeJudge()
    result = factory(probe).run(PROBE_RUN)
    steps = 3 if factory is not toxicity_scorer else 2
    assert result.scored and result.generate_reason_prompt and len(probe.record) == steps
