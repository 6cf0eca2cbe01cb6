"""Prompt alignment's schema, prompts and worked example: what each evaluation mode shows the
judge (`Target`, `TARGETS`), the analyze step's system message and user message, the answer's
shape (`AlignmentAnalysis`: three ratings in words and the requirements met) and the worked
example per mode (`localjudge.scorers.judged.prompt_alignment` builds the steps from them and
scores the answer).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field

from localjudge.samples import Sample
from localjudge.scorers.judged.conversation_history import HISTORY_NOTE, history_of
from localjudge.scoring import DATA_NOTE, Strict, UnscorableError, block

MAX_REQUIREMENTS = 8
Rating = Literal["fully", "mostly", "partly", "not"]


class Dimension(Strict):
    """A rated dimension: a word only (the reason step explains; a small judge given reason
    strings here replays the worked example's)."""

    rating: Rating


class Requirement(Strict):
    requirement: Annotated[str, Field(min_length=1, max_length=100)]
    met: Literal["yes", "no"]


class AlignmentAnalysis(Strict):
    intent: Dimension
    requirements: Annotated[list[Requirement], Field(min_length=1, max_length=MAX_REQUIREMENTS)]
    completeness: Dimension
    appropriateness: Dimension


class Target(NamedTuple):
    """What a mode judges the response against, in the prompts' words."""

    what: str  # "the user's request"
    source: str  # where the requirements come from
    asks: str  # the verb after `source`: "asks" or "ask"
    shows: tuple[str, ...]  # the Sample fields shown: "system", "input"


TARGETS: dict[str, Target] = {
    "user": Target("the user's request", "the request", "asks", ("input",)),
    "system": Target("the system prompt's rules", "the system prompt", "asks", ("system",)),
    "both": Target("the user's request and the system prompt's rules", "the request and the system prompt", "ask",
                   ("system", "input")),
}


def analyze_system(target: Target) -> str:
    return f"""You check how well a response follows {target.what}.
Answer these, in order:
- intent: does the response serve the main purpose of {target.source}? A rating.
- requirements: each separate thing {target.source} {target.asks} for (a task, a limit, a format; at most
  {MAX_REQUIREMENTS}), with "yes" if the response meets it, "no" if it does not.
- completeness: does the response cover everything asked, leaving nothing out? A rating.
- appropriateness: do its format and tone fit what was asked (a list, code, formal or casual)? A rating.
A rating is one word: "fully", "mostly", "partly" or "not".
Judge whether the response does what was asked, not whether its facts are true.
{DATA_NOTE}"""


def shown_prompts(run: Sample, target: Target) -> list[str]:
    """The prompt blocks the mode shows: the system prompt and/or the request, where present."""
    blocks = {"system": ("SYSTEM", run.system or ""), "input": ("REQUEST", run.input)}
    return [block(*blocks[name]) for name in target.shows if blocks[name][1].strip()]


def alignment_prompt(run: Sample, target: Target, ask: str, history: int = 0) -> str:
    """The history (where asked for and the run has one), the prompt(s), the response, `ask`."""
    if not run.output.strip():
        raise UnscorableError("prompt alignment needs a response: the output is empty")
    shown = shown_prompts(run, target)
    if not shown:
        raise UnscorableError("prompt alignment needs a user request ('input') or a system prompt ('system')")
    earlier = history_of(run, history)
    if earlier is None:
        return "\n".join([*shown, block("RESPONSE", run.output), ask])
    return "\n".join([block("HISTORY", earlier), *shown, block("RESPONSE", run.output), HISTORY_NOTE, ask])


EXAMPLE_RUN = Sample("example", "List three tips for keeping houseplants alive, as bullet points.",
                     "- Water only when the top soil is dry.\n- Give them bright, indirect light.",
                     system="You are a gardening helper. Keep answers under 60 words and never suggest pesticides.")
# Per mode: (requirement, met). Each of 5 words or more, so an answer replaying the example is
# caught by the copied-example check (the ratings alone are single words).
# Bound to the example's topic (houseplants), so a copy is never a requirement of another prompt.
TIPS, BULLETS = ("Gives three separate houseplant tips", "no"), ("Writes the houseplant tips as bullets", "yes")
SHORT = ("Keeps the houseplant answer under 60 words", "yes")
NO_PESTICIDES = ("Suggests no pesticides for the houseplants", "yes")
EXAMPLE_REQUIREMENTS = {"user": [TIPS, BULLETS], "system": [SHORT, NO_PESTICIDES],
                        "both": [TIPS, BULLETS, SHORT, NO_PESTICIDES]}
EXAMPLE_DIMENSIONS = {  # per mode: the ratings of intent, completeness, appropriateness
    "user": ("fully", "partly", "fully"),
    "system": ("fully", "fully", "fully"),
    "both": ("fully", "partly", "fully"),
}
EXAMPLE_REASONS = {
    "user": "The response gives plant care tips as bullet points, as asked, but only two of the three tips "
            "requested, so it is incomplete.",
    "system": "The response stays within the system prompt's rules: it is short, friendly and suggests no "
              "pesticides.",
    "both": "The response keeps to the system prompt's rules and uses bullet points, but gives two tips where "
            "the request asked for three.",
}


def example_answer(mode: str) -> dict[str, Any]:
    intent, completeness, appropriateness = ({"rating": rating} for rating in EXAMPLE_DIMENSIONS[mode])
    return {"intent": intent, "requirements": [{"requirement": text, "met": met}
                                               for text, met in EXAMPLE_REQUIREMENTS[mode]],
            "completeness": completeness, "appropriateness": appropriateness}
