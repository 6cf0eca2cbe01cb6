"""The transformers engine's context window (`context_window`): the limit is the declared length,
or `max_context` (``--max-context``, a sweep's ``max_context``: tests/unit/cli/test_max_context.py)
when given, and a model that declares none is refused rather than treated as unlimited. A
too-long row's result is not stored (tests/unit/evaluation/test_too_long_rows.py); the real
model's window: tests/model/test_context_window.py.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from localjudge.engines.transformers.judge import context_window

UNLIMITED = SimpleNamespace(model_max_length=int(1e30))  # what tokenizers say when they do not know


@pytest.mark.parametrize(("config", "tokenizer", "expected"), [
    (SimpleNamespace(max_position_embeddings=8192), UNLIMITED, 8192),
    (SimpleNamespace(text_config=SimpleNamespace(max_position_embeddings=131072)), UNLIMITED, 131072),
    (SimpleNamespace(n_positions=1024), UNLIMITED, 1024),
    (SimpleNamespace(), SimpleNamespace(model_max_length=2048), 2048),
])
def test_the_declared_length_is_the_limit(config: Any, tokenizer: Any, expected: int) -> None:
    assert context_window(config, tokenizer) == expected


def test_no_declared_length_is_refused_not_unlimited() -> None:
    with pytest.raises(ValueError, match=r"declares no context length .* max_context= \(--max-context N\)"):
        context_window(SimpleNamespace(max_position_embeddings=None), UNLIMITED)
    assert context_window(SimpleNamespace(), UNLIMITED, 4096) == 4096


def test_an_explicit_limit_wins_and_is_checked(caplog: pytest.LogCaptureFixture) -> None:
    assert context_window(SimpleNamespace(max_position_embeddings=8192), UNLIMITED, 1024) == 1024
    assert context_window(SimpleNamespace(max_position_embeddings=8192), UNLIMITED, 16384) == 16384
    assert "beyond the 8192 tokens the model declares" in caplog.text
    for bad in (0, -5, True, 2.5):
        with pytest.raises(ValueError, match="max_context must be a positive number"):
            context_window(SimpleNamespace(max_position_embeddings=8192), UNLIMITED, bad)  # type: ignore[arg-type]
