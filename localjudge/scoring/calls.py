"""The judge-call protocol: a batch's work is a generator of the judge calls it needs.

A scorer's batch (`localjudge.scoring.step_runner.batch_steps`) yields each judge call it needs
(`Ask`: the judge, prompts, schemas, token budget) and is sent the answers (`BatchSteps`).
Everything that runs batches speaks this protocol:

- `answered_alone`: a generator run to its end, each call made on its judge as it comes
  (`Scorer.run_batch`); a call that raises is thrown into the generator, so the error ends it
  unless it chose to catch it.
- `merged`: several asks to one judge answered as one call (a row that may have depended on the
  larger token budget asked again at its own, so each answer is the one its own call would give).
- `rounds`: several batches in lock step, each round the calls they wait for merged per judge,
  as one generator of calls. Its two uses: `run_together` (several scorers' batches of one
  schedule, ``isolate=True``: a failed call or a failed batch costs only the batches it touched)
  and a scorer made of other scorers (the ensemble's two modes, ``isolate=False``: any failure
  ends them all, as one batch's error ends that batch).

With hallucination, faithfulness and toxicity on one batch of rows, the judge sees three calls
(claims with toxicity's verdicts, verdicts with toxicity's reason, then the reasons) instead of
eight, and the rows of every scorer share the engine's batch. The merged call is exact on an
engine whose answers do not depend on their batch (the transformers engine in float32).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from localjudge.judge import ChatPrompt, Generation, Judge, JudgeOutOfMemory
from localjudge.result import ScoreResult


@dataclass(frozen=True)
class Ask:
    """One judge call a batch needs: `judge.generate(prompts, schemas, max_new_tokens=...)`."""

    judge: Judge
    prompts: list[ChatPrompt]
    schemas: list[type[BaseModel]]
    max_new_tokens: int


Steps = Generator[Ask, list[Generation], Any]  # yields the calls it needs, is sent their answers
BatchSteps = Generator[Ask, list[Generation], list[ScoreResult]]  # `batch_steps`: ends with the results
Outcome = list[ScoreResult] | Exception  # a batch's results, or what ended it
Answered = TypeVar("Answered")


def answered_alone(calls: Generator[Ask, list[Generation], Answered]) -> Answered:
    """A generator of judge calls run to what it returns, each call it asks for made on its judge
    as it comes. A call that raises (`Exception`) is thrown into the generator at its yield: one
    that does not catch it (a batch's steps) ends with it, so it ends here too."""
    try:
        ask = next(calls)
        while True:
            try:
                answers = ask.judge.generate(ask.prompts, ask.schemas, max_new_tokens=ask.max_new_tokens)
            except Exception as error:  # noqa: BLE001 - the generator decides what a failed call costs
                failure: Exception | None = error
            else:
                failure = None
            if failure is None:
                ask = calls.send(answers)
            else:  # thrown outside the except block: no frame of this one holds the failed call's
                ask = calls.throw(failure)
                failure = None
    except StopIteration as end:
        return end.value


def merged(asks: Sequence[Ask]) -> Generator[Ask, list[Generation], list[list[Generation]]]:
    """The calls that answer `asks` (all to the same judge) as one, as a generator of `Ask`; returns
    the answers split back per ask.

    The first call holds every prompt at the largest budget; a row of an ask with a smaller budget
    is asked again at its own (one call per budget) where the larger budget may have changed its
    answer: it used its own budget or more, was cut off, or was too long (the window check counts
    the budget)."""
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


def ask_merged(asks: Sequence[Ask]) -> list[list[Generation]]:
    """One judge call for `asks` (all to the same judge), answers split back per ask (`merged`,
    each call it yields made on the judge)."""
    return answered_alone(merged(asks))


def _budget_bound(out: Generation, ask: Ask) -> bool:
    """Whether this answer, given under a larger budget than `ask`'s, may differ from its own."""
    return out.error_kind == "too_long" or not out.finished or out.new_tokens >= ask.max_new_tokens


def rounds(batches: Sequence[Steps], *, isolate: bool) -> Generator[Ask, list[Generation], list[Any]]:
    """`batches` (generators of calls) in lock step, as one generator of calls: each round, the
    calls every batch waits for, merged per judge (`merged`); each batch goes on as soon as its
    answers are back.

    Returns:
        Per batch, in order, what it returned. With `isolate`, a batch that raises (a user's hook,
        `sys.exit` made a `RuntimeError`), or had prompts in a call that raised, ends with that
        exception as its outcome and the others go on (`JudgeOutOfMemory`'s traceback is dropped,
        so that the failed call's memory is freed before anyone retries). Without it, the first
        failure ends every batch (the others closed) and is raised.
    """
    results: list[Any] = [None] * len(batches)
    waiting: dict[int, Ask] = {}

    def advance(k: int, answers: list[Generation] | None) -> None:
        try:
            waiting[k] = batches[k].send(answers)  # type: ignore[arg-type]  # None starts it
        except StopIteration as end:
            results[k] = end.value
        except Exception as error:
            if not isolate:
                raise
            results[k] = error  # a user's hook or a bad scorer: this batch only
        except SystemExit as error:  # a user's hook calling sys.exit: this batch only, as any error
            if not isolate:
                raise
            results[k] = RuntimeError(f"SystemExit({error.code!r}) raised by the scorer's code")

    try:
        for k in range(len(batches)):
            advance(k, None)
        while waiting:
            round_, by_judge = dict(waiting), defaultdict(list)
            waiting.clear()
            for k, ask in round_.items():
                by_judge[id(ask.judge)].append(k)
            for ks in by_judge.values():
                try:
                    parts = yield from merged([round_[k] for k in ks])
                except Exception as error:
                    if not isolate:
                        raise
                    if isinstance(error, JudgeOutOfMemory):
                        error.__traceback__ = None  # its frames (the failed call's memory) freed now
                    for k in ks:  # a failed call costs its batches only
                        batches[k].close()
                        results[k] = error
                    continue
                for k, answers in zip(ks, parts, strict=True):
                    advance(k, answers)
    finally:
        if not isolate:
            for batch in batches:
                batch.close()  # (a no-op for a finished one)
    return results


def run_together(batches: Sequence[BatchSteps]) -> list[Outcome]:
    """Run batches' steps (`batch_steps`) in lock step, merging each round's calls to one judge
    (`rounds` with ``isolate=True``, each call made as it comes).

    Returns:
        Per batch, in order: its results, or the exception that ended it: its own, or that of a
        judge call it had prompts in (`JudgeOutOfMemory` too; its traceback dropped, so that the
        failed call's memory is freed before anyone retries).
    """
    return answered_alone(rounds(batches, isolate=True))


__all__ = ["Ask", "BatchSteps", "Outcome", "Steps", "answered_alone", "ask_merged", "merged", "rounds",
           "run_together"]
