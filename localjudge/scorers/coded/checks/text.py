"""What the output-text checks share: the output read as Mastra's checks read it, the expected
text's case folded the same way, and one builder for a pass/fail check on the two.

By default a check reads the answer judged (the last assistant message with text), as every
scorer does; under ``compat="mastra"`` it reads Mastra's text: every assistant message joined
(with a space for `includes`, `excludes` and `similarity`, with nothing for `equals` and
`matches`: `localjudge.samples.mastra_reading`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from localjudge.samples import ASSISTANT_SPACED, Joined, Sample
from localjudge.scorers.coded.code_scorer import CodeScorer, code_scorer, passed
from localjudge.scoring import Build, Results


def text_option(name: str, value: Any, ignore_case: Any) -> None:
    """Refuse a non-text expected value or a non-boolean `ignore_case`."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be text, got {value!r}")
    if not isinstance(ignore_case, bool):
        raise TypeError(f"ignore_case must be true or false, got {ignore_case!r}")


def output_and_target(run: Sample, expected: str, ignore_case: bool) -> tuple[str, str]:
    """The output (the answer judged) and the expected text, both lower-cased under `ignore_case`."""
    return (run.output.lower(), expected.lower()) if ignore_case else (run.output, expected)


def text_check(name: str, build: Build, *, expected: str, ignore_case: bool, test: Callable[[str, str], bool],
               said: tuple[str, str],
               positive: str, settings: Mapping[str, Any] | None = None,
               joined: Joined = ASSISTANT_SPACED) -> CodeScorer:
    """A check scoring 1 when ``test(output, target)`` holds, else 0. `said`: what the output does
    when it passes and when not (``("includes", "does not include")``), for the reason; `joined`:
    how Mastra's check joins the assistant messages (read under ``compat="mastra"``)."""
    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        output, target = output_and_target(run, expected, ignore_case)
        return {"output": output, "target": target, "passed": test(output, target)}

    def reason(run: Sample, results: Results) -> str:
        ok = results["preprocess_step_result"]["passed"]
        return f"Passed: the output {said[0]} {expected!r}." if ok else f"Failed: the output {said[1]} {expected!r}."

    return code_scorer(name, build, id=name.replace("_", "-"), preprocess=preprocess, score=passed, reason=reason,
                       positive=positive, description=f"Whether the output {said[0]} {expected!r}",
                       mastra_reading={"output": joined},
                       settings={"expected": expected, "ignore_case": ignore_case, **(settings or {})})


__all__ = ["output_and_target", "text_check", "text_option"]
