"""Append-only result logs keyed by content hash: what makes a sweep resumable.

Each finished (row, scorer) pair is one JSON line `{"format", "key", "result"}`, appended and
flushed to disk (fsync) a batch at a time. `format` is `RECORD_FORMAT`: a line in another format
(written by another localjudge version) is not trusted and its row is scored again. The key
hashes the scorer's identity (name, prompt hash, scale, judge model) and the row's judged
content, so a rerun skips exactly the work already done and a changed prompt or model
recomputes. A line cut off by a crash, or any line that does
not parse or does not hold a well-formed result, is ignored on load and its row scored again:
nothing half-written or corrupted is ever trusted.

Several processes (ranks of a data-parallel run) each append to their own file in one folder;
loading reads them all.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from localjudge.result import ERROR_KINDS, ScoreResult
from localjudge.samples import Sample

log = logging.getLogger(__name__)

RECORD_FORMAT = 2  # 2: results carry `error_kind`
OTHER_FORMAT = "other format"


TEXT_FIELDS = ("input", "output", "context")  # always in the key


def result_key(scorer_key: str, sample: Sample, shown: Iterable[str] = ()) -> str:
    """Content hash of a scorer identity and the texts it judges: the input, output and context,
    and the other fields the scorer shows its judge (`Scorer.shown_fields`: ground truth, tool
    calls...) and the fields of the run as given its own steps read (``raw.<key>``), so a changed
    reference answer or request context is judged again."""
    extra = {name: _plain(_shown(sample, name)) for name in sorted(set(shown) - set(TEXT_FIELDS))}
    payload = json.dumps(
        [scorer_key, sample.run_id, sample.input, sample.output, sample.context] + ([extra] if extra else []),
        ensure_ascii=False, default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _shown(sample: Sample, name: str) -> Any:
    """A field the key holds: a `Sample` field, or ``raw.<key>``, a key of the run as given that
    the scorer's own steps read (`Sample.raw`)."""
    return sample.raw.get(name[4:]) if name.startswith("raw.") else getattr(sample, name)


# Fields added to a key's dataclasses after keys were first written, with their defaults: at the
# default they stay out of the key, so files written before them resume without judging again
LATER_FIELDS: dict[str, Any] = {"is_error": False}  # ToolCall.is_error (Mastra's isError)


def _plain(value: Any) -> Any:
    """A sample field as JSON can write it (tool calls are dataclasses)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    return {name: field for name, field in dataclasses.asdict(value).items()
            if not (name in LATER_FIELDS and field == LATER_FIELDS[name])}


class ResultStore:
    """A folder of append-only JSONL logs, one per writer.

    Args:
        folder: Where the logs live (created if missing).
        writer: This process's file name stem, e.g. ``"rank-0"``.
        fresh: Start this writer's log empty and read only it: nothing earlier is resumed, while
            what it writes still reaches a merge that reads the whole folder (the ranks of a
            data-parallel run that must not resume).
    """

    def __init__(self, folder: str | Path, *, writer: str = "rank-0", fresh: bool = False) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / f"{writer}.jsonl"
        self.fresh = fresh
        if fresh:
            self.path.write_bytes(b"")
        self._repair_tail()

    def _repair_tail(self) -> None:
        """Cut a partial last line (a crash mid-write) so that new appends start clean."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as handle:
            data = handle.read()
            if data.endswith(b"\n"):
                return
            cut = data.rfind(b"\n") + 1
            log.warning("%s: dropping a partial last line (%d bytes) left by a crash", self.path, len(data) - cut)
            handle.truncate(cut)

    def load(self) -> dict[str, dict[str, Any]]:
        """Every stored result by key, from all writers' logs; unreadable lines are skipped."""
        found: dict[str, dict[str, Any]] = {}
        bad = other = 0
        for path in [self.path] if self.fresh else sorted(self.folder.glob("*.jsonl")):
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    record = _record(line)
                    if isinstance(record, tuple):
                        found[record[0]] = record[1]
                    elif record == OTHER_FORMAT:
                        other += 1
                    else:
                        bad += 1
        if bad:
            log.warning("%s: skipped %d unreadable line(s); those rows will be scored again", self.folder, bad)
        if other:
            log.warning("%s: %d line(s) are in another record format than %d (another localjudge version); "
                        "those rows will be scored again", self.folder, other, RECORD_FORMAT)
        return found

    def append(self, records: Iterable[tuple[str, ScoreResult]]) -> None:
        """Append results and force them to disk before returning."""
        lines = "".join(
            json.dumps({"format": RECORD_FORMAT, "key": key, "result": _nan_as_text(result.to_dict())},
                       ensure_ascii=False) + "\n"
            for key, result in records
        )
        if not lines:
            return
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(lines)
            handle.flush()
            os.fsync(handle.fileno())


_FIELDS = frozenset(f.name for f in dataclasses.fields(ScoreResult))
_TEXT_FIELDS = ("run_id", "reason", "preprocess_prompt", "analyze_prompt", "generate_reason_prompt",
                "error", "raw_output")


def _record(line: str) -> tuple[str, dict[str, Any]] | str | None:
    """`(key, result)` from one log line; ``"other format"`` for a record of another format;
    None when the line is not a well-formed record."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("key"), str):
        return None
    if record.get("format") != RECORD_FORMAT:
        return OTHER_FORMAT
    result = record.get("result")
    return (record["key"], result) if isinstance(result, dict) and _well_formed(result) else None


def _is_number(value: Any) -> bool:
    return value == NAN or isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# A NaN score (only compat="mastra" gives one: Mastra's own NaN) is the string "NaN" in the log: JSON has
# no NaN, and null is an unscored run.
NAN = "NaN"
_SCORES = ("score", "prob_score")


def _nan_as_text(data: dict[str, Any]) -> dict[str, Any]:
    return {k: NAN if k in _SCORES and isinstance(v, float) and math.isnan(v) else v for k, v in data.items()}


def _well_formed(result: Any) -> bool:
    """Exactly ScoreResult's fields, plausibly typed, and a score if and only if no error."""
    if not isinstance(result, dict) or set(result) != _FIELDS:
        return False
    return (
        isinstance(result["scorer"], str)
        and all(result[name] is None or isinstance(result[name], str) for name in _TEXT_FIELDS)
        and all(result[name] is None or _is_number(result[name]) for name in ("score", "prob_score"))
        and isinstance(result["new_tokens"], int)
        and (result["score"] is None) == (result["error"] is not None)
        and (result["error"] is None) == (result["error_kind"] is None)
        and (result["error_kind"] is None or result["error_kind"] in ERROR_KINDS)
    )


def result_from_dict(data: Mapping[str, Any]) -> ScoreResult:
    """Rebuild a stored result (the text ``"NaN"`` as a NaN score)."""
    fields: dict[str, Any] = {k: math.nan if k in _SCORES and v == NAN else v for k, v in data.items()}
    return ScoreResult(**fields)
