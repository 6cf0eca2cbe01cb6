"""A run's summary table: one row per scorer (its direction, mean scores, counts, speed), the
notes printed under it, and the markdown the commands print it as."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localjudge.evaluation import ScorerSummary
from localjudge.scorers import build_scorer


def higher_is_better(name: str, scale: float = 1.0, mode: str = "pipeline", options: Mapping[str, Any] | None = None,
                     compat: str = "localjudge") -> bool | None:
    """The direction of the scorer registered as `name` (built without a judge: no model), None
    when it has none or cannot be built so."""
    try:
        return build_scorer(name, None, scale=scale, mode=mode, options=options, compat=compat).higher_is_better
    except ValueError:
        return None


def better(higher: bool | None) -> str:
    """The summary's `better` cell: which way a good score points."""
    return "" if higher is None else "higher" if higher else "lower"


# Printed under a run's summary (stderr): what its columns mean, and what the default model is for.
SUMMARY_NOTE = ("better: which way a good score lies (toxicity, hallucination, bias: lower). mean_prob_score: the same "
                "score from the judge's label probabilities, graded where the verdicts are yes/no.")
DEFAULT_MODEL = "smollm2-135m-instruct"  # scripts/setup.sh's model: it proves the plumbing, it does not judge
WEAK_JUDGE_NOTE = ("the default model (SmolLM2-135M) proves the plumbing, not the verdicts: its scores are near chance "
                   "(a harmless row can get toxicity 1). For a judge whose scores mean something: docs/models.md")


def summary_notes(model: str | None, judged: bool) -> list[str]:
    """The lines under a summary: the columns explained, and a word on the default model when it judged."""
    notes = [SUMMARY_NOTE] if judged else [SUMMARY_NOTE.split(". mean_prob_score")[0] + "."]
    if judged and model and Path(model).name == DEFAULT_MODEL:
        notes.append(WEAK_JUDGE_NOTE)
    return notes


def summary_rows(summary: dict[str, ScorerSummary],
                 directions: Mapping[str, bool | None] | None = None) -> list[dict[str, Any]]:
    """One row per scorer. `directions`: each scorer's `higher_is_better` by name (one not given is
    read off the registry's scorer of that name, built with its defaults)."""
    rows = []
    for s in summary.values():
        fresh = s.scored + s.unscored + s.not_scorable - s.resumed
        higher = (directions or {}).get(s.scorer) if s.scorer in (directions or {}) else higher_is_better(s.scorer)
        rows.append({
            "scorer": s.scorer, "better": better(higher), "mean_score": s.mean_score,
            "mean_prob_score": s.mean_prob_score,
            "scored": s.scored, "unscored": s.unscored, "not_scorable": s.not_scorable, "resumed": s.resumed,
            "seconds": s.seconds,
            "rows_per_s": round(fresh / s.seconds, 3) if s.seconds and fresh else None,
            "tokens_per_s": round(s.new_tokens / s.seconds, 1) if s.seconds and fresh else None,
        })
    return rows


def markdown_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join("" if r[h] is None else str(r[h]) for h in head) + " |" for r in rows]
    return "\n".join(lines)


