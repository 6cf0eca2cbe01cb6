"""Worked-example copying: a judge answer that replays the prompt's worked example.

A small model given a worked example (an earlier chat turn: question, answer) often answers a
new question with the example's own claims, verdict reasons or reason. Those answers parse and
would be scored as if they judged the run. `copied_text` finds them: a string of the answer
(5 words or more) that equals, ignoring case, spacing and end punctuation, a string of one of
the step's example answers and that the run's own texts do not contain (a run that really says
"The Eiffel Tower is in Paris." may be judged with that claim).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from localjudge.samples import Sample

MIN_WORDS = 5  # shorter strings (labels, "Insult.", "Criticism of an idea.") are too common to call copies
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def normal(text: str) -> str:
    """Case, runs of spaces and leading or trailing punctuation ignored."""
    return _EDGE.sub("", " ".join(text.casefold().split()))


def copied_text(answer: Any, examples: Sequence[tuple[str, str]], run: Sample) -> str | None:
    """The first string of `answer` copied from an example answer and not from the run; None."""
    if not examples:
        return None
    shown: set[str] = set()
    for _, example_answer in examples:
        try:
            parsed = json.loads(example_answer)
        except json.JSONDecodeError:
            continue
        shown.update(n for s in _strings(parsed) if len((n := normal(s)).split()) >= MIN_WORDS)
    own = normal(" ".join([run.input, run.output, *(run.context or ())]))
    for text in _strings(answer):
        key = normal(text)
        if key in shown and key not in own:
            return text
    return None
