"""The repetition guard inside the transformers engine's row grammars, on real tokenizers (the
family fixtures'): it follows the text as the tokens write it, leading spaces included."""

from __future__ import annotations

import pytest
import torch


@pytest.mark.parametrize("family", ["mistral", "qwen2"])
def test_the_guard_reads_words_through_any_tokenizer(family: str, family_dir) -> None:
    """The guard follows the text as the tokens write it, leading spaces included: a
    SentencePiece token decoded alone drops its space, and "toy toy toy toy" would never loop."""
    import llguidance.hf
    from transformers import AutoTokenizer

    from localjudge.engines.transformers.row_grammars import RowGrammars

    tokenizer = AutoTokenizer.from_pretrained(family_dir(family))
    rows = RowGrammars(llguidance.hf.from_tokenizer(tokenizer), ['start: /.*/'], [{}], tokenizer,
                       closers=torch.zeros(len(tokenizer), dtype=torch.bool))
    text = '{"reason":"The toy is red. toy toy toy toy'
    for token in tokenizer.encode(text, add_special_tokens=False):
        rows.feed(0, token)
    assert rows.strings[0].text.endswith("red. toy toy toy toy")
    assert rows.strings[0].looping
