"""Multi-turn judge: does a whole conversation satisfy a plain-English criterion you write? Pass or fail.

Inputs: the conversation, `Sample.turns`: the run's `conversation` (chat messages), else the
user and assistant messages of its input and output, else its input and output strings as one
user turn and one assistant turn. Option: `criterion` (required, no default).
Steps: one analyze step: the judge sees the criterion and every turn, numbered, the user's as
well as the assistant's (Mastra shows the assistant's only), and answers ``{"verdict": "yes" |
"no", "reason"}``, verdict first: ``yes`` = the conversation as a whole satisfies the criterion.
Score, as Mastra's: `scale` if satisfied, else 0. Higher is better.
The reason is formatted without a judge call, as Mastra's: satisfied or not, the criterion, the
judge's reason. `prob_score`: the probability of ``yes`` (x scale).
Edge cases: no assistant turn with text: 0, with no judge call (Mastra asks its judge about
"(no assistant messages)"; what the assistant never said cannot satisfy a criterion). A
conversation of more than `max_turns` turns or `max_chars` characters is unscored
(``unscorable``), never cut: the criterion may rest on any turn.
No direct mode: the analyze step already is one yes/no question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from localjudge.judge import Judge
from localjudge.samples import Sample, Turn
from localjudge.scorers.judged.verdicts import mean_label_prob
from localjudge.scoring import (
    DATA_NOTE,
    Build,
    JudgeStep,
    MastraNumbers,
    ReasonText,
    Results,
    Scorer,
    Shortcut,
    Strict,
    UnscorableError,
    block,
    create_scorer,
)

VERSION = "multi-turn-judge-v1"
MAX_TURNS = 40  # turns shown to the judge, at most (by default)
MAX_CHARS = 16_000  # characters of turn text shown, at most (by default): about 4,000 tokens
MAX_CRITERION_CHARS = 500


class ConversationVerdict(Strict):
    verdict: Literal["yes", "no"]
    reason: ReasonText


ANALYZE_SYSTEM = f"""You judge whether a conversation between a user and an assistant satisfies one criterion.
- Judge the conversation as a whole: what the criterion needs may be spread over several turns.
- The user's turns show what was asked. Only what the assistant actually said can satisfy the criterion.
- Answer "yes" only if the conversation clearly and fully meets the criterion; "no" if it does not, meets it
  only in part, or you are unsure.
