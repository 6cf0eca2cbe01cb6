"""What a model's config says that the judge needs: its context length, its attention windows,
the dtype to load it in; and which errors mean the accelerator ran out of memory."""

from __future__ import annotations

import logging
from typing import Any

import torch

log = logging.getLogger(__name__)


def declared_context(config: Any, tokenizer: Any) -> int | None:
    """The context length the model's config (or tokenizer) declares, or None."""
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, key, None) or getattr(getattr(config, "text_config", None), key, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    return int(limit) if isinstance(limit, int) and 0 < limit < 10**9 else None


def context_window(config: Any, tokenizer: Any, max_context: int | None = None) -> int:
    """The longest prompt plus answer the judge will run: `max_context` if given, else the
    declared length. A model that declares none is refused: never assume it is unlimited."""
    declared = declared_context(config, tokenizer)
    if max_context is not None:
        if isinstance(max_context, bool) or not isinstance(max_context, int) or max_context < 1:
            raise ValueError(f"max_context must be a positive number of tokens, got {max_context!r}")
        if declared is not None and max_context > declared:
            log.warning("max_context %d is beyond the %d tokens the model declares", max_context, declared)
        return max_context
    if declared is None:
        raise ValueError(
            "the model declares no context length (no max_position_embeddings in its config, no "
            "model_max_length in its tokenizer): give one with max_context= (--max-context N)"
        )
    return declared


# Out-of-memory errors that do not come as torch.OutOfMemoryError (the caching allocator's):
# cuBLAS's workspace, a kernel launch, the CUDA driver.
OUT_OF_MEMORY_MESSAGES = ("CUBLAS_STATUS_ALLOC_FAILED", "CUDA error: out of memory", "CUDNN_STATUS_ALLOC_FAILED")


def out_of_memory_error(error: BaseException) -> bool:
    """Whether `error` says the accelerator ran out of memory."""
    return isinstance(error, torch.OutOfMemoryError) or any(m in str(error) for m in OUT_OF_MEMORY_MESSAGES)


def attention_windows(config: Any, context: int | None = None) -> list[int | None] | None:
    """Per decoder layer, its attention window (None: full attention), read the way
    transformers builds its cache; None when a layer is not plain attention (recurrent,
    convolutional, compressed...), where a cached prefix followed by padding is not exact.

    A window at least as long as `context` (the longest prompt plus answer the judge runs)
    never slides: that layer is full attention (Phi-3.5-mini declares a 262144-token window).
    """
    from transformers.cache_utils import get_layer_types_and_kwargs

    layer_types, kwargs = get_layer_types_and_kwargs(config.get_text_config(decoder=True))
    windows: list[int | None] = []
    for layer_type, extra in zip(layer_types, kwargs, strict=True):
        if layer_type == "full_attention":
            windows.append(None)
        elif layer_type == "sliding_attention" and isinstance(extra.get("sliding_window"), int):
            window = extra["sliding_window"]
            windows.append(None if context is not None and window >= context else window)
        else:
            return None
    return windows


def load_dtype(dtype: str, *, on_cpu: bool, gguf: bool) -> Any:
    """The dtype `from_pretrained` gets for `TransformersJudge.load`'s `dtype`.

    ``"auto"`` is float32 on CPU (batched results then equal one-by-one results bit for bit);
    on a GPU the checkpoint's own dtype, except for a GGUF file, which has none (transformers
    dequantizes it to float32, twice the memory and half the speed of bf16): bfloat16 where
    the GPU has it, else float16. A name (``"bfloat16"``) is that dtype.
    """
    if dtype != "auto":
        chosen = getattr(torch, dtype, None)
        if not isinstance(chosen, torch.dtype):
            raise ValueError(f"dtype must be 'auto' or a torch dtype name like 'bfloat16', got {dtype!r}")
        return chosen
    if on_cpu:
        return torch.float32
    if gguf:
        bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        return torch.bfloat16 if bf16 else torch.float16
    return "auto"
