"""Every built-in scorer's prompt hash, recorded: a refactor that changes none must change no hash.

`Scorer.prompt_hash` (see `localjudge.scoring.versioning`) hashes everything a scorer sends its judge
and scores on the probe runs: system text, worked examples, rendered messages, schemas, token
budgets and the results. It is the prompt part of every stored result key, so a changed hash
means stored results are judged again. The table holds each scorer in every mode and a scale
other than 1 (the toxicity reason and every reason prompt show the scale); a scorer that needs
options (rubric's criteria) is built with those of `tests/scorer_options.py`.

A failure here after moving code means behaviour changed. After an intended prompt edit, put
the new hash in the table (results stored under the old one are then rescored, not resumed).
"""

from __future__ import annotations

import pytest

from localjudge import FakeJudge
from localjudge.scorers import SCORERS, build_scorer
from tests.scorer_options import OPTIONS

# (scorer, mode, scale) -> prompt_hash, recorded at commit 4d22001 (bias and answer_relevancy when added;
# rubric, with OPTIONS["rubric"], at bf19d1e).
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
    ("rubric", "pipeline", 1.0): "64854764c8b3",
    ("rubric", "pipeline", 10.0): "0e6a51f7a7d3",
    ("context_recall", "pipeline", 1.0): "32337d6a1c2a",
    ("context_recall", "pipeline", 10.0): "3e472d709cb3",
    ("context_recall", "direct", 1.0): "63ac71933465",
    ("context_recall", "direct", 10.0): "adce4fe10f04",
    ("context_relevance", "pipeline", 1.0): "6f1b4bb9d5a5",
    ("context_relevance", "pipeline", 10.0): "96c26ca584bb",
    ("answer_similarity", "pipeline", 1.0): "03f9e8ea9a8b",
    ("answer_similarity", "pipeline", 10.0): "ee3593614c8f",
    ("answer_similarity", "direct", 1.0): "00baa1ea8d0b",
    ("answer_similarity", "direct", 10.0): "c8e3603fb717",
    ("summarization", "pipeline", 1.0): "0df992cd4d32",
    ("summarization", "pipeline", 10.0): "6bb8117992a9",
    ("summarization", "direct", 1.0): "61cda34b470f",
    ("summarization", "direct", 10.0): "ab9478e2299d",
    ("prompt_alignment", "pipeline", 1.0): "d16a2117d4a3",
    ("prompt_alignment", "pipeline", 10.0): "b059d108794f",
    ("prompt_alignment", "direct", 1.0): "9e17c93e7a45",
    ("prompt_alignment", "direct", 10.0): "f8bb46f06e9d",
    ("multi_turn_judge", "pipeline", 1.0): "791a9cf93c74",
    ("multi_turn_judge", "pipeline", 10.0): "b9dcdc0a4137",
    ("tool_call_accuracy", "pipeline", 1.0): "e5b4d882d2db",
    ("tool_call_accuracy", "pipeline", 10.0): "fda62d183c32",
    ("tool_call_accuracy", "direct", 1.0): "cc187de6d033",
    ("tool_call_accuracy", "direct", 10.0): "03ea96a3be34",
    ("trajectory_accuracy", "pipeline", 1.0): "57f6aba45e67",
    ("trajectory_accuracy", "pipeline", 10.0): "d7f7391c39fe",
    ("noise_sensitivity", "pipeline", 1.0): "39eeab98b31a",
    ("noise_sensitivity", "pipeline", 10.0): "7cda190ba61b",
    ("noise_sensitivity", "direct", 1.0): "aa7f6713af6a",
    ("noise_sensitivity", "direct", 10.0): "650770e114d1",
    # Mastra's code scorers and checks (no judge: their formula on the probe runs and their options)
    ("completeness", "pipeline", 1.0): "b34f4db668f5",
    ("completeness", "pipeline", 10.0): "6b8a4cf623ee",
    ("content_similarity", "pipeline", 1.0): "29137463f424",
    ("content_similarity", "pipeline", 10.0): "1f1c75443ac5",
    ("keyword_coverage", "pipeline", 1.0): "2da4e5d08e13",
    ("keyword_coverage", "pipeline", 10.0): "9e3f7294d663",
    ("textual_difference", "pipeline", 1.0): "b1e618d47743",
    ("textual_difference", "pipeline", 10.0): "e76edea1eb8d",
    ("tone", "pipeline", 1.0): "db13d73807e0",
    ("tone", "pipeline", 10.0): "619b224b1de6",
    ("code_tool_call_accuracy", "pipeline", 1.0): "78a850c877b1",
    ("code_tool_call_accuracy", "pipeline", 10.0): "78a850c877b1",
    ("code_trajectory_accuracy", "pipeline", 1.0): "5aa1f9f6cb7c",
    ("code_trajectory_accuracy", "pipeline", 10.0): "5aa1f9f6cb7c",
    ("code_trajectory", "pipeline", 1.0): "9c08a41c8ea3",
    ("code_trajectory", "pipeline", 10.0): "9c08a41c8ea3",
    ("check_includes", "pipeline", 1.0): "71722baf09d7",
    ("check_includes", "pipeline", 10.0): "71722baf09d7",
    ("check_excludes", "pipeline", 1.0): "ab0c3eadc4ea",
    ("check_excludes", "pipeline", 10.0): "d9a3a8c866c9",
    ("check_equals", "pipeline", 1.0): "45fffec1d4d1",
    ("check_equals", "pipeline", 10.0): "45fffec1d4d1",
    ("check_matches", "pipeline", 1.0): "d7b47d2e5089",
    ("check_matches", "pipeline", 10.0): "d7b47d2e5089",
    ("check_similarity", "pipeline", 1.0): "27fa82833256",
    ("check_similarity", "pipeline", 10.0): "3d11dfcee0cd",
    ("check_called_tool", "pipeline", 1.0): "c240697dc785",
    ("check_called_tool", "pipeline", 10.0): "c240697dc785",
    ("check_did_not_call", "pipeline", 1.0): "2532541a98f0",
    ("check_did_not_call", "pipeline", 10.0): "d4e318d11064",
    ("check_tool_order", "pipeline", 1.0): "ef89261e5581",
    ("check_tool_order", "pipeline", 10.0): "ef89261e5581",
    ("check_max_tool_calls", "pipeline", 1.0): "454747fc87b0",
    ("check_max_tool_calls", "pipeline", 10.0): "29df2415896d",
    ("check_used_no_tools", "pipeline", 1.0): "26398ae8d33f",
    ("check_used_no_tools", "pipeline", 10.0): "26398ae8d33f",
    ("check_no_tool_errors", "pipeline", 1.0): "918243d1dfcc",
    ("check_no_tool_errors", "pipeline", 10.0): "d9c834f49503",
}


@pytest.mark.parametrize(("name", "mode", "scale"), list(HASHES), ids=lambda v: f"{v:g}" if isinstance(v, float) else v)
def test_the_prompt_hash_is_unchanged(name: str, mode: str, scale: float) -> None:
    scorer = build_scorer(name, FakeJudge({}), scale=scale, mode=mode, options=OPTIONS.get(name))
    assert scorer.prompt_hash == HASHES[name, mode, scale], (
        f"{name} ({mode}, scale {scale:g}): what it sends its judge or scores changed; "
        "if on purpose, record the new hash here")


def test_the_table_covers_every_built_in_scorer() -> None:
    """A new built-in scorer gets its rows too (scorers registered by tests are not built in)."""
    built_in = {name for name, factory in SCORERS.items() if factory.__module__.startswith("localjudge.scorers.")}
    assert {name for name, _, _ in HASHES} == built_in
