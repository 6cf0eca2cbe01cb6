"""The scorer registry (`localjudge.scorers`): what every registered scorer promises, checked once
over the registry, and how `build_scorer` passes options and modes.

The contract, for every built-in scorer in each of its modes (`tests.scorer_options.SCORER_MODES`,
options from `OPTIONS`): it builds on a fake judge; states its facts (a Mastra-style `id`, a
`positive` meaning, a direction, the same in both modes, while the two modes never share a
prompt hash or a result key; the run fields it requires are among those it shows, so result
keys hash them); refuses a bad scale and an unknown mode when built; scores a run carrying every
field on the default fake judge within [0, scale] with a reason; records a run it cannot read as
unscored (`invalid_run`) without a judge call, beside a run it scores; and gives `evaluate` the
same six result columns. A model-free scorer (Mastra's code scorers and checks) keeps the same
contract without a judge: it never calls one, builds on none, and its key names none. Each
scorer's formula and edge cases stay in its own file.
"""

from __future__ import annotations

import inspect
import json
import math
from typing import Any

import pytest

from localjudge import FakeJudge, create_scorer, evaluate
from localjudge.result import ERROR_KINDS, ScoreResult
from localjudge.scorers import SCORERS, build_scorer, needs_judge, register_scorer, scorer_options
from localjudge.scoring.scorer import REQUIRED_HINTS
from tests.conftest import EXAMPLES
from tests.fakes import FakeJudgeFactory
from tests.scorer_options import BUILT_IN, MODEL_FREE, OPTIONS, SCORER_MODES

# A run carrying every field a scorer may read (conversation, tool calls, ground truth, ...).
FULL_RUN = next(json.loads(line) for line in (EXAMPLES / "agent_runs.jsonl").open() if '"conversation"' in line)
UNREADABLE = {**FULL_RUN, "run_id": "unreadable", "output": 42}  # no scorer can read a number as an output
BAD_SCALES = [0, -1, math.nan, math.inf, "1", True, None]
RESULT_COLUMNS = ("score", "prob_score", "reason", "error", "error_kind", "steps")
RUN_FIELDS = set(REQUIRED_HINTS) | {"output", "context", "expectation"}  # expectation: a code scorer's
WITH_DIRECT = [name for name, mode in SCORER_MODES if mode == "direct"]


def build(name: str, judge: Any, mode: str = "pipeline", scale: float = 1.0) -> Any:
    return build_scorer(name, judge, mode=mode, scale=scale, options=OPTIONS.get(name))


def ids(case: tuple[str, str]) -> str:
    return "-".join(case)


# --- the contract ---------------------------------------------------------------------------------

def test_the_contract_covers_every_built_in_scorer() -> None:
    assert sorted(BUILT_IN) == sorted(SCORERS)
    assert {name for name, _ in SCORER_MODES} == set(BUILT_IN)


@pytest.mark.parametrize(("name", "mode"), SCORER_MODES, ids=ids)
def test_every_scorer_builds_on_a_fake_judge_with_its_test_options(name: str, mode: str,
                                                                    fake_judge: FakeJudgeFactory) -> None:
    """tests/scorer_options.py gives every required option, so loops over SCORERS build them all."""
    required = [k for k, p in scorer_options(name).items() if p.default is inspect.Parameter.empty]
    assert set(required) <= set(OPTIONS.get(name, {})), f"{name} needs {required}: add them to OPTIONS"
    scorer = build(name, fake_judge(), mode)
    assert scorer.name == name and (scorer.judge is None) == (name in MODEL_FREE)
    assert needs_judge(name, mode=mode, options=OPTIONS.get(name)) == (name not in MODEL_FREE)
    if name in MODEL_FREE:  # and it builds, and scores, with no judge at all
        assert build(name, None, mode).run(FULL_RUN).scored


