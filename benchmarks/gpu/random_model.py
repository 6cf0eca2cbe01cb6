"""A 7B-class architecture from its public config, with random bf16 weights made on the GPU.

Shared by `gpu_speed.py`, `gpu_invariance.py`, `gpu_engines.py` and `gpu_correctness.py`. A
module, not a script: importing it imports neither torch nor transformers and sets nothing. The
configs are in benchmarks/gpu/configs/ (see its README.md); no weights or tokenizer files are
downloaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from measure import DEFAULT_MODEL, ROOT

DEFAULT_CONFIG = ROOT / "benchmarks" / "gpu" / "configs" / "qwen2.5-7b-instruct"
FALLBACK_TOKENIZER = DEFAULT_MODEL  # SmolLM2's, when the config folder has none
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")


def pick_tokenizer(config_dir: Path, given: str | None) -> Path:
    """The tokenizer folder: `given`, else the config folder's own, else SmolLM2's."""
    if given:
        return Path(given)
    if any((config_dir / name).exists() for name in TOKENIZER_FILES):
        return config_dir
    return FALLBACK_TOKENIZER


def build_model(config_dir: Path, tokenizer: Any, seed: int, shard: bool = False, device: str = "cuda") -> Any:
    """The architecture of `config_dir/config.json` with random bf16 weights, made on the GPU;
    with `shard`, spread over every visible GPU by accelerate (as ``device_map="auto"`` would)
    when there are two or more."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(str(config_dir), local_files_only=True)
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.eval()
    if shard and torch.cuda.device_count() > 1:
        from accelerate import dispatch_model, infer_auto_device_map
        from accelerate.utils import get_balanced_memory

        no_split = model._no_split_modules
        memory = get_balanced_memory(model, no_split_module_classes=no_split)
        model = dispatch_model(model, device_map=infer_auto_device_map(model, max_memory=memory,
                                                                      no_split_module_classes=no_split))
    # The config's special-token ids are Qwen's; generation must stop on this tokenizer's.
    for key in ("eos_token_id", "pad_token_id", "bos_token_id"):
        value = getattr(tokenizer, key, None)
        if value is not None:
            setattr(model.config, key, value)
            setattr(model.generation_config, key, value)
    return model
