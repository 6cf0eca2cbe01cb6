"""localjudge's own decode loop on each family's architecture gives `generate`'s tokens."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from localjudge.scorers.judged.claims import Claims
from localjudge.scorers.judged.hallucination import HallucinationVerdicts
from localjudge.scoring.schemas import Reason
from tests.families.catalog import FAMILIES
from tests.families.runs import MEDIUM, SHARED_INSTRUCTIONS

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("family", FAMILIES)
def test_decode_loop_gives_generates_tokens(family: str, family_judge) -> None:
    """`generate`'s tokens for rows of three schemas in one call, cut off or finished, with the
    shared prefix cached, all rows at once and two at a time."""
    from tests.engines.decoding import both_decoders, same_tokens

    loop, fallback = both_decoders(family_judge(family))
    assert loop.decoder == "loop", f"{family} is plain attention: the loop is its decoder"
    prompts = [[{"role": "system", "content": SHARED_INSTRUCTIONS}, {"role": "user", "content": q}]
               for q in ("Is it tall?", "Where is the tower, and when was it finished?", MEDIUM)]
    schemas: list[type[BaseModel]] = [Claims, HallucinationVerdicts, Reason]
    two_at_a_time = loop.variant(max_rows=2)
    for budget in (9, 48):
        want = fallback.generate(prompts, schemas, max_new_tokens=budget)
        same_tokens([loop.generate(prompts, schemas, max_new_tokens=budget)], [want])
        # The third row joins when one finishes (full attention) or runs in a second chunk.
        same_tokens([two_at_a_time.generate(prompts, schemas, max_new_tokens=budget)], [want])
