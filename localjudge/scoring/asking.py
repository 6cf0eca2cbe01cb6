"""Rendering and asking: a judge step's prompts for a batch's items, one judge call for them all
(`ask`: plus one retry call at twice the budget for the answers that were cut off), each answer
parsed against its schema (`localjudge.scoring.answers`), a split step's parts joined per item.

A judge step's call is yielded as an `Ask` (`localjudge.scoring.calls`): whoever runs the batch
makes it, alone or merged with other batches' calls. `chat` is the chat every judge step sends.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from localjudge.judge import ChatPrompt, Generation
from localjudge.scoring.answers import Failure, failure_of, parse_answer
from localjudge.scoring.calls import Ask
from localjudge.scoring.items import Item, shown
from localjudge.scoring.recipe import Recipe
from localjudge.scoring.schemas import token_budget
from localjudge.scoring.steps import JudgeStep, resolve

log = logging.getLogger(__name__)

Answer = tuple[Item, "dict[str, Any] | Failure", Generation]  # an item, its parsed answer, the raw output
Asked = Generator[Ask, list[Generation], tuple[list[Answer], list[tuple[Item, Failure]]]]


def ask(scorer: Recipe, name: str, step: JudgeStep, items: list[Item]) -> Asked:
    """Render, one judge call for all items (one retry call for cut-off answers), parse; a split
    step's parts (`JudgeStep.split`) all in that call, their answers joined per item.
    Returns the answers (parsed data, or a `Failure`) and the items whose prompt or schema
    could not be made, with why."""
    asked: list[tuple[Item, list[tuple[type[BaseModel], ChatPrompt]]]] = []
    failed: list[tuple[Item, Failure]] = []
    budgets: list[int] = []
    for item in items:
        rendered = _render(scorer, step, item)
        if isinstance(rendered, Failure):
            failed.append((item, rendered))
            continue
        budgets += [token_budget(schema) for schema, _ in rendered]
        item.prompts[name] = _shown_parts([text for _, text in rendered])
        asked.append((item, [(schema, chat(step.instructions or scorer.instructions, text, step.examples))
                             for schema, text in rendered]))
    if not asked:
        return [], failed
    judge = step.judge or scorer.judge
    assert judge is not None  # batch_steps checked it
    prompts = [prompt for _, parts in asked for _, prompt in parts]
    schemas = [schema for _, parts in asked for schema, _ in parts]
    budget = max(budgets)
    outputs = list((yield Ask(judge, prompts, schemas, budget)))
    parsed = [parse_answer(out, schema) for out, schema in zip(outputs, schemas, strict=True)]
    # A constrained answer fails only by being cut off: retry those once, with more room.
    retry = [i for i, p in enumerate(parsed) if isinstance(p, Failure) and not outputs[i].finished]
    if retry:
        log.info("%s/%s: retrying %d cut-off item(s) with twice the budget", scorer.name, name, len(retry))
        again = yield Ask(judge, [prompts[i] for i in retry], [schemas[i] for i in retry], 2 * budget)
        for i, out in zip(retry, again, strict=True):
            outputs[i] = replace(out, new_tokens=outputs[i].new_tokens + out.new_tokens)
            parsed[i] = parse_answer(out, schemas[i])
    answers: list[Answer] = []
    start = 0
    for item, parts in asked:
        end = start + len(parts)
        answer, out = _joined(scorer, step, item, parsed[start:end], outputs[start:end])
        start = end
        item.new_tokens += out.new_tokens
        item.label_probs[name] = out.label_probs
        answers.append((item, answer, out))
    return answers, failed


def _render(scorer: Recipe, step: JudgeStep, item: Item) -> list[tuple[type[BaseModel], str]] | Failure:
    """The (schema, user message) of each of the item's prompts for `step`: one, or one per part
    of a split step; or why they could not be made (a user's hook failed or gave a bad value)."""
    try:  # UnscorableError, or a user's split, prompt or schema function: this item only
        parts = [item.results] if step.split is None else step.split(item.sample, item.results)
        if not isinstance(parts, (list, tuple)) or not parts:
            return Failure("step_error", f"the split function gave {shown(parts)}, not a non-empty list of parts")
        if len(parts) > step.max_parts:
            return Failure("unscorable", f"this run needs {len(parts)} prompts (its items asked in parts), over the "
                                         f"step's max_parts of {step.max_parts}: too long to judge")
        if step.split is not None:
            parts = [{**item.results, "part": part} for part in parts]
        made = [(step.schema_for(item.sample, results), step.prompt(item.sample, results)) for results in parts]
    except (Exception, SystemExit) as error:  # noqa: BLE001 - user code (sys.exit too)
        return failure_of(error)
    for schema, text in made:
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):  # else the whole call would fail
            return Failure("step_error", f"the schema function gave {shown(schema)}, not a pydantic model class")
        try:
            token_budget(schema)
        except ValueError as error:  # an unbounded string or list: no budget, so no call for it
            return Failure("step_error", f"schema {schema.__name__}: {error}")
        if not isinstance(text, str):
            return Failure("step_error", f"the prompt function gave {shown(text)}, not text")
    return made


def _shown_parts(texts: list[str]) -> str:
    """The prompt kept in the result: the one text, or each part's under a ``[part k of n]`` line."""
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(f"[part {k} of {len(texts)}]\n{text}" for k, text in enumerate(texts, 1))


def _joined(scorer: Recipe, step: JudgeStep, item: Item, parsed: list[dict[str, Any] | Failure],
            outputs: list[Generation]) -> tuple[dict[str, Any] | Failure, Generation]:
    """One item's answer and raw output from its parts': the one part's as they are; else the
    first bad part's (naming it), or the answers joined by `step.join` with the outputs as one
    (texts a line each, tokens added, label probabilities in part order)."""
    if len(parsed) == 1:
        return parsed[0], outputs[0]
    answers = []
    for k, (answer, out) in enumerate(zip(parsed, outputs, strict=True), 1):
        if isinstance(answer, Failure):
            return Failure(answer.kind, f"part {k} of {len(parsed)}: {answer.message}"), out
        answers.append(answer)
    out = Generation("\n".join(o.text for o in outputs), finished=all(o.finished for o in outputs),
                     new_tokens=sum(o.new_tokens for o in outputs),
                     label_probs=tuple(p for o in outputs for p in o.label_probs))
    try:  # UnscorableError (parts that contradict each other), or a user's join: this item only
        joined = resolve(step.join(item.sample, item.results, answers))
    except (Exception, SystemExit) as error:  # noqa: BLE001 - user code (sys.exit too)
        return failure_of(error), out
    if not isinstance(joined, dict):
        return Failure("step_error", f"the join function gave {shown(joined)}, not a dict"), out
    return joined, out


def chat(system: str, user: str, examples: Sequence[tuple[str, str]] = ()) -> ChatPrompt:
    """The chat a judge step sends: system message, worked examples as turns, the rendered prompt."""
    messages = [{"role": "system", "content": system}]
    for example_user, example_answer in examples:
        messages += [{"role": "user", "content": example_user}, {"role": "assistant", "content": example_answer}]
    return messages + [{"role": "user", "content": user}]


__all__ = ["Answer", "Asked", "ask", "chat"]
