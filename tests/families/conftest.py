"""The family tier's session-wide loads: tokenizers, llama.cpp's vocab GGUFs, GGUF judges.

Each is built once a session, whichever test asks first (a vocab GGUF's conversion takes ~20 s;
the family judges themselves come from `family_judge` in tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture(scope="session")
def family_tokenizer(family_dir: Callable[[str], Any]) -> Callable[[str], Any]:
    """`family_tokenizer(name)`: the family's own tokenizer (its tokenizer.json), loaded once."""
    from transformers import AutoTokenizer

    loaded: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in loaded:
            loaded[name] = AutoTokenizer.from_pretrained(str(family_dir(name)), local_files_only=True)
        return loaded[name]

    return get


@pytest.fixture(scope="session")
def vocab_gguf_tokenizer(family_manifest: dict) -> Callable[[str], Any]:
    """`vocab_gguf_tokenizer(vocab)`: transformers' tokenizer read from llama.cpp's vocab-only
    GGUF `vocab` (a `vocab_ggufs` key of the manifest), converted once a session."""
    from transformers import AutoTokenizer

    from tests.conftest import FIXTURES

    loaded: dict[str, Any] = {}

    def get(vocab: str) -> Any:
        if vocab not in loaded:
            gguf = FIXTURES / family_manifest["vocab_ggufs"][vocab]
            loaded[vocab] = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, local_files_only=True)
        return loaded[vocab]

    return get


@pytest.fixture(scope="session")
def gguf_judge(family_manifest: dict) -> Callable[[str], Any]:
    """`gguf_judge(family)`: a TransformersJudge loaded from the family's `.gguf` file, once."""
    from localjudge.engines.transformers.judge import TransformersJudge
    from tests.conftest import FIXTURES

    loaded: dict[str, Any] = {}

    def get(family: str) -> Any:
        if family not in loaded:
            entry = next(f for f in family_manifest["families"] if f["name"] == family)
            assert entry["gguf"], f"{family} should have a GGUF fixture"
            loaded[family] = TransformersJudge.load(FIXTURES / entry["gguf"], dtype="float32")
        return loaded[family]

    return get
