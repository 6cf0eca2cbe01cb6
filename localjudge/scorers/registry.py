"""The registry: every scorer by name, for the CLI, `bench` and sweeps, and the one way to build one.

`SCORERS` names each factory: the judged scorers (`localjudge.scorers.judged`) and Mastra's code
scorers and checks (`CODE_SCORERS`, `localjudge.scorers.coded`: no judge step, so `build_scorer`
takes ``judge=None`` for them and `needs_judge` tells a caller, the CLI, that it need load no
model). A scorer from outside the package is one `register_scorer` call, in a module the CLI
imports by `--scorer-module` (`load_scorer_modules`), or an installed entry point of the group
``localjudge.scorers`` (`localjudge.scorers.discovery`). Everything else (CLI flags, benchmarks,
baselines, reports) reads the scorer's own facts (`positive`, `higher_is_better`,
`shown_fields`, `needs_context`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from localjudge.judge import Judge
from localjudge.scorers.coded import (
    CHECKS,
    code_tool_call_accuracy_scorer,
    code_trajectory_accuracy_scorer,
    code_trajectory_scorer,
    completeness_scorer,
    content_similarity_scorer,
    keyword_coverage_scorer,
    textual_difference_scorer,
    tone_scorer,
)
from localjudge.scorers.discovery import (
    entry_point_factory,
    entry_point_names,
    factory_origin,
    import_scorer_module,
    is_builtin,
    is_path,
)
from localjudge.scorers.judged import (
    ENSEMBLE,
    MODES,
    EnsembleScorer,
    answer_relevancy_scorer,
    answer_similarity_scorer,
    bias_scorer,
    check_mode,
    context_precision_scorer,
    context_recall_scorer,
    context_relevance_scorer,
    ensemble_scorer,
    faithfulness_scorer,
    hallucination_scorer,
    multi_turn_judge_scorer,
    noise_sensitivity_scorer,
    prompt_alignment_scorer,
    rubric_scorer,
    summarization_scorer,
    tool_call_accuracy_scorer,
    toxicity_scorer,
    trajectory_accuracy_scorer,
)
from localjudge.scoring import CompatName, JudgeStep, Scorer, check_compat

# Mastra's code scorers and checks: no model (see `localjudge.scorers.coded`).
CODE_SCORERS: dict[str, Callable[..., Scorer]] = {
    "completeness": completeness_scorer,
    "content_similarity": content_similarity_scorer,
    "keyword_coverage": keyword_coverage_scorer,
    "textual_difference": textual_difference_scorer,
    "tone": tone_scorer,
    "code_tool_call_accuracy": code_tool_call_accuracy_scorer,  # needs expected_tool or expected_tool_order
    "code_trajectory_accuracy": code_trajectory_accuracy_scorer,
    "code_trajectory": code_trajectory_scorer,
    **CHECKS,  # most need an option: check_includes.expected, ...
}

SCORERS: dict[str, Callable[..., Scorer]] = {
    "hallucination": hallucination_scorer,
    "faithfulness": faithfulness_scorer,
    "toxicity": toxicity_scorer,
    "answer_relevancy": answer_relevancy_scorer,
    "bias": bias_scorer,
    "context_precision": context_precision_scorer,
    "rubric": rubric_scorer,  # needs the option `criteria`
    "context_recall": context_recall_scorer,
    "context_relevance": context_relevance_scorer,
    "answer_similarity": answer_similarity_scorer,
    "summarization": summarization_scorer,
    "prompt_alignment": prompt_alignment_scorer,
    "multi_turn_judge": multi_turn_judge_scorer,  # needs the option `criterion`
    "tool_call_accuracy": tool_call_accuracy_scorer,
    "trajectory_accuracy": trajectory_accuracy_scorer,
    "noise_sensitivity": noise_sensitivity_scorer,
    **CODE_SCORERS,
}


def register_scorer(name: str, factory: Callable[..., Scorer]) -> None:
    """Make a scorer factory (``factory(judge, scale=...) -> Scorer``) known by `name` to the CLI,
    `bench` and sweeps; a name already taken is an error."""
    if name in SCORERS:
        raise ValueError(f"a scorer named {name!r} is already registered")
    SCORERS[name] = factory


def get_scorer_factory(name: str) -> Callable[..., Scorer]:
    """The factory registered under `name`, else the installed entry point of that name (group
    ``localjudge.scorers``, loaded and registered now); a clear error for unknown names."""
    if name in SCORERS:
        return SCORERS[name]
    factory = entry_point_factory(name)
    if factory is None:
        known = ", ".join(sorted({*SCORERS, *entry_point_names()}))
        raise ValueError(f"unknown scorer {name!r}; known scorers: {known} (your own: the CLI's --scorer-module "
                         "FILE.py imports the module that registers it; docs/writing-scorers.md)")
    SCORERS[name] = factory
    return factory


def load_scorer_modules(specs: Sequence[str]) -> tuple[str, ...]:
    """Import each scorer module of `specs` (a dotted module name or a ``.py`` path: the user's own
    code, run by the user's choice) so the scorers it registers with `register_scorer` are known.
    One that cannot be imported, or registers nothing, is a one-line `ValueError`.

    Returns:
        The specs as another process (a Ray actor) imports them again: a file by its absolute
        path, a module by its name.
    """
    for spec in specs:
        import_scorer_module(spec, SCORERS)
    return tuple(str(Path(spec).expanduser().resolve()) if is_path(spec) else spec for spec in specs)


# Every mode `build_scorer` takes: a factory's own (`MODES`), and both of them together.
SCORER_MODES: tuple[str, ...] = (*MODES, ENSEMBLE)

# Parameters every factory shares: passed by `build_scorer` itself, never as options.
SHARED_PARAMETERS = ("scale", "mode", "compat")


def scorer_options(name: str) -> dict[str, inspect.Parameter]:
    """The options of the scorer registered as `name`: its factory's keyword parameters beyond
    the judge (the first parameter), `scale`, `mode` and `compat`, by name. One without a default
    (``criteria`` of ``rubric``) is required. A factory taking ``**kwargs`` lists only the
    parameters it names."""
    parameters = list(inspect.signature(get_scorer_factory(name)).parameters.values())[1:]
    return {p.name: p for p in parameters if p.name not in SHARED_PARAMETERS
            and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}


def check_options(name: str, options: Mapping[str, Any]) -> None:
    """Raise a clear `ValueError` unless `options` are keywords the factory of `name` takes and
    hold every option it requires (the values are the factory's to check)."""
    known = scorer_options(name)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD
                    for p in inspect.signature(get_scorer_factory(name)).parameters.values())
    listed = ", ".join(known) if known else "none"
    for key in options:
        if key in SHARED_PARAMETERS:
            raise ValueError(f"scorer {name!r}: {key!r} is not an option: give it as {key}= (CLI: --{key})")
        if key not in known and not takes_any:
            raise ValueError(f"scorer {name!r} has no option {key!r}; its options: {listed}")
    for key, parameter in known.items():
        if parameter.default is inspect.Parameter.empty and key not in options:
            raise ValueError(f"scorer {name!r} needs option {key!r}: give options={{{key!r}: ...}} "
                             f"(CLI: --scorer-option {name}.{key}=VALUE)")


def uses_judge(scorer: Scorer) -> bool:
    """Whether `scorer` has a step the judge answers (a code scorer has none, and runs without one)."""
    return any(isinstance(step, JudgeStep) for step in (scorer.preprocess_step, scorer.analyze_step,
                                                         scorer.reason_step))


def needs_judge(name: str, *, mode: str = "pipeline", options: Mapping[str, Any] | None = None) -> bool:
    """Whether the scorer registered as `name` (in `mode`, with `options`) asks a judge anything:
    False for Mastra's code scorers and checks, so a run of only those loads no model. Building
    it to find out raises the errors `build_scorer` raises."""
    return uses_judge(build_scorer(name, None, mode=mode, options=options))


def build_scorer(name: str, judge: Judge | None, *, scale: float = 1.0, mode: str = "pipeline",
                 options: Mapping[str, Any] | None = None, compat: str = "localjudge") -> Scorer:
    """The scorer registered as `name`, on `judge`.

    Args:
        name: A registered scorer's name.
        judge: The judge it runs on (None: a scorer that needs none, a code scorer; a judge
            scorer built without one refuses to run).
        scale: Scores lie in [0, scale].
        mode: ``"pipeline"``, ``"direct"`` (see `localjudge.scorers.judged.direct`) or ``"ensemble"``
            (both, their probabilities averaged: `localjudge.scorers.judged.ensemble`; refused under
            ``compat="mastra"``); passed only when it is not the default, so a registered
            factory without a `mode` parameter still builds; asked for a direct mode it has not,
            it is a clear error.
        options: More keywords for the factory (``{"criteria": [...]}`` for ``rubric``; see
            `scorer_options`). An option it does not take, or a required one missing, is a
            clear `ValueError` naming its options, as is a value of the wrong type.
        compat: ``"localjudge"`` (the default) or ``"mastra"``: the scores Mastra 1.10.2's code
            gives where localjudge deliberately differs (docs/mastra-parity.md). Passed to the
            factory, which declares its Mastra numbers to `create_scorer`: the scorer is the one
            the factory called with ``compat=`` gives. A registered factory without a `compat`
            parameter has no Mastra numbers, and ``"mastra"`` is refused for it. Part of the key.
    """
    factory = get_scorer_factory(name)
    options = dict(options or {})
    check_options(name, options)
    return _build(name, factory, judge, scale, mode, options, check_compat(compat))


def _build(name: str, factory: Callable[..., Scorer], judge: Judge | None, scale: float, mode: str,
           options: dict[str, Any], compat: CompatName) -> Scorer:
    if mode not in SCORER_MODES:
        raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(SCORER_MODES)}")
    if mode == ENSEMBLE:
        if compat == "mastra":
            raise ValueError(f"scorer {name!r}: mode 'ensemble' is localjudge's own (Mastra has no such mode), so "
                             "not under compat='mastra': give mode 'pipeline' or 'direct'")
        if "mode" not in inspect.signature(factory).parameters:
            raise ValueError(f"scorer {name!r} has no mode parameter, so no direct mode to make an ensemble with")
        return ensemble_scorer(_build(name, factory, judge, scale, "pipeline", options, compat),
                               _build(name, factory, judge, scale, "direct", options, compat))
    keywords: dict[str, Any] = {"scale": scale, **options}
    parameters = inspect.signature(factory).parameters
    if check_mode(mode) != "pipeline":
        if "mode" not in parameters:
            raise ValueError(f"scorer {name!r} has no mode parameter, so no direct mode")
        keywords["mode"] = mode
    if compat != "localjudge":  # the default needs no keyword: a user's factory may not take one
        if "compat" not in parameters:
            raise ValueError(f"scorer {name!r} has no compat parameter, so no Mastra numbers: give its factory "
                             "compat= and pass it to create_scorer (docs/writing-scorers.md)")
        keywords["compat"] = compat
    if not is_builtin(factory):
        return _build_users(name, factory, judge, keywords)
    if not options:
        return factory(judge, **keywords)
    try:
        return factory(judge, **keywords)
    except TypeError as error:  # an option's value of the wrong type (criteria="one string")
        raise ValueError(f"scorer {name!r}: {error}") from error
    except (AttributeError, KeyError, IndexError) as error:  # one the factory did not check: still one line
        raise ValueError(f"scorer {name!r}: an option's value does not fit ({type(error).__name__}: {error})") \
            from error


def _build_users(name: str, factory: Callable[..., Scorer], judge: Judge | None, keywords: dict[str, Any]) -> Scorer:
    """Call a factory of the user's own (a scorer module's, an entry point's): whatever it raises,
    or a value that is not a scorer, is one `ValueError` naming the module, the factory and the error."""
    where = f"scorer {name!r}: its factory {factory_origin(factory)}"
    try:
        scorer = factory(judge, **keywords)
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: any failure (sys.exit too) is one line
        line = f"{type(error).__name__}: {error}".splitlines()[0]
        raise ValueError(f"{where} raised {line}") from error
    if not isinstance(scorer, (Scorer, EnsembleScorer)):
        raise ValueError(f"{where} returned {type(scorer).__name__}, not a scorer (create_scorer(...) built "
                         "with its steps; docs/writing-scorers.md)")
    return scorer


__all__ = ["CODE_SCORERS", "SCORERS", "SCORER_MODES", "SHARED_PARAMETERS", "build_scorer", "check_options",
           "get_scorer_factory", "load_scorer_modules", "needs_judge", "register_scorer", "scorer_options",
           "uses_judge"]
