"""What the judge said, made into data: a validated answer, or a `Failure` saying why not.

Parsing and validation happen here and only here: the step runner (`localjudge.scoring.step_runner`)
turns each raw `Generation` into the schema's plain data with `parse_answer`, a step's
exception into a `Failure` with `failure_of`, and a reason step's result into text with
`reason_text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from localjudge.judge import Generation
from localjudge.repetition import drop_repeats
from localjudge.result import ErrorKind
from localjudge.scoring.steps import UnscorableError


class Failure(NamedTuple):
    """Why an item got no usable answer from a step: kind and message."""

    kind: ErrorKind
    message: str


def parse_answer(output: Generation, schema: type[BaseModel]) -> dict[str, Any] | Failure:
    """The validated answer as plain data (a string's trailing repeats dropped: see
    `localjudge.repetition`), or why not."""
    if output.error is not None:
        return Failure(output.error_kind or "judge_failed", output.error)
    try:
        return drop_repeats(schema.model_validate_json(output.text).model_dump())
    except ValidationError as error:
        cut = "" if output.finished else " (cut off at the token limit)"
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "document"
        return Failure("invalid_output", f"invalid JSON{cut}: {where}: {first.get('msg', 'invalid')}")


def failure_of(error: BaseException) -> Failure:
    """A step's exception as a failure: `UnscorableError` says why in its own words; anything
    else is a bug in user code, named with its type."""
    if isinstance(error, UnscorableError):
        return Failure("unscorable", str(error))
    return Failure("step_error", f"{type(error).__name__}: {error}")


def reason_text(value: Any) -> str:
    """A reason step's result as text: a string, or a mapping's ``"reason"`` string."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("reason"), str):
        return str(value["reason"])
    return f"[no reason: the reason step gave {type(value).__name__}, not text]"

