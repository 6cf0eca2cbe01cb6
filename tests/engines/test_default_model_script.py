"""scripts/get_default_model.py loads the GGUF without transformers' float32 note (a warning
`setup.sh` printed that its user cannot act on: the script dequantizes once and saves bf16), and
keeps every other message of that logger. Run on transformers' own GGUF loader."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from types import ModuleType

from tests.conftest import ROOT


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("get_default_model", ROOT / "scripts" / "get_default_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notes(quiet: bool) -> list[str]:
    """What transformers' GGUF loader logs when asked for bf16 on packed weights (the script's load)."""
    import torch
    from transformers.quantizers.quantizer_gguf import GgufHfQuantizer
    from transformers.utils.quantization_config import GgufConfig

    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger(script().GGUF_LOGGER)
    logger.addHandler(handler)
    try:
        quantizer = GgufHfQuantizer(GgufConfig())
        quantizer.supported = True
        with script().without_packed_dtype_note() if quiet else contextlib.nullcontext():
            quantizer.update_dtype(torch.bfloat16)
            logger.warning("another note")
    finally:
        logger.removeHandler(handler)
    return seen


def test_the_float32_note_is_dropped_and_nothing_else() -> None:
    loud = notes(quiet=False)
    assert len(loud) == 2 and "Pass `dtype=torch.float32`" in loud[0]  # transformers still says it unfiltered
    assert notes(quiet=True) == ["another note"]
