"""The families' tokenizers against the reference implementations: sentencepiece, llama.cpp's GGUF vocabs."""

from __future__ import annotations

import pytest

from tests.families.catalog import GGUF_VOCABS
from tests.families.runs import RUNS

pytestmark = pytest.mark.slow


def test_mistral_tokenizer_equals_sentencepiece(family_dir, family_tokenizer) -> None:
    """The HF tokenizer converted from Mistral's v3 SentencePiece model tokenizes as it does,
    except runs of spaces (a known difference of HF's conversion: same text, other pieces)."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(family_dir("mistral") / "tokenizer.model"))
    tok = family_tokenizer("mistral")
    texts = ["It was completed in 1925. You are an idiot for asking.",
             "The Eiffel Tower in Paris was completed in 1889.", "naïve café — 東京 🚀\n\nindented\ttab",
             '{"verdicts":[{"verdict":"yes"}]}']
    for text in texts:
        assert tok(text, add_special_tokens=False).input_ids == sp.encode(text)
    spaced = "a  b\n\n  indented"
    assert tok(spaced, add_special_tokens=False).input_ids != sp.encode(spaced)  # if this fails, HF fixed it
    assert tok.decode(tok(spaced, add_special_tokens=False).input_ids) == sp.decode(sp.encode(spaced)) == spaced
    assert tok.convert_tokens_to_ids(["[INST]", "[/INST]"]) == [3, 4]


TEXTS = [
    RUNS[0]["output"], '{"verdicts":[{"verdict":"yes","reason":"Not in the context."}]}',
    "naïve café — 東京 🚀\n\n  indented\ttab", "<|im_start|>user\nhi<|im_end|> [INST] <s>",
]


@pytest.mark.parametrize("family", GGUF_VOCABS)
def test_tokenizer_equals_llama_cpp_vocab_gguf(family: str, family_tokenizer, vocab_gguf_tokenizer) -> None:
    """transformers' tokenizer from llama.cpp's vocab-only GGUF of the family tokenizes as the
    family's tokenizer.json does (the GGUF path loads the same tokenizer)."""
    from_gguf, own = vocab_gguf_tokenizer(GGUF_VOCABS[family]), family_tokenizer(family)
    for text in TEXTS:
        assert from_gguf(text, add_special_tokens=False).input_ids == own(text, add_special_tokens=False).input_ids
