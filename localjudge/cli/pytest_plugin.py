"""The pytest plugin: a `judge` fixture on a local model, and score assertions that say why.

Installed with the package (entry point ``pytest11``: ``localjudge``), so every pytest run in an
environment with localjudge has it. Importing it loads no model and no torch: the backend is
imported by the `judge` fixture, the first time a test asks for it.

- ``judge``: session fixture, loaded once per pytest run, from ``--localjudge-model PATH`` or
  the ``LOCALJUDGE_MODEL`` environment variable (the flag wins), on ``--localjudge-engine``
  (``transformers``, the default, or ``vllm``); or, with ``--localjudge-engine server``, on a
  running inference server at ``--localjudge-base-url URL`` (the model path, optional, is then
  its tokenizer folder). Every engine flag of ``localjudge score`` is an option here too, prefixed
  (``--localjudge-dtype``, ``--localjudge-max-rows``, ``--localjudge-tensor-parallel-size``...):
  both are generated from the one table of engine options (`localjudge.cli.engine_flags`).
  Override it in a ``conftest.py`` (a `FakeJudge`, another model) as any pytest fixture.
- `assert_score`, `assert_scores`, `assert_result`: fail with the score, the bound, the claims,
  each verdict with its reason, the reason and the judge's identity. An unscored run always fails.
- `scored`: many runs in one `run_batch` (one judge call per judge step for all of them).
- `expect_evals(data, scorers, target, gates=...).to_pass(min_pass_rate)` and `expect_eval`:
  `@mastra/evals/vitest`'s pass-rate assertion over `run_evals` (`localjudge.evaluation.pass_rate`).
- ``--localjudge-scorer-module MODULE_OR_FILE`` (repeatable): your own scorer modules, imported
  before the tests, so `build_scorer` knows the names they register; an installed entry point of
  the group ``localjudge.scorers`` needs nothing (see docs/writing-scorers.md).
- ``localjudge_compat``: session fixture, ``--localjudge-compat`` (``localjudge``, the default, or
  ``mastra``): pass it on, ``build_scorer(name, judge, compat=localjudge_compat)``, to run a suite
  on Mastra 1.10.2's numbers (docs/mastra-parity.md).

Nothing else is batched behind your back: only the runs of one `scored` / `assert_scores` call
share judge calls. To batch parametrized cases, score their runs once in a module-scoped fixture.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from localjudge.cli.engine_flags import PLUGIN_WORDS, engine_flags, given_options
from localjudge.engines import ENGINES, EngineOptionError, JudgeSpec, MissingOptionError
from localjudge.engines.server import ServerError
from localjudge.evaluation import EvalAssertion, EvalPassRateError, expect_eval, expect_evals
from localjudge.judge import Judge
from localjudge.result import ScoreResult
from localjudge.scorers import load_scorer_modules
from localjudge.scoring import COMPATS, Scorer

__all__ = ["EvalAssertion", "EvalPassRateError", "assert_result", "assert_score", "assert_scores", "expect_eval",
           "expect_evals", "judge", "localjudge_compat", "scored"]

ENV_MODEL = "LOCALJUDGE_MODEL"

# What an engine cannot load without (`MissingOptionError.option`), in the plugin's options' words.
NEEDS_OPTION = {"model": f"the `judge` fixture needs a local model: give --localjudge-model PATH or set {ENV_MODEL}",
                "base_url": "the `judge` fixture on --localjudge-engine server needs --localjudge-base-url URL"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("localjudge", "localjudge judge model (the `judge` fixture)")
    group.addoption("--localjudge-model", metavar="PATH", default=None,
                    help=f"local model directory or .gguf file for the `judge` fixture (default: ${ENV_MODEL})")
    group.addoption("--localjudge-engine", metavar="ENGINE", default="transformers", choices=ENGINES,
                    help="transformers (the default), vllm or server (a running inference server)")
    for flag in engine_flags(PLUGIN_WORDS, prefix="localjudge-"):  # `localjudge score`'s engine flags, prefixed
        group.addoption(flag.name, **flag.kwargs)
    group.addoption("--localjudge-compat", metavar="COMPAT", default="localjudge", choices=COMPATS,
                    help="the `localjudge_compat` fixture: localjudge (the default) or mastra (Mastra 1.10.2's "
                         "numbers, for scorers built with compat=localjudge_compat)")
    group.addoption("--localjudge-scorer-module", metavar="MODULE_OR_FILE", action="append", default=[],
                    help="import your own scorers before the tests, repeatable: a .py file or a module name whose "
                         "register_scorer calls make them known to build_scorer (runs that code: your choice)")


def pytest_configure(config: pytest.Config) -> None:
    """``--localjudge-scorer-module``: the user's scorer modules, imported before any test runs; one
    that cannot be imported or registers nothing stops the run with one line."""
    try:
        load_scorer_modules(config.getoption("localjudge_scorer_module", default=None) or [])
    except ValueError as error:
        raise pytest.UsageError(f"--localjudge-scorer-module: {error}") from None


def judge_spec_of(config: pytest.Config) -> JudgeSpec:
    """The judge the options name, not yet checked: the model from ``--localjudge-model`` or
    ``$LOCALJUDGE_MODEL`` (a relative path read from the directory pytest was started in), the
    engine and every engine option given."""
    path = config.getoption("localjudge_model") or os.environ.get(ENV_MODEL)
    return JudgeSpec(config.invocation_params.dir / Path(path) if path else None, config.getoption("localjudge_engine"),
                     given_options(lambda option: config.getoption(f"localjudge_{option}")))


@pytest.fixture(scope="session")
def judge(pytestconfig: pytest.Config) -> Judge:
    """The judge model, loaded once per pytest run from ``--localjudge-model`` or ``$LOCALJUDGE_MODEL``
    (a relative path is read from the directory pytest was started in)."""
    spec = judge_spec_of(pytestconfig)
    engine = spec.engine
    try:
        spec.checked()
    except EngineOptionError as error:
        pytest.fail(f"--localjudge-{error.option.replace('_', '-')} is not an option of --localjudge-engine "
                    f"{engine}: {error}", pytrace=False)
    except MissingOptionError as error:
        pytest.fail(NEEDS_OPTION.get(error.option, f"the `judge` fixture on --localjudge-engine {engine} needs "
                                                   f"--localjudge-{error.option.replace('_', '-')}"), pytrace=False)
    except ValueError as error:  # a model path and a --localjudge-tokenizer that differ
        pytest.fail(f"the `judge` fixture: {error}", pytrace=False)
    try:
        return spec.load()  # heavy: loads here
    except ServerError as error:
        pytest.fail(f"the `judge` fixture's server: {error}", pytrace=False)


@pytest.fixture(scope="session")
def localjudge_compat(pytestconfig: pytest.Config) -> str:
    """``--localjudge-compat``: ``"localjudge"`` (the default) or ``"mastra"``, for
    ``build_scorer(..., compat=localjudge_compat)``."""
    return str(pytestconfig.getoption("localjudge_compat"))


def scored(scorer: Scorer, runs: Sequence[Mapping[str, Any]]) -> list[ScoreResult]:
    """Score every run in one `run_batch` (one judge call per judge step for all of them); a run
    that cannot be judged comes back unscored (`error_kind` ``"invalid_run"``) instead of raising."""
    return scorer.run_batch(list(runs), on_invalid="record")


def assert_result(scorer: Scorer, result: ScoreResult, *, below: float | None = None,
                  above: float | None = None) -> ScoreResult:
    """Fail unless `result` (from `scorer`) is scored, with ``above < score < below`` (each bound
    optional, on the scaled score). Returns the result."""
    __tracebackhide__ = True
    _check_bounds(below, above)
    problem = _problem(scorer, result, below, above)
    if problem:
        raise AssertionError(f"{problem}\n{_describe(scorer, result)}")
    return result


def assert_score(scorer: Scorer, run: Mapping[str, Any], *, below: float | None = None,
                 above: float | None = None) -> ScoreResult:
    """Score one run and fail unless it is scored with ``above < score < below``. Returns the result."""
    __tracebackhide__ = True
    _check_bounds(below, above)
    return assert_result(scorer, scored(scorer, [run])[0], below=below, above=above)


def assert_scores(scorer: Scorer, runs: Sequence[Mapping[str, Any]], *, below: float | None = None,
                  above: float | None = None) -> list[ScoreResult]:
    """Score all runs in one batch and fail unless every one is scored with ``above < score < below``;
    the message describes each run that is not. Returns the results, in order."""
    __tracebackhide__ = True
    _check_bounds(below, above)
    results = scored(scorer, runs)
    failed = [(i, p, r) for i, r in enumerate(results) if (p := _problem(scorer, r, below, above))]
    if failed:
        parts = [f"run {i}: {p}\n{_describe(scorer, r)}" for i, p, r in failed]
        raise AssertionError(f"{len(failed)} of {len(results)} runs failed\n" + "\n".join(parts))
    return results


def _describe(scorer: Scorer, result: ScoreResult) -> str:
    """What a failed assertion shows: scorer, judge, run id, each step's output and the reason."""
    judges = [scorer.judge] + [getattr(s, "judge", None)
                               for s in (scorer.preprocess_step, scorer.analyze_step, scorer.reason_step)]
    identities = sorted({j.identity for j in judges if j is not None}) or ["(none)"]
    compat = "; compat=mastra" if scorer.compat.mastra else ""
    bounds = "as returned" if scorer.score_returns == "score" else f"0 to {scorer.scale:g}"
    lines = [f"  scorer: {scorer.name} ({bounds}; high = {scorer.positive}{compat})",
             f"  judge: {' + '.join(identities)}",
             f"  run: {result.run_id}"]
    lines += _step_lines("claims", "preprocess", result.preprocess_step_result, str)
    lines += _step_lines("verdicts", "analyze", result.analyze_step_result, _verdict)
    if result.reason is not None:
        lines.append(f"  reason: {result.reason}")
    if result.raw_output is not None:
        lines.append(f"  raw output: {result.raw_output}")
    return "\n".join(lines)


