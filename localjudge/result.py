"""Result values: what a scorer returns for one run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from localjudge.text_safety import safe_value

RAW_OUTPUT_CHARS = 100_000  # of a judge's raw text kept in a result: the rest is cut, saying how long it was

# Why a run is unscored, as a value (the `error` text says it for people):
#   invalid_run     the run cannot be judged (no output, no context where one is needed, ...)
#   too_long        its prompt does not fit the model's context window
#   judge_failed    the backend raised on its batch (out of memory at batch 1, a crash)
#   invalid_output  the judge's answer does not follow its schema (cut off even after the retry)
#   unscorable      the answer parsed but cannot be scored (a step raised `UnscorableError`)
#   step_error      a user-written step, prompt or score function raised, or gave a bad value
#   copied_example  the judge's answer replays the step's worked example (see `localjudge.scoring.copying`)
#   target_failed   `run_evals`: the target raised, so there was no output to judge
#   not_scorable    not a failure: a step returned `not_scorable(reason)` (Mastra's `notScorable()`), the
#                   run has nothing for this scorer to judge; counted apart from failures everywhere
ErrorKind = Literal["invalid_run", "too_long", "judge_failed", "invalid_output", "unscorable", "step_error",
                    "copied_example", "target_failed", "not_scorable"]
ERROR_KINDS: tuple[ErrorKind, ...] = ("invalid_run", "too_long", "judge_failed", "invalid_output", "unscorable",
                                      "step_error", "copied_example", "target_failed", "not_scorable")
# Kinds that may pass on the next run (another limit, a free GPU): never stored for resuming.
TRANSIENT_ERRORS: frozenset[ErrorKind] = frozenset({"too_long", "judge_failed"})


@dataclass(frozen=True)
class ScoreResult:
    """The outcome of scoring one run, with every step's output and prompt kept for audit.

    A run that could not be judged is *unscored*: `score` is None, `error` says why and
    `raw_output` holds the judge's text that failed, if any. Never a guessed score. An unscored
    run is either a failure (`failed`) or *not scorable* (`not_scorable`: a step declared that
    the run has nothing for this scorer to judge; `error` then holds the step and its reason).

    Attributes:
        run_id: The run's id, if it had one.
        scorer: The scorer's name.
        score: The score in [0, scale], rounded half up to two decimals (a custom scorer's with
            ``score_returns="score"``: any finite number it returns, unrounded under Mastra's
            compat); None when unscored.
        reason: A sentence or two explaining the score.
        preprocess_step_result: Output of the preprocess step (for example the claims).
        preprocess_prompt: The rendered preprocess prompt (user message).
        analyze_step_result: Output of the analyze step (the verdicts).
        analyze_prompt: The rendered analyze prompt.
        generate_reason_prompt: The rendered reason prompt.
        prob_score: The score computed from the judge's label probabilities instead of its
            hard verdicts (same scale and direction); None when the backend gives none.
        error: Why the run is unscored.
        error_kind: The same as a value (`ERROR_KINDS`); None when scored.
        raw_output: The judge's raw text for the failed step (its first `RAW_OUTPUT_CHARS` characters).
        new_tokens: Tokens the judge generated for this run, all steps together.
    """

    run_id: str | None
    scorer: str
    score: float | None
    reason: str | None
    preprocess_step_result: Any = None
    preprocess_prompt: str | None = None
    analyze_step_result: Any = None
    analyze_prompt: str | None = None
    generate_reason_prompt: str | None = None
    prob_score: float | None = None
    error: str | None = None
    raw_output: str | None = None
    new_tokens: int = 0
    error_kind: ErrorKind | None = None

    def __post_init__(self) -> None:
        # Untrusted text (the run id, the judge's answer, an error quoting the run) is stored and
        # sent as it is here: made safe once (`localjudge.text_safety`), for every store.
        for name in _TEXT_PARTS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, safe_value(value))
        if isinstance(self.raw_output, str) and len(self.raw_output) > RAW_OUTPUT_CHARS:  # (a server's 100 MB answer)
            cut = f"{self.raw_output[:RAW_OUTPUT_CHARS]} [cut: {len(self.raw_output)} characters in all]"
            object.__setattr__(self, "raw_output", cut)

    @classmethod
    def unscored(cls, run_id: str | None, scorer: str, kind: ErrorKind, error: str, **parts: Any) -> ScoreResult:
        """The one way an unscored result is made: no score, `error` saying why, `kind` as a value;
        `parts` keeps what the steps produced before it failed (step results, prompts, raw text)."""
        return cls(run_id, scorer, None, None, error=error, error_kind=kind, **parts)

    @property
    def scored(self) -> bool:
        """True when the run got a score."""
        return self.score is not None

    @property
    def not_scorable(self) -> bool:
        """True when a step declared the run not scorable (`not_scorable(reason)`): no score, and
        not a failure either."""
        return self.error_kind == "not_scorable"

    @property
    def failed(self) -> bool:
        """True when the run is unscored for a failure (any unscored run that is not `not_scorable`)."""
        return self.score is None and not self.not_scorable

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-serialisable dict of every field."""
        return asdict(self)


_TEXT_PARTS = tuple(f.name for f in fields(ScoreResult) if f.name not in ("score", "prob_score", "new_tokens"))