- Then a short reason: which turns meet the criterion, or what is missing.
{DATA_NOTE}"""


def transcript(turns: Sequence[Turn]) -> str:
    """One numbered turn a line, ``3. Assistant: ...``; a turn's further lines indented, so no
    line of a turn can pass for the start of another."""
    return "\n".join(f"{i}. {role.capitalize()}: " + text.replace("\n", "\n   ")
                     for i, (role, text) in enumerate(turns, 1))


def conversation_prompt(criterion: str, turns: Sequence[Turn]) -> str:
    return (f"The criterion:\n{block('CRITERION', criterion)}\nThe conversation, one numbered turn each:\n"
            f"{block('CONVERSATION', transcript(turns))}\n"
            "Does the conversation satisfy the criterion? Answer yes or no, then give a short reason.")


EXAMPLE_TURNS: tuple[Turn, ...] = (
    ("user", "When does the library open on Saturday?"), ("assistant", "The library opens at 9 am on Saturdays."),
    ("user", "And the pool?"), ("assistant", "It opens at 7 am."))
EXAMPLE = (
    conversation_prompt("The assistant gives the Saturday opening time of both the library and the pool.",
                        EXAMPLE_TURNS),
    '{"verdict":"yes","reason":"Turn 2 gives the library\'s time; turn 4 gives the pool\'s, asked for in turn 3."}',
)


def check_criterion(criterion: str) -> str:
    if not isinstance(criterion, str) or not criterion.strip():
        raise ValueError(f"criterion must be non-empty text, got {criterion!r}")
    if len(criterion.strip()) > MAX_CRITERION_CHARS:
        raise ValueError(f"criterion must be at most {MAX_CRITERION_CHARS} characters, got {len(criterion.strip())}")
    return criterion.strip()


def check_bound(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return value


def formatted_reason(satisfied: bool, criterion: str, reason: str) -> str:
    """Mastra's formatted reason: the verdict, the criterion, the judge's reason."""
    head = "Criterion satisfied." if satisfied else "Criterion not satisfied."
    return f"{head}\n\n{criterion}\n\n{reason or '(no reasoning returned by the judge)'}"


# createMultiTurnJudgeScorer: 1 x scale, not rounded; `options.scale ?? 1` (0 kept: every score 0)
MASTRA_NUMBERS = MastraNumbers(rounded=False, scale="zero_stays")


def multi_turn_judge_scorer(judge: Judge, *, criterion: str, scale: float = 1.0, max_turns: int = MAX_TURNS,
                            max_chars: int = MAX_CHARS, compat: str = "localjudge") -> Scorer:
    """Build a multi-turn judge (higher is better: `scale` if the conversation satisfies the criterion, else 0).

    Args:
        judge: The local model judging.
        criterion: What the conversation must satisfy, in plain English (at most 500 characters):
            ``"The assistant gave forecasts for London and Paris, and packing advice."``
        scale: Scores lie in [0, scale]; must be positive.
        max_turns, max_chars: The longest conversation judged (turns, characters of turn text);
            a longer one is unscored, never cut.
        compat: ``"mastra"``: Mastra 1.10.2's numbers (`MASTRA_NUMBERS`).
    """
    build = Build.of(MASTRA_NUMBERS, scale=scale, compat=compat)
    scale = build.kept  # the scale kept: 0 where Mastra keeps a scale of 0
    criterion = check_criterion(criterion)
    max_turns, max_chars = check_bound("max_turns", max_turns), check_bound("max_chars", max_chars)

    def shortcut(run: Sample, results: Results) -> Shortcut | None:
        if any(role == "assistant" for role, _ in run.turns):
            return None
        return 0.0, formatted_reason(False, criterion, "The conversation has no assistant turn with text, so "
                                     "nothing the assistant said can satisfy the criterion.")

    def render(run: Sample, results: Results) -> str:
        turns, chars = run.turns, sum(len(text) for _, text in run.turns)
        if len(turns) > max_turns or chars > max_chars:
            raise UnscorableError(
                f"the conversation has {len(turns)} turns and {chars} characters; multi_turn_judge judges at most "
                f"{max_turns} turns and {max_chars} characters (max_turns=, max_chars=), and never cuts one")
        return conversation_prompt(criterion, turns)

    def finish(run: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        return {**parsed, "satisfied": parsed["verdict"] == "yes", "turns": len(run.turns)}

    def score(run: Sample, results: Results) -> float:
        return 1.0 if results["analyze_step_result"]["satisfied"] else 0.0

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        return mean_label_prob(label_probs["analyze"], "yes", 1)

    def reason(run: Sample, results: Results) -> str:
        verdict = results["analyze_step_result"]
        return formatted_reason(verdict["satisfied"], criterion, verdict["reason"])

    step = JudgeStep(instructions=ANALYZE_SYSTEM, prompt=render, schema=ConversationVerdict, examples=(EXAMPLE,),
                     finish=finish)
    return (
        create_scorer("multi_turn_judge", judge=judge, version=VERSION, id="multi-turn-judge-scorer",
                      shortcut=shortcut, prob_score=prob_score, positive="satisfies the criterion",
                      higher_is_better=True, **build.create_keywords())
        .analyze(step)
        .generate_score(score)
        .generate_reason(reason)
    )


__all__ = ["MAX_CHARS", "MAX_TURNS", "ConversationVerdict", "multi_turn_judge_scorer", "transcript"]
