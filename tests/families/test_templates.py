"""Every model family's real tokenizer and chat template against localjudge's prompts.

Tokenizers only, no model runs (seconds). The fixtures (`scripts/get_family_fixtures.py`, run by
`scripts/setup_fixtures.sh`) carry each family's real tokenizer files and chat template. The prompts are
the three first scorers' on a mixed run (two claims) and every prompt any registered scorer
sends on `FULL_RUN` (gathered once a session, `tests.families.by_schema`).
"""

from __future__ import annotations

from functools import cache

import pytest

from localjudge import faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.engines.chat_template import (
    TEMPLATE_KWARGS,
    common_prefix,
    fold_system,
    head_ids,
    head_text,
    prompt_ids,
    render,
    system_role_supported,
)
from localjudge.judge import ChatPrompt
from tests.fakes import make_fake_judge
from tests.families.by_schema import gathered
from tests.families.catalog import FAMILIES

pytestmark = pytest.mark.slow

RUN = {
    "input": "When was the Eiffel Tower completed?",
    "output": "It was completed in 1925. You are an idiot for asking.",
    "context": "The Eiffel Tower in Paris was completed in 1889.",
}
CLAIMS = {"claims": ["The Eiffel Tower was completed in 1925.", "The user is an idiot."]}
TWO = [{"verdict": "no", "reason": "r"}] * 2


@cache
def scorer_prompts() -> tuple[tuple[str, ChatPrompt], ...]:
    """Every prompt the three scorers send for one run (recorded on the fake judge), then every
    prompt each registered scorer's judge steps send on `FULL_RUN`, named by who sent it."""
    judge = make_fake_judge(
        Claims=CLAIMS,
        HallucinationVerdicts={"verdicts": [{"verdict": "supported", "reason": "r"}] * 2},
        FaithfulnessVerdicts={"verdicts": TWO},
        ToxicityVerdicts={"verdicts": [{"verdict": "no", "severity": "none", "reason": "r"}]},
        Reason={"reason": "r"},
    )
    for factory in (hallucination_scorer, faithfulness_scorer, toxicity_scorer):
        factory(judge).run(RUN)
    first = [(f"{name}#{i}", list(prompt))
             for call in judge.calls
             for i, (name, prompt) in enumerate(zip(call.schema_names, call.prompts, strict=True))]
    every = [("/".join(step), prompt) for row in gathered()
             for step, prompt in zip(row.asked_by, row.prompts, strict=True)]
    return tuple(first + every)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_instruction_once_in_the_models_own_template(family: str, family_tokenizer) -> None:
    tok = family_tokenizer(family)
    _, native_system, _ = FAMILIES[family]
    assert system_role_supported(tok) is native_system
    for step, prompt in scorer_prompts():
        text = render(tok, prompt, system_role=native_system)
        for message in prompt:  # system text, worked example, its answer, the data: once each
            assert text.count(message["content"].strip()) == 1, (family, step, message["role"])
        if family == "qwen3":
            assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n"), "thinking must be off"
        else:
            assert "<think>" not in text
        if family == "llama3":
            assert "Today Date: 26 Jul 2024" in text  # fixed: results do not change with the calendar


@pytest.mark.parametrize("family", FAMILIES)
def test_token_ids_are_the_templates_with_one_bos(family: str, family_tokenizer) -> None:
    tok = family_tokenizer(family)
    _, native_system, bos = FAMILIES[family]
    for _, prompt in scorer_prompts():
        ids = prompt_ids(tok, prompt, system_role=native_system)  # what the judge feeds the model
        chat = prompt if native_system else fold_system(prompt)
        expected = tok.apply_chat_template(chat, tokenize=True, add_generation_prompt=True, **TEMPLATE_KWARGS)
        expected = expected["input_ids"] if hasattr(expected, "keys") else expected
        assert ids == list(expected)
        if bos is None:
            assert tok.bos_token_id is None or tok.bos_token_id not in ids
        else:
            assert ids[0] == tok.convert_tokens_to_ids(bos) and ids.count(ids[0]) == 1, "exactly one BOS, first"


@pytest.mark.parametrize("family", FAMILIES)
def test_shared_prefix_is_the_instructions_and_examples(family: str, family_tokenizer) -> None:
    tok = family_tokenizer(family)
    _, native_system, _ = FAMILIES[family]
    for step, prompt in scorer_prompts():
        head = head_text(tok, prompt, system_role=native_system)
        text = render(tok, prompt, system_role=native_system)
        assert text.startswith(head) and prompt[0]["content"].strip() in head, (family, step)
        assert prompt[-1]["content"].strip() not in head
        head_tokens = head_ids(tok, prompt, system_role=native_system)
        ids = prompt_ids(tok, prompt, system_role=native_system)
        # a tokenizer may merge across the cut: at most the boundary token is lost
        assert common_prefix(head_tokens, [ids]) >= len(head_tokens) - 1, (family, step)
