"""The dtype a model loads in (`localjudge.engines.transformers.model_config.load_dtype`)."""

from __future__ import annotations

import pytest


def test_load_dtype() -> None:
    import torch

    from localjudge.engines.transformers.model_config import load_dtype

    assert load_dtype("auto", on_cpu=True, gguf=False) is torch.float32
    assert load_dtype("auto", on_cpu=True, gguf=True) is torch.float32
    assert load_dtype("auto", on_cpu=False, gguf=False) == "auto", "a checkpoint's own dtype on a GPU"
    assert load_dtype("auto", on_cpu=False, gguf=True) in (torch.bfloat16, torch.float16), \
        "a GGUF file has no dtype: never float32 on a GPU"
    assert load_dtype("bfloat16", on_cpu=True, gguf=True) is torch.bfloat16
    with pytest.raises(ValueError, match="dtype must be 'auto' or a torch dtype name"):
        load_dtype("Tensor", on_cpu=True, gguf=False)