def _check_bounds(below: float | None, above: float | None) -> None:
    if below is not None and above is not None and above >= below:
        raise ValueError(f"no score is above {above} and below {below}")


def _problem(scorer: Scorer, result: ScoreResult, below: float | None, above: float | None) -> str | None:
    """Why the result fails, or None."""
    if result.score is None:
        return f"{scorer.name}: unscored: {result.error_kind}: {result.error}"
    if below is not None and not result.score < below:
        return f"{scorer.name} score {result.score:g} is not below {below:g}"
    if above is not None and not result.score > above:
        return f"{scorer.name} score {result.score:g} is not above {above:g}"
    return None


def _step_lines(key: str, step: str, output: Any, show: Callable[[Any], str]) -> list[str]:
    """A step's list (the claims, the verdicts) one item a line; any other output as JSON."""
    if output is None:
        return []
    if isinstance(output, Mapping) and isinstance(output.get(key), list):
        items = output[key]
        return [f"  {key}:" + ("" if items else " (none)")] + [f"    {n}. {show(x)}" for n, x in enumerate(items, 1)]
    return [f"  {step}: {json.dumps(output, default=repr)}"]


def _verdict(verdict: Any) -> str:
    """``yes [high]: <statement> (<reason>)``, any other fields after it as JSON."""
    if not isinstance(verdict, Mapping):
        return json.dumps(verdict, default=repr)
    known = ("verdict", "severity", "statement", "claim", "reason")
    text = str(verdict.get("verdict"))
    if verdict.get("severity") not in (None, "none"):
        text += f" [{verdict['severity']}]"
    if (subject := verdict.get("statement", verdict.get("claim"))) is not None:
        text += f": {subject}"
    if verdict.get("reason") is not None:
        text += f" ({verdict['reason']})"
    rest = {k: v for k, v in verdict.items() if k not in known}
    return text + (f" {json.dumps(rest, default=repr)}" if rest else "")
