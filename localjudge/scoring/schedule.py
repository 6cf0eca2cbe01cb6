"""Several scorers' batches in lock step: each round, the judge calls every batch is waiting for go
to their judge merged into one `generate` call, and each batch goes on as soon as its answers are
back. With hallucination, faithfulness and toxicity on one batch of rows, the judge sees three calls
(claims with toxicity's verdicts, verdicts with toxicity's reason, then the reasons) instead of
eight, and the rows of every scorer share the engine's batch.

A batch's work is `localjudge.scoring.step_runner.batch_steps`, a generator of the calls it needs
(`Ask`); `run_together` advances them together. A merged call is exact: it asks with the largest
token budget of its parts, and a row whose answer may have depended on the larger budget (it came
close to its own budget, was cut off, or was too long for the window at the larger budget) is asked
again at its own budget; so each row's answer is the one its scorer's own call would give (on an
engine whose answers do not depend on their batch: the transformers engine in float32).

A call that raises ends every batch that had prompts in it (the caller records their rows), and
only those: the other batches go on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Generator, Sequence

from localjudge.judge import Generation, JudgeOutOfMemory
from localjudge.result import ScoreResult
from localjudge.scoring.step_runner import Ask, BatchSteps, answered_alone

Outcome = list[ScoreResult] | Exception  # a batch's results, or what ended it


def run_together(batches: Sequence[BatchSteps]) -> list[Outcome]:
    """Run batches' steps (`batch_steps`) in lock step, merging each round's calls to one judge.

    Returns:
        Per batch, in order: its results, or the exception that ended it: its own, or that of a
        judge call it had prompts in (`JudgeOutOfMemory` too; its traceback dropped, so that the
        failed call's memory is freed before anyone retries).
    """
    outcomes: list[Outcome | None] = [None] * len(batches)
    waiting: dict[int, Ask] = {}

    def advance(k: int, answers: list[Generation] | None) -> None:
        try:
            waiting[k] = batches[k].send(answers)  # type: ignore[arg-type]  # None starts it
        except StopIteration as end:
            outcomes[k] = end.value
        except Exception as error:  # noqa: BLE001 - a user's hook or a bad scorer: this batch only
            outcomes[k] = error
        except SystemExit as error:  # a user's hook calling sys.exit: this batch only, as any error
            outcomes[k] = RuntimeError(f"SystemExit({error.code!r}) raised by the scorer's code")

    for k in range(len(batches)):
        advance(k, None)
    while waiting:
        round_, by_judge = dict(waiting), defaultdict(list)
        waiting.clear()
        for k, ask in round_.items():
            by_judge[id(ask.judge)].append(k)
        for ks in by_judge.values():
            try:
                parts = ask_merged([round_[k] for k in ks])
            except Exception as error:  # noqa: BLE001 - a failed call costs its batches only
                if isinstance(error, JudgeOutOfMemory):
                    error.__traceback__ = None  # its frames (the failed call's memory) freed now
                for k in ks:
                    batches[k].close()
                    outcomes[k] = error
                continue
            for k, answers in zip(ks, parts, strict=True):
                advance(k, answers)
    return outcomes  # type: ignore[return-value]


def ask_merged(asks: Sequence[Ask]) -> list[list[Generation]]:
    """One judge call for `asks` (all to the same judge), answers split back per ask (`merged`,
    each call it yields made on the judge)."""
    return answered_alone(merged(asks))


def merged(asks: Sequence[Ask]) -> Generator[Ask, list[Generation], list[list[Generation]]]:
    """The calls that answer `asks` (all to the same judge) as one, as a generator of `Ask`; returns
    the answers split back per ask.

    The first call holds every prompt at the largest budget; a row of an ask with a smaller budget
    is asked again at its own (one call per budget) where the larger budget may have changed its
    answer: it used its own budget or more, was cut off, or was too long (the window check counts
    the budget). A scorer made of other scorers (`localjudge.scorers.lockstep`) yields these calls
    as its own; `ask_merged` makes them."""
    if len(asks) == 1:
        return [list((yield asks[0]))]
    judge, budget = asks[0].judge, max(ask.max_new_tokens for ask in asks)
    outputs = list((yield Ask(judge, [p for ask in asks for p in ask.prompts],
                              [s for ask in asks for s in ask.schemas], budget)))
    if len(outputs) != sum(len(ask.prompts) for ask in asks):
        raise ValueError(f"the judge gave {len(outputs)} answers for {sum(len(a.prompts) for a in asks)} prompts")
    parts, start = [], 0
    for ask in asks:
        parts.append(outputs[start:start + len(ask.prompts)])
        start += len(ask.prompts)
    again: dict[int, list[tuple[int, int]]] = defaultdict(list)  # own budget -> (ask, row)
    for a, (ask, answers) in enumerate(zip(asks, parts, strict=True)):
        if ask.max_new_tokens < budget:
            again[ask.max_new_tokens] += [(a, r) for r, out in enumerate(answers) if _budget_bound(out, ask)]
    for own, rows in again.items():
        if rows:
            redone = yield Ask(judge, [asks[a].prompts[r] for a, r in rows], [asks[a].schemas[r] for a, r in rows],
                               own)
            for (a, r), out in zip(rows, redone, strict=True):
                parts[a][r] = out
    return parts


def _budget_bound(out: Generation, ask: Ask) -> bool:
    """Whether this answer, given under a larger budget than `ask`'s, may differ from its own."""
    return out.error_kind == "too_long" or not out.finished or out.new_tokens >= ask.max_new_tokens
