"""The one way the tests build a scripted `FakeJudge`: `make_fake_judge`; and `stand_in_engine`,
the one way a test makes the CLI (or a sweep, the pytest plugin, a docs example) load a judge
without importing an engine's heavy libraries.

Test functions get `make_fake_judge` as the `fake_judge` fixture (tests/conftest.py). Code that
no fixture reaches imports it from here: parametrize cases and other module-level values, cached
helpers, and the code tests/unit/test_offline.py and tests/unit/live/ run in a fresh process.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import pytest

from localjudge.engines.model_files import check_model_dir
from localjudge.judge import ChatPrompt, FakeJudge, Judge, Scripted, ScriptEntry

ENGINE_CLASSES = {"transformers": "TransformersJudge", "vllm": "VLLMJudge"}


def stand_in_engine(monkeypatch: pytest.MonkeyPatch, load: Callable[..., Judge], engine: str = "transformers") -> None:
    """Replace the entry module of `engine` (``localjudge.engines.transformers``, `...vllm`) with
    one whose judge class has only ``load = load``: whatever loads a judge by that class
    (`load_judge`, a sweep, the facade's `TransformersJudge`) gets `load`'s judge, and torch,
    transformers and vLLM are never imported. Undone after the test."""
    module = f"localjudge.engines.{engine}"
    backend = types.ModuleType(module)
    setattr(backend, ENGINE_CLASSES[engine], types.SimpleNamespace(load=load))
    monkeypatch.setitem(sys.modules, module, backend)


def cli_judge(monkeypatch: pytest.MonkeyPatch, judge: Judge | None) -> None:
    """Make the CLI's judge `judge` (`localjudge.cli.model_flags.build_judge` replaced), for commands run
    through `main`; None fails the test if the command loads a model at all. Undone after the test."""
    from localjudge.cli import model_flags

    def build(args: Any, device: Any = None) -> Any:
        if judge is None:
            pytest.fail("the model was loaded")
        return judge

    monkeypatch.setattr(model_flags, "build_judge", build)


def path_check_only(model_path: Any, *, allow_pickle: bool = False, **options: Any) -> Judge:
    """A stand-in engine's `load` that does what both engines' `load` does first, before any
    heavy import (`check_model_dir`: a missing path, a hub id, pickles...), and fails the test if
    the path passes: for checks that a bad model path is one clear error. That the real `load`s
    check first is tests/unit/engines/test_model_files.py's (in a fresh process)."""
    check_model_dir(model_path, allow_pickle=allow_pickle)
    pytest.fail(f"{model_path}: the model path was accepted")


def toxicity_statements(prompt: ChatPrompt) -> list[str]:
    """The numbered statements a toxicity (or bias, answer relevancy) analyze prompt shows, in
    order (numbers stripped)."""
    lines = str(prompt[-1]["content"]).split("<<<RESPONSE\n", 1)[1].rsplit("\nRESPONSE>>>", 1)[0].split("\n")
    return [line.split(". ", 1)[1] for line in lines]


def toxicity_verdicts(prompt: ChatPrompt, toxic: Callable[[str], bool]) -> dict[str, object]:
    """One verdict per statement of a toxicity prompt: ``yes``/high where `toxic(statement)`."""
    return {"verdicts": [{"verdict": "yes", "severity": "high", "reason": "r"} if toxic(s)
                         else {"verdict": "no", "severity": "none", "reason": "r"}
                         for s in toxicity_statements(prompt)]}


def lines_in(prompt: ChatPrompt, name: str) -> int:
    """How many lines a prompt's <<<NAME block holds (0 when it has none)."""
    text = str(prompt[-1]["content"])
    if f"<<<{name}\n" not in text:
        return 0
    return len(text.split(f"<<<{name}\n", 1)[1].split(f"\n{name}>>>", 1)[0].split("\n"))


# Hallucination's judge answers in words; results keep Mastra's labels: the result label -> the judge's word.
HALLUCINATION_WORDS = {"yes": "unsupported", "no": "supported"}

# One output handed out on every call, a list (or tuple) handed out in order, or a function of the prompt.
Answer = Scripted | Sequence[Scripted] | Callable[[ChatPrompt], Scripted]

FakeJudgeFactory = Callable[..., FakeJudge]  # make_fake_judge's type, the `fake_judge` fixture's

# What every built-in scorer needs, so that each run is scored: one claim, every verdict "yes"
# (hallucinated, supported: score 1), nothing toxic (score 0), and a short reason.
DEFAULT_ANSWERS: dict[str, Answer] = {
    "Claims": {"claims": ["A claim."]},
    "HallucinationVerdicts": {"verdicts": [{"verdict": "unsupported", "reason": "r"}]},  # Mastra's "yes"
    "FaithfulnessVerdicts": {"verdicts": [{"verdict": "yes", "reason": "r"}]},
    "ToxicityVerdicts": lambda prompt: toxicity_verdicts(prompt, lambda statement: False),  # one per statement
    "BiasVerdicts": lambda prompt: {"verdicts": [{"verdict": "no", "reason": "r"}] * len(toxicity_statements(prompt))},
    "RelevancyVerdicts": lambda prompt: {"verdicts": [{"verdict": "yes", "reason": "r"}] * len(
        toxicity_statements(prompt))},
    "CriterionVerdicts": lambda prompt: {"verdicts": [{"verdict": "yes", "reason": "r"}] * len(
        str(prompt[-1]["content"]).split("<<<CRITERIA\n", 1)[1].split("\nCRITERIA>>>", 1)[0].split("\n"))},
    "PieceVerdicts": lambda prompt: {"verdicts": [{"verdict": "yes", "reason": "r"}] * len(
        str(prompt[-1]["content"]).split("<<<CONTEXT\n", 1)[1].split("\nCONTEXT>>>", 1)[0].split("\n"))},
    "DirectVerdict": {"verdict": "yes", "reason": "r"},
    "RecallVerdicts": lambda prompt: {"verdicts": [{"verdict": "yes", "reason": "r"}] * int(
        str(prompt[-1]["content"]).rsplit("Give exactly ", 1)[1].split(" ", 1)[0])},
    "ContextEvaluations": lambda prompt: {"evaluations": [{"relevance": "high", "used": "yes", "reason": "r"}] * int(
        str(prompt[-1]["content"]).rsplit("Give exactly ", 1)[1].split(" ", 1)[0]), "missing_context": []},
    "AlignmentAnalysis": {"intent": {"rating": "fully"},
                          "requirements": [{"requirement": "A requirement.", "met": "yes"}],
                          "completeness": {"rating": "fully"}, "appropriateness": {"rating": "fully"}},  # score 1
    "ConversationVerdict": {"verdict": "yes", "reason": "r"},
    "ToolCallVerdicts": lambda prompt: {"evaluations": [{"verdict": "yes", "reason": "r"}] * lines_in(prompt, "CALLS"),
                                        "missing_tools": []},
    "TrajectoryVerdicts": lambda prompt: {"step_evaluations": [{"necessary": "yes", "in_order": "yes", "reason": "r"}]
                                          * lines_in(prompt, "STEPS"), "missing_steps": []},
    "ResponseChecks": lambda prompt: {"verdicts": [{"verdict": "agrees", "reason": "r"}] * lines_in(prompt,
                                                                                                   "RESPONSE")},
    "ReferenceMatches": lambda prompt: {"matches": [{"match": "exact", "reason": "r"}] * lines_in(prompt,
                                                                                                 "REFERENCE")},
    "SourceJudgement": lambda prompt: {"questions": ["Does the source say this?"],
                                       "alignment": [{"verdict": "yes", "reason": "r"}] * lines_in(prompt, "SUMMARY")},
    "CoverageAnswers": lambda prompt: {"coverage": [{"verdict": "yes", "reason": "r"}] * lines_in(prompt,
                                                                                                   "QUESTIONS")},
    "NoiseAnalysis": {**{d: {"impact": "none"} for d in ("content_accuracy", "completeness", "relevance",
                                                         "consistency", "hallucination_resistance")},
                      "overall_impact": "none", "major_issues": []},
    "Reason": {"reason": "ok"},
}


def make_fake_judge(answers: Mapping[str, Answer] | None = None, /, *, identity: str = "fake-judge",
                    **more: Answer) -> FakeJudge:
    """A FakeJudge answering each schema family from `answers` and `more`, the rest from `DEFAULT_ANSWERS`.

    Args:
        answers: Schema family name (``"Claims"``, ``"ToxicityVerdicts"``, ``"Reason"``, ...) to
            its answer: a module's own answer table.
        identity: The judge's identity in result keys.
        **more: More answers by family name, over those in `answers`
            (``fake_judge(ToxicityVerdicts=answer)``).

    An answer is a list or tuple of outputs, handed out in order (a call past the end raises
    `UnscriptedCallError`); a function of the chat prompt returning an output; or one output (a
    dict, a pydantic model, a raw string, a `Generation`) given on every call. A family neither
    given nor in `DEFAULT_ANSWERS` is unscripted: a call to it raises `UnscriptedCallError`.
    """
    script = {**DEFAULT_ANSWERS, **(answers or {}), **more}
    return FakeJudge({name: _entry(answer) for name, answer in script.items()}, identity=identity)


def _entry(answer: Answer) -> ScriptEntry:
    if callable(answer) or isinstance(answer, (list, tuple)):
        return cast(ScriptEntry, answer)  # FakeJudge's own entries: a function of the prompt, or a queue
    output = cast(Scripted, answer)
    return lambda prompt: output

