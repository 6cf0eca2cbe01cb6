"""Calibration files: the Platt maps `localjudge bench --fit-calibration` fits, read back to add
``<name>_calibrated_prob`` to scored rows (`localjudge score --calibration`, `apply_calibration`).

A file is JSON (never pickle: reading one runs no code), marked with `FORMAT` and `VERSION`, and
holds one map per scorer with what it was fitted for (scorer, mode, scorer version, scale, judge
identity), its two numbers and the fit's figures. A map is applied only to the scorer version
and judge it was fitted for: the prob score of another judge, or of an edited prompt, is another
quantity, so a mismatch is refused with one line naming both. A file that is not such a file
is one line too, naming the file and what is wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localjudge.bench.platt import platt
from localjudge.evaluation import Evaluation
from localjudge.scoring import Scorer
from localjudge.user_files import load_json, read_user_file

if TYPE_CHECKING:
    from datasets import Dataset

FORMAT = "localjudge-calibration"
VERSION = 1
METHOD = "platt-logit"  # sigmoid(a * logit(p) + b): see localjudge.bench.platt
SUFFIX = "_calibrated_prob"
_MAP_FIELDS: dict[str, type | tuple[type, ...]] = {
    "scorer": str, "mode": str, "scorer_version": str, "scale": (int, float), "judge": str,
    "a": (int, float), "b": (int, float), "fit": dict,
}


@dataclass(frozen=True)
class CalibrationMap:
    """One scorer's map from its prob score to the chance of label 1 (its positive class).

    Attributes:
        scorer: The scorer's name (``"hallucination"``).
        mode: The mode it ran in (``"pipeline"``, ``"direct"``).
        scorer_version: ``version@prompt_hash`` (and compat) of the scorer it was fitted on.
        scale: That scorer's scale (prob scores are divided by it first).
        judge: The judge's identity.
        a, b: ``sigmoid(a * logit(p) + b)``; ``a >= 0``.
        fit: What it was fitted on and how it did: rows, labels, folds, cross-validated AUC and
            ECE before and after (each a value with its bootstrap interval).
    """

    scorer: str
    mode: str
    scorer_version: str
    scale: float
    judge: str
    a: float
    b: float
    fit: dict[str, Any] = field(default_factory=dict)

    def prob(self, prob_score: float | None) -> float | None:
        """The calibrated probability of label 1 for a prob score on the scorer's scale (None for none)."""
        if prob_score is None or not math.isfinite(prob_score):
            return None
        return round(float(platt([min(max(prob_score / self.scale, 0.0), 1.0)], self.a, self.b)[0]), 4)


@dataclass(frozen=True)
class CalibrationFile:
    """A calibration file read back: where from, and its maps by scorer name."""

    source: str
    maps: dict[str, CalibrationMap]


def scorer_version(scorer: Scorer) -> str:
    """What a map is tied to besides the judge: ``version@prompt_hash``, and the compat setting if
    not the default (a bench run's `BenchResult.scorer_version` for the same scorer)."""
    return f"{scorer.version}@{scorer.prompt_hash}{scorer.compat.key}"


def judge_of(scorer: Scorer) -> str:
    """The identity of the judge a scorer asks (``(none)`` for none)."""
    return scorer.judge.identity if scorer.judge is not None else "(none)"


def write_calibration(path: str | Path, maps: Sequence[CalibrationMap]) -> Path:
    """Write `maps` as a calibration file (JSON); returns its path."""
    if not maps:
        raise ValueError("no calibration map to write")
    data = {"format": FORMAT, "version": VERSION, "method": METHOD, "maps": [asdict(m) for m in maps]}
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return out


def load_calibration(path: str | Path) -> CalibrationFile:
    """Read a calibration file; a missing, unreadable or malformed one is a one-line `ValueError`."""
    where = f"calibration file {str(path)!r}"
    try:  # a regular file of at most SMALL_LIMIT bytes: a FIFO, /dev/zero or a folder is one line
        text = read_user_file(path, "calibration file").decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{where}: cannot read it ({type(error).__name__}: {error})") from None
    try:
        data = load_json(text, where)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not JSON ({error})") from None
    return CalibrationFile(str(path), parse_calibration(data, where))


