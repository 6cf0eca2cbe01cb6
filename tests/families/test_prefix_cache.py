"""The shared-prefix KV cache on each family's real architecture, and the sliding-window rule.

The cache is checked against plain full-prompt forwards: logits, not tokens (random weights
make near-ties common).
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from localjudge.engines.chat_template import common_prefix, head_ids
from localjudge.judge import ChatPrompt
from localjudge.scorers.judged.claims import Claims
from localjudge.scoring.schemas import Reason, token_budget
from tests.families.catalog import FAMILIES
from tests.families.runs import LONG, MEDIUM, SHARED_INSTRUCTIONS, SHORT, recorded_prompts

pytestmark = pytest.mark.slow


def cached_vs_full(judge: Any, prompts: list[ChatPrompt], prefix: list[int], steps: int = 4) -> list[float]:
    """Per row: the largest |logit difference|, relative to the largest |logit|, between the
    batched call (cached prefix, padding between prefix and row) and a plain forward of that
    row's full prompt plus the tokens generated, at each of `steps` generation steps."""
    ids = [judge.prompt_ids(p) for p in prompts]
    with torch.inference_mode():
        inputs = judge.batch_inputs(prefix, [row[len(prefix):] for row in ids])
        out = judge.model.generate(
            **inputs, max_new_tokens=steps, min_new_tokens=steps, do_sample=False, output_logits=True,
            return_dict_in_generate=True, pad_token_id=judge.tokenizer.pad_token_id,
        )
        batched = torch.stack(out.logits, dim=1).float()  # rows x steps x vocab
        new = out.sequences[:, inputs["input_ids"].shape[1]:]
        errors = []
        for row, row_ids in enumerate(ids):
            full = torch.tensor([row_ids + new[row, : steps - 1].tolist()], device=judge.model.device)
            plain = judge.model(input_ids=full).logits[0, -steps:].float()
            errors.append(((batched[row] - plain).abs().max() / plain.abs().max()).item())
    return errors


@pytest.mark.parametrize("family", FAMILIES)
def test_prefix_cache_equals_full_prompt(family: str, family_judge) -> None:
    judge = family_judge(family)
    prompts = recorded_prompts([SHORT, MEDIUM])
    for schema, budget in (("Claims", token_budget(Claims)), ("Reason", token_budget(Reason))):
        rows = prompts[schema]
        ids = [judge.prompt_ids(p) for p in rows]
        prefix = judge._shared_prefix(rows, ids, budget)
        window = min((w for w in judge._windows or [] if w is not None), default=None)
        span = max(len(i) for i in ids) + budget
        assert bool(prefix) == (window is None or span <= window), f"{family}/{schema}: the window rule"
        assert max(cached_vs_full(judge, rows, prefix)) < 1e-5, (family, schema, len(prefix))
    if judge._windows and any(w is not None for w in judge._windows):  # the cached path under a window
        short = [[{"role": "system", "content": SHARED_INSTRUCTIONS}, {"role": "user", "content": q}]
                 for q in ("Is it tall?", "Where is the tower, and when was it finished?")]
        ids = [judge.prompt_ids(p) for p in short]
        prefix = judge._shared_prefix(short, ids, 16)
        assert prefix, f"{family}: short rows inside the window should use the cache"
        assert max(cached_vs_full(judge, short, prefix)) < 1e-5, (family, "short", len(prefix))


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.startswith("gemma")])
def test_sliding_window_turns_the_prefix_cache_off_and_must(family: str, family_judge) -> None:
    """Rows longer than Gemma's sliding window: the cache is off (plain left padding matches the
    full prompt), and forcing it on would be wrong — the padding between prefix and row would
    push the start of the prefix out of the window."""
    judge = family_judge(family)
    (short,) = recorded_prompts([SHORT])["Claims"]
    # the claims prompt of LONG asked whole (the scorer now asks an output over 64 words in parts,
    # each inside the window): a row longer than the window, the same instructions as SHORT's
    long = [*short[:-1], {**short[-1], "content": short[-1]["content"].replace(SHORT, LONG)}]
    assert LONG in long[-1]["content"]
    rows = [short, long]
    ids = [judge.prompt_ids(p) for p in rows]
    assert judge._shared_prefix(rows, ids, token_budget(Claims)) == []
    assert max(cached_vs_full(judge, rows, [])) < 1e-5
    head = head_ids(judge.tokenizer, rows[0], system_role=judge.system_role)
    forced = head[: common_prefix(head, ids)]
    assert max(cached_vs_full(judge, rows, forced)) > 1e-3, "the window rule guards a real difference"
