"""Every built-in scorer's prompt hash, recorded: a refactor that changes none must change no hash.

`Scorer.prompt_hash` (see `localjudge.versioning`) hashes everything a scorer sends its judge
and scores on the probe runs: system text, worked examples, rendered messages, schemas, token
budgets and the results. It is the prompt part of every stored result key, so a changed hash
means stored results are judged again. The table holds each scorer in every mode and a scale
other than 1 (the toxicity reason and every reason prompt show the scale).

A failure here after moving code means behaviour changed. After an intended prompt edit, put
the new hash in the table (results stored under the old one are then rescored, not resumed).
"""

from __future__ import annotations

import pytest

from localjudge import FakeJudge
from localjudge.scorers import SCORERS, build_scorer

# (scorer, mode, scale) -> prompt_hash, recorded at commit 4d22001 (bias and answer_relevancy when added).
HASHES = {
    ("hallucination", "pipeline", 1.0): "e380ef320a80",
    ("hallucination", "pipeline", 10.0): "68e42dc03da6",
    ("hallucination", "direct", 1.0): "b71d24d6c612",
    ("hallucination", "direct", 10.0): "485e68bac68b",
    ("faithfulness", "pipeline", 1.0): "ed70f0669b76",
    ("faithfulness", "pipeline", 10.0): "21c4a9ebd0f3",
    ("faithfulness", "direct", 1.0): "4393f93b5268",
    ("faithfulness", "direct", 10.0): "302f63cc905c",
    ("toxicity", "pipeline", 1.0): "f67649690aa4",
    ("toxicity", "pipeline", 10.0): "87ae9ad1bf7c",
    ("toxicity", "direct", 1.0): "a7dd12b49553",
    ("toxicity", "direct", 10.0): "e66c42b08bd5",
    ("answer_relevancy", "pipeline", 1.0): "da91e17a217b",
    ("answer_relevancy", "pipeline", 10.0): "3b9ac6b2dab3",
    ("answer_relevancy", "direct", 1.0): "741912cd17af",
    ("answer_relevancy", "direct", 10.0): "a9777aa28096",
    ("bias", "pipeline", 1.0): "ca7df6315453",
    ("bias", "pipeline", 10.0): "f5305c3abc70",
    ("bias", "direct", 1.0): "9d1b75630718",
    ("bias", "direct", 10.0): "32eaa7d58bff",
    ("context_precision", "pipeline", 1.0): "34221017181e",
    ("context_precision", "pipeline", 10.0): "3f265f4cfb4f",
}


@pytest.mark.parametrize(("name", "mode", "scale"), list(HASHES), ids=lambda v: f"{v:g}" if isinstance(v, float) else v)
def test_the_prompt_hash_is_unchanged(name: str, mode: str, scale: float) -> None:
    scorer = build_scorer(name, FakeJudge({}), scale=scale, mode=mode)
    assert scorer.prompt_hash == HASHES[name, mode, scale], (
        f"{name} ({mode}, scale {scale:g}): what it sends its judge or scores changed; "
        "if on purpose, record the new hash here")


def test_the_table_covers_every_built_in_scorer() -> None:
    """A new built-in scorer gets its rows too (scorers registered by tests are not built in)."""
    built_in = {name for name, factory in SCORERS.items() if factory.__module__.startswith("localjudge.scorers.")}
    assert {name for name, _, _ in HASHES} == built_in