def parse_calibration(data: Any, where: str = "calibration") -> dict[str, CalibrationMap]:
    """The maps of a calibration file's parsed JSON, each checked; a one-line `ValueError` if not."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{where}: not a localjudge calibration file (it needs \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise ValueError(f"{where}: format version {data.get('version')!r}; this localjudge reads version {VERSION}")
    if data.get("method") != METHOD:
        raise ValueError(f"{where}: method {data.get('method')!r}; this localjudge applies {METHOD!r}")
    entries = data.get("maps")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{where}: \"maps\" must be a non-empty list")
    maps: dict[str, CalibrationMap] = {}
    for i, entry in enumerate(entries):
        made = _map(entry, f"{where}: maps[{i}]")
        if made.scorer in maps:
            raise ValueError(f"{where}: two maps for the {made.scorer} scorer")
        maps[made.scorer] = made
    return maps


def _map(entry: Any, where: str) -> CalibrationMap:
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is not an object")
    for key, kind in _MAP_FIELDS.items():
        value = entry.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"{where}: {key!r} is missing or not {_kind_name(kind)}")
    made = CalibrationMap(**{key: entry[key] for key in _MAP_FIELDS})
    if not all(math.isfinite(v) for v in (made.a, made.b, made.scale)) or made.a < 0 or made.scale <= 0:
        raise ValueError(f"{where}: needs finite a >= 0, b and scale > 0, got a={made.a}, b={made.b}, "
                         f"scale={made.scale}")
    return replace(made, scale=float(made.scale), a=float(made.a), b=float(made.b))


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return "a number" if isinstance(kind, tuple) else {"str": "a string", "dict": "an object"}[kind.__name__]


def calibrated_column(scorer: str) -> str:
    """The column a scorer's calibrated probability goes to: ``<name>_calibrated_prob``."""
    return f"{scorer}{SUFFIX}"


def check_calibration(calibration: CalibrationFile, scorers: Iterable[Scorer],
                      column_names: Sequence[str] = (), *, judged: bool = True) -> dict[str, CalibrationMap]:
    """The maps that apply to `scorers`, by scorer name, each checked against the scorer's judge
    (unless not `judged`: scorers built before the model loads, whose version alone can be
    checked then) and version, and their columns against the data's `column_names`. Raises a
    one-line `ValueError` on a mismatch (naming both), when no scorer has a map, or when the data
    already has a column where a calibrated probability goes (results never replace data)."""
    scorers = list(scorers)
    chosen = {}
    for scorer in scorers:
        fitted = calibration.maps.get(scorer.name)
        if fitted is None:
            continue
        judge, version = judge_of(scorer), scorer_version(scorer)
        if judged and fitted.judge != judge:
            raise ValueError(f"{calibration.source}: its {scorer.name} map was fitted for judge {fitted.judge!r}, "
                             f"not this run's judge {judge!r}: fit one for this judge (localjudge bench "
                             "--fit-calibration)")
        if fitted.scorer_version != version:
            raise ValueError(f"{calibration.source}: its {scorer.name} map was fitted for scorer version "
                             f"{fitted.scorer_version} ({fitted.mode} mode, scale {fitted.scale:g}), not this run's "
                             f"{version} (scale {scorer.scale:g}): fit one for this version")
        chosen[scorer.name] = fitted
    if not chosen:
        raise ValueError(f"{calibration.source} holds maps for {', '.join(sorted(calibration.maps))}, none for "
                         f"{', '.join(s.name for s in scorers) or 'no scorer'}")
    for name in chosen:
        if calibrated_column(name) in column_names:
            raise ValueError(f"the data already has a column {calibrated_column(name)!r}, where the calibrated "
                             "probability goes: rename or drop it (results never replace data)")
    return chosen


def calibrate_rows(rows: Iterable[Mapping[str, Any]], calibration: CalibrationFile,
                   scorers: Iterable[Scorer]) -> list[dict[str, Any]]:
    """Scored rows (dicts holding ``<name>_prob_score``) with ``<name>_calibrated_prob`` added for
    each scorer the file has a map for, after `check_calibration`."""
    out = [dict(row) for row in rows]
    maps = check_calibration(calibration, scorers, sorted({key for row in out for key in row}))
    for row in out:
        for name, fitted in maps.items():
            row[calibrated_column(name)] = fitted.prob(row.get(f"{name}_prob_score"))
    return out


def apply_calibration(evaluation: Evaluation, calibration: CalibrationFile,
                      scorers: Iterable[Scorer]) -> Evaluation:
    """`evaluation` with a ``<name>_calibrated_prob`` column for each scorer the file has a map for
    (None where the row has no prob score), after `check_calibration`; `scorers` are the ones
    that scored it."""
    maps = check_calibration(calibration, scorers, evaluation.dataset.column_names)
    missing = [name for name in maps if name not in evaluation.results]
    if missing:
        raise ValueError(f"the evaluation has no results of the {missing[0]} scorer")
    columns = {calibrated_column(name): [fitted.prob(r.prob_score if r.scored else None)
                                   for r in evaluation.results[name]]
               for name, fitted in maps.items()}
    return replace(evaluation, dataset=_with_columns(evaluation.dataset, columns))


def _with_columns(dataset: Dataset, columns: dict[str, list[float | None]]) -> Dataset:
    from datasets import Dataset, Features, Value, concatenate_datasets

    extra = Dataset.from_dict(columns, features=Features({name: Value("float64") for name in columns}))
    return concatenate_datasets([dataset, extra], axis=1)
