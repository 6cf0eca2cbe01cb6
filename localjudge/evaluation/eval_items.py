"""What `run_evals` is given: items read and checked before any target runs (Mastra's rules),
and each item run through the target, turn by turn, into the run its scorers judge.

An item has one of `input` (one turn), `inputs` (a non-empty list, sent in turn on one thread)
or `turns` (a non-empty list of ``{"input", "gates"?, "scorers"?}``, not combined with `input`
or `inputs`). A scorer entry is a `Scorer` or ``{"scorer": s, "threshold": t}``; a gate is a
`Scorer`. Anything else is one clear error naming the item, turn or scorer.
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.evaluation.assertions import Threshold, check_threshold
from localjudge.samples import run_id_of
from localjudge.scoring import Scorer, resolve

log = logging.getLogger(__name__)

Entry = tuple[Scorer, "Threshold | None"]


@dataclass(frozen=True)
class Turn:
    """One input sent to the target, with the gates and scorers judging that turn alone."""

    input: Any
    gates: tuple[Scorer, ...] = ()
    scorers: tuple[Entry, ...] = ()


def entries_of(scorers: Sequence[Any], where: str = "scorers") -> list[Entry]:
    """Scorers with their thresholds (each threshold checked), each scorer once."""
    found: list[Entry] = []
    for entry in scorers:
        scorer, threshold = entry, None
        if not isinstance(entry, Scorer) and isinstance(entry, Mapping):
            scorer, threshold = entry.get("scorer"), entry.get("threshold")
        if not isinstance(scorer, Scorer):
            raise TypeError(f"{where}: each must be a Scorer or {{'scorer': Scorer, 'threshold': ...}}, got {entry!r}")
        if threshold is not None:
            check_threshold(threshold, scorer)
        found.append((scorer, threshold))
    ids = [s.id for s, _ in found]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: each once (their ids must differ); got {ids}")
    return found


def gates_of(gates: Sequence[Any], where: str = "gates") -> list[Scorer]:
    """Gates: plain scorers (a gate must reach its maximum: no threshold), each once."""
    if not all(isinstance(g, Scorer) for g in gates):
        raise TypeError(f"{where}: each gate must be a Scorer (it must reach its maximum: no threshold)")
    ids = [g.id for g in gates]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: each once (their ids must differ); got {ids}")
    return list(gates)


def turns_of(item: Mapping[str, Any]) -> list[Turn]:
    """The turns of a checked item: one for `input`, one per `inputs` entry, or its `turns`."""
    if "turns" in item:
        return [Turn(t["input"], tuple(t.get("gates") or ()), tuple(entries_of(t.get("scorers") or ())))
                for t in item["turns"]]
    if "inputs" in item:
        return [Turn(one) for one in item["inputs"]]
    return [Turn(item.get("input"))]


def check_items(data: Sequence[Any]) -> bool:
    """Refuse an item Mastra refuses (see the module docstring); True when some turn has gates
    or scorers of its own."""
    checked = False
    for i, item in enumerate(data):
        where = f"item {i}"
        if not isinstance(item, Mapping) or not {"input", "inputs", "turns"} & set(item):
            raise ValueError(f"{where}: must be a dict with 'input', 'inputs' or 'turns'")
        if "inputs" in item and (not isinstance(item["inputs"], (list, tuple)) or not item["inputs"]):
            raise ValueError(f"{where}: 'inputs' must be a non-empty list")
        if "turns" not in item:
            continue
        if "input" in item or "inputs" in item:
            raise ValueError(f"{where}: 'turns' cannot be combined with 'input' or 'inputs'")
        turns = item["turns"]
        if not isinstance(turns, (list, tuple)) or not turns:
            raise ValueError(f"{where}: 'turns' must be a non-empty list")
        for t, turn in enumerate(turns):
            if not isinstance(turn, Mapping) or "input" not in turn:
                raise ValueError(f"{where}: turn {t} must be a dict with an 'input'")
            unknown = sorted(set(turn) - {"input", "gates", "scorers"})
            if unknown:
                raise ValueError(f"{where}: turn {t} takes 'input', 'gates' and 'scorers', not {unknown}")
            gates = gates_of(turn.get("gates") or (), f"{where}, turn {t}, gates")
            scorers = entries_of(turn.get("scorers") or (), f"{where}, turn {t}, scorers")
            checked = checked or bool(gates or scorers)
    return checked


def row_of(item: Mapping[str, Any], outputs: list[Any], index: str) -> dict[str, Any]:
    """The run the scorers judge: the item, its first input, the output of all its turns."""
    row = {k: v for k, v in item.items() if k not in ("inputs", "turns")}
    row["run_id"] = run_id_of(item) or index
    inputs = [t.input for t in turns_of(item)]
    if len(inputs) > 1 or "turns" in item:
        row["input"] = inputs[0]
        row["output"] = [m for out in outputs for m in (out if isinstance(out, list) else [message_of(out)])]
    else:
        row["output"] = outputs[0] if outputs else None
    return row


def message_of(output: Any) -> Any:
    """A turn's output in the list of all turns' messages: text as an assistant message."""
    return {"role": "assistant", "content": output} if isinstance(output, str) else output


def run_target(call: Callable[..., Any], item: Mapping[str, Any]) -> tuple[list[Any], str | None]:
    """The target's output for each turn of one item (one turn for an `input`), or the error that
    stopped it (recorded, not raised)."""
    offered = {"thread_id": f"thread-{uuid.uuid4().hex}",
               "request_context": item.get("request_context", item.get("requestContext"))}
    keywords = _keywords(call, offered)
    outputs: list[Any] = []
    try:
        for turn in turns_of(item):
            outputs.append(resolve(call(turn.input, **keywords)))
        return outputs, None
    except Exception as error:  # noqa: BLE001 - one item's failure is recorded, not fatal
        log.warning("target failed on an item: %s", error)
        return outputs, f"target failed: {type(error).__name__}: {error}"


def _keywords(call: Callable[..., Any], offered: dict[str, Any]) -> dict[str, Any]:
    """The keywords of `offered` that `call` takes (all of them, if it takes ``**kwargs``)."""
    try:
        params = inspect.signature(call).parameters
    except (TypeError, ValueError):  # a builtin: no signature to read
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return offered
    return {k: v for k, v in offered.items() if k in params and params[k].kind is not inspect.Parameter.POSITIONAL_ONLY}


__all__ = ["Entry", "Turn", "check_items", "entries_of", "gates_of", "message_of", "row_of", "run_target", "turns_of"]
