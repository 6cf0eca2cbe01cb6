"""A call mixing several scorers' prompts (issue 47's one schedule) decodes per group of prompts
that share their instructions, each on its own cached prefix (`prefix_groups`): the same tokens as
each group's own call, every group's instructions prefilled once, rows answered in their order."""

from __future__ import annotations

from typing import Any

from localjudge.engines.transformers.prefix_cache import MIN_PREFIX, prefix_groups
from localjudge.judge import ChatPrompt, Generation
from localjudge.scorers.judged.claims import Claims
from localjudge.scoring.schemas import Reason
from tests.engines.decoding import RUNS, same_tokens, small_judge

CLAIMS = "You list claims for a living. Reply in JSON, one short fact per claim, in the answer's words."
REASONS = "You explain scores for a living. Reply in JSON with one short reason, and never more than that."


def asked(system: str) -> list[ChatPrompt]:
    return [[{"role": "system", "content": system}, {"role": "user", "content": f"Judge this: {run['output']}"}]
            for run in RUNS]


def calls_of(judge: Any) -> list[int]:
    """Record the rows of each decode the judge runs."""
    sizes: list[int] = []
    inner = judge._generate

    def record(prefix: list[int], suffixes: list[list[int]], *args: Any) -> list[Generation]:
        sizes.append(len(suffixes))
        return inner(prefix, suffixes, *args)

    judge._generate = record
    return sizes


def test_a_merged_call_decodes_each_scorers_rows_on_their_own_prefix() -> None:
    judge = small_judge()
    claims, reasons = asked(CLAIMS), asked(REASONS)
    own = [judge.generate(claims, [Claims] * 3, max_new_tokens=40),
           judge.generate(reasons, [Reason] * 3, max_new_tokens=40)]
    judge.prefixes.entries.clear()
    sizes = calls_of(judge)
    # interleaved, as rounds of several scorers' steps never are, to check the order is kept
    merged = judge.generate([claims[0], reasons[0], claims[1], reasons[1], claims[2], reasons[2]],
                            [Claims, Reason] * 3, max_new_tokens=40)
    same_tokens([merged[0::2], merged[1::2]], own)
    assert sizes == [3, 3], "one decode per scorer's instructions"
    assert len(judge.prefixes.entries) == 2 and all(len(k) > 20 for k in judge.prefixes.entries), \
        "each scorer's instructions cached, not the few template tokens the six rows share"


def test_rows_without_a_prefix_worth_caching_decode_together() -> None:
    judge = small_judge()
    short = [[{"role": "system", "content": "Hi."}, {"role": "user", "content": run["output"]}] for run in RUNS]
    plain = [[{"role": "user", "content": run["output"]}] for run in RUNS]
    prompts = [*asked(CLAIMS)[:2], short[0], plain[0], short[1]]
    ids = [judge.prompt_ids(p) for p in prompts]
    groups = prefix_groups(judge.tokenizer, judge.system_role, judge._windows, prompts, ids, range(5), 40)
    assert [rows for _, rows in groups] == [[0, 1], [2, 3, 4]]
    assert len(groups[0][0]) >= MIN_PREFIX and groups[1][0] == []
    none = prefix_groups(judge.tokenizer, judge.system_role, None, prompts, ids, range(5), 40)
    assert none == [([], [0, 1, 2, 3, 4])], "no prefix cache: one plain decode"
