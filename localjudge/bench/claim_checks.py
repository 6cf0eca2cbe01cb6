"""What a bench report adds for claim scorers: where the claims come from, and each route alone.

A claim scorer (hallucination, faithfulness) reads a terse output (at most `WORDS_PER_CLAIM`
words: "25 June 1961") as one claim, by rule, and sends a longer one through the judge's claims
step. Two checks follow:

- `tally_claims` / `count_claim_sources`: the claims step's claims, by where their content
  words come from (the output, also the question, neither), the terse rows counted apart.
- `route_rows`: the judge's AUCs on each route's rows alone, next to output length's. Where the
  label goes with length (HaluEval: correct answers terse, hallucinated ones whole sentences),
  an AUC over the mixed rows can come from the route rather than from judgment. A row's route is
  the pipeline's rule applied to it (`claims_rule`), so a direct-mode run splits the same rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from localjudge.bench.metrics import claim_sources, output_length
from localjudge.bench.types import JUDGE, JUDGE_PROB, Estimate, RouteRow
from localjudge.samples import Sample
from localjudge.scoring import JudgeStep, Scorer, StepFunction

ROUTES = ("terse: one claim by rule", "claims step")


def tally_claims(counts: Counter[str], step: Any, output: str, question: str) -> None:
    """Add one scored row's claims step (its `preprocess_step_result`) to `counts`: its claims
    by where their content words come from (see `metrics.claim_sources`) and whether it hit the
    claim cap. A terse output's one claim is made by rule, not by the judge: counted apart.
    Anything but a claims step is left out."""
    if not isinstance(step, dict) or "claims" not in step:
        return
    if step.get("terse"):
        counts["terse rows"] += 1
        return
    counts["rows"] += 1
    counts["capped rows"] += "claim_cap" in step
    for claim in step["claims"]:
        counts["claims"] += 1
        counts[f"from {claim_sources(claim, output, question)}"] += 1


def count_claim_sources(results: Sequence[Any], samples: Sequence[Any]) -> dict[str, int]:
    """`tally_claims` over the scored rows; empty for scorers without a claims step."""
    counts: Counter[str] = Counter()
    for result, sample in zip(results, samples, strict=True):
        if result.scored:
            tally_claims(counts, result.preprocess_step_result, sample.output, sample.input)
    return dict(counts)


def claims_rule(pipeline: Scorer) -> StepFunction | None:
    """The rule that routes a row past the judge's claims step (the scorer in pipeline mode),
    or None for a scorer without one (toxicity, most scorers of your own)."""
    step = pipeline.preprocess_step
    return step.by_rule if isinstance(step, JudgeStep) else None


def route_rows(rule: StepFunction, samples: Mapping[int, Sample], judged: Mapping[str, list[int]],
               score: Callable[[str, int], float], labels: Sequence[int],
               estimate: Callable[[list[float], list[int]], Estimate]) -> list[RouteRow]:
    """Per route, on the scored rows (`samples`, by row index) it takes: rows, label-1 rows, and
    the AUC of each judge score in `judged` (``score(name, row)``) and of output length."""
    terse = {i for i, sample in samples.items() if rule(sample, {}) is not None}
    table = []
    for route, on_route in zip(ROUTES, (terse, set(samples) - terse), strict=True):
        kept = sorted(on_route)
        y = [labels[i] for i in kept]
        mine = {name: [i for i in rows if i in on_route] for name, rows in judged.items()}  # each score's rows
        aucs = {name: estimate([score(name, i) for i in rows], [labels[i] for i in rows])
                for name, rows in mine.items()}
        table.append(RouteRow(route, len(kept), sum(y), aucs[JUDGE], aucs.get(JUDGE_PROB),
                              estimate([output_length(samples[i].output) for i in kept], y)))
    return table
