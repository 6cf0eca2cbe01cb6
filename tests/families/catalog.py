"""The model families the tier checks, and which of them have GGUF files.

Each family is a tiny random-weight fixture with the real tokenizer and chat template
(`scripts/get_family_fixtures.py`, run by `scripts/setup_fixtures.sh`, builds them into models/fixtures).
"""

from __future__ import annotations

# name -> (architecture, template renders a system role itself, BOS the template starts with)
FAMILIES: dict[str, tuple[str, bool, str | None]] = {
    "llama3": ("LlamaForCausalLM", True, "<|begin_of_text|>"),
    "qwen2": ("Qwen2ForCausalLM", True, None),
    "qwen3": ("Qwen3ForCausalLM", True, None),
    "mistral": ("MistralForCausalLM", True, "<s>"),
    "mistral-nemo-template": ("MistralForCausalLM", True, "<s>"),
    "gemma2": ("Gemma2ForCausalLM", False, "<bos>"),  # 'System role not supported': folded by us
    "gemma3": ("Gemma3ForCausalLM", True, "<bos>"),  # its template folds the system text itself
    "gemma3-vlm": ("Gemma3ForConditionalGeneration", True, "<bos>"),
    "phi3": ("Phi3ForCausalLM", True, None),
}

# family -> llama.cpp's vocab-only GGUF of its tokenizer (manifest key `vocab_ggufs`)
GGUF_VOCABS = {"llama3": "llama-bpe", "qwen2": "qwen2", "qwen3": "qwen2", "phi3": "phi-3"}
# The families whose whole fixture llama.cpp's converter can write as a GGUF file here.
GGUF_FAMILIES = ["llama3", "qwen2", "qwen3", "mistral"]