@pytest.mark.parametrize(("name", "mode"), SCORER_MODES, ids=ids)
def test_every_scorer_states_its_facts(name: str, mode: str, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorer, pipeline = build(name, judge, mode), build(name, judge)
    dashed = name.replace("_", "-")
    assert scorer.id.endswith(f"{dashed}-scorer") or (name.startswith("check_") and scorer.id == dashed), \
        "Mastra's id (some carry its llm- prefix; its checks are check-...)"
    assert isinstance(scorer.description, str)
    assert scorer.positive and scorer.positive != "positive", "what a high score means, in words"
    assert isinstance(scorer.higher_is_better, bool), "a built-in scorer has a direction"
    assert (scorer.positive, scorer.higher_is_better) == (pipeline.positive, pipeline.higher_is_better)
    assert set(scorer.requires) | ({"context"} if scorer.needs_context else set()) <= scorer.shown_fields <= RUN_FIELDS
    if mode != "pipeline":  # never resumed as each other
        assert scorer.prompt_hash != pipeline.prompt_hash and scorer.key != pipeline.key


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_scorer_refuses_a_bad_scale(name: str) -> None:
    for scale in BAD_SCALES:
        with pytest.raises(ValueError, match="scale"):
            build(name, FakeJudge({}), scale=scale)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", WITH_DIRECT)
def test_every_scorer_refuses_an_unknown_mode(name: str, fake_judge: FakeJudgeFactory) -> None:
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        SCORERS[name](fake_judge(), mode="fast", **OPTIONS.get(name, {}))


@pytest.mark.parametrize(("name", "mode"), SCORER_MODES, ids=ids)
def test_every_scorer_scores_a_run_with_every_field_and_records_an_unreadable_one(
        name: str, mode: str, fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    scorer = build(name, judge, mode, scale=10.0)
    full, unreadable = scorer.run_batch([FULL_RUN, UNREADABLE], on_invalid="record")
    assert full.scored and 0.0 <= full.score <= 10.0 and full.reason, full  # type: ignore[operator]
    assert (full.run_id, full.scorer) == (FULL_RUN["run_id"], name)
    assert (unreadable.score, unreadable.error_kind) == (None, "invalid_run") and unreadable.error_kind in ERROR_KINDS
    assert "output must be a string" in (unreadable.error or "")
    if name in MODEL_FREE:
        assert not judge.calls, "a model-free scorer calls no judge"
    else:
        assert judge.calls and all(len(call.prompts) == 1 for call in judge.calls), "the judge saw the readable run"
    assert set(full.to_dict()) == set(inspect.signature(ScoreResult).parameters)
    named = "" if name in MODEL_FREE else judge.identity
    assert scorer.key == f"{name}/{scorer.version}@{scorer.prompt_hash}/scale=10/{named}"


@pytest.mark.parametrize(("name", "mode"), SCORER_MODES, ids=ids)
def test_every_scorer_gives_evaluate_the_same_result_columns(name: str, mode: str,
                                                             fake_judge: FakeJudgeFactory) -> None:
    ev = evaluate([FULL_RUN], [build(name, fake_judge(), mode)])
    assert [c for c in ev.dataset.column_names if c not in FULL_RUN] == [f"{name}_{c}" for c in RESULT_COLUMNS]
    assert ev.summary[name].scored == 1


# --- build_scorer: options and modes -----------------------------------------------------------------

@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A copy of the registry, undone after the test, with a factory that records its keywords."""
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(SCORERS))
    seen: dict[str, Any] = {}

    def recording(judge: Any, *, size: int, label: str = "x", scale: float = 1.0) -> Any:
        seen.update(size=size, label=label, scale=scale)
        if not isinstance(size, int):
            raise TypeError(f"size must be an int, got {size!r}")
        return create_scorer("recording", judge=judge, scale=scale).generate_score(lambda run, results: 1.0)

    def anything(judge: Any, scale: float = 1.0, **more: Any) -> Any:
        seen.update(more)
        return create_scorer("anything", judge=judge, scale=scale).generate_score(lambda run, results: 1.0)

    register_scorer("recording", recording)
    register_scorer("anything", anything)
    return seen


def test_options_reach_the_factory_as_keywords(registry: dict[str, Any]) -> None:
    build_scorer("recording", FakeJudge({}), scale=10, options={"size": 3, "label": "y"})
    assert registry == {"size": 3, "label": "y", "scale": 10}
    build_scorer("anything", FakeJudge({}), options={"whatever": [1]})  # **kwargs: any key
    assert registry["whatever"] == [1]


def test_scorer_options_lists_a_factorys_keywords(registry: dict[str, Any]) -> None:
    options = scorer_options("recording")
    assert list(options) == ["size", "label"]  # not the judge, scale or mode
    assert options["size"].default is inspect.Parameter.empty and options["label"].default == "x"
    assert list(scorer_options("rubric")) == ["criteria"]
    assert scorer_options("toxicity") == {}


@pytest.mark.parametrize(("name", "options", "message"), [
    ("recording", {"label": "y"}, "scorer 'recording' needs option 'size': give options={'size': ...} "
                                  "(CLI: --scorer-option recording.size=VALUE)"),
    ("recording", {"size": 1, "colour": "red"}, "scorer 'recording' has no option 'colour'; its options: size, label"),
    ("toxicity", {"colour": "red"}, "scorer 'toxicity' has no option 'colour'; its options: none"),
    ("recording", {"size": 1, "scale": 2}, "'scale' is not an option: give it as scale= (CLI: --scale)"),
    ("recording", {"size": "three"}, "raised TypeError: size must be an int"),  # the factory's TypeError
    ("rubric", {}, "scorer 'rubric' needs option 'criteria'"),
    ("rubric", {"criteria": 7}, "scorer 'rubric': criteria must be a list"),
    ("nope", {}, "unknown scorer 'nope'"),
])
def test_option_mistakes_are_clear_value_errors(registry: dict[str, Any], name: str, options: dict[str, Any],
                                                message: str) -> None:
    with pytest.raises(ValueError) as raised:
        build_scorer(name, FakeJudge({}), options=options)
    assert message in str(raised.value)


def test_build_scorer_passes_the_mode_only_when_asked(registry: dict[str, Any], fake_judge: FakeJudgeFactory) -> None:
    judge = fake_judge()
    assert build_scorer("hallucination", judge, mode="direct").version == "hallucination-direct-v1"
    assert build_scorer("hallucination", judge).version == SCORERS["hallucination"](judge).version
    register_scorer("nomode", lambda judge, scale=1.0: create_scorer("nomode", judge=judge, scale=scale)
                    .generate_score(lambda run, results: 0.0))
    assert build_scorer("nomode", judge).name == "nomode"  # a factory without `mode` still builds
    with pytest.raises(ValueError, match="no direct mode"):
        build_scorer("nomode", judge, mode="direct")
