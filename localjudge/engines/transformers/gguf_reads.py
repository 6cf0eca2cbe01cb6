"""One read of a GGUF file's metadata per load, where transformers would make three.

For the architectures its fast GGUF reader does not cover (llama, mistral, qwen2, qwen3, ...),
transformers loads a `.gguf` file through `load_gguf_checkpoint` three times: for the tokenizer's
config, for the model's config, and for the weights. Each builds a `gguf.GGUFReader`, which parses
every metadata field, a 150k-token vocabulary included, item by item (about 20 s on 2 CPU cores),
and then converts every field again. Inside `read_once(path)` the reader of that file is built
once and the metadata-only result (`return_tensors=False`) computed once, each caller getting its
own copy: a Qwen2 fixture's load goes from three reads to one. Nothing else changes: other files,
and everything outside the block, take transformers' own path.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def read_once(path: Path) -> Iterator[None]:
    """Within the block, `gguf.GGUFReader(path)` and the metadata-only `load_gguf_checkpoint(path)`
    are computed once (other paths pass through). transformers imports both at call time, from
    these modules, so replacing the modules' attributes for the block is enough."""
    import gguf
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    target = Path(path).resolve()
    readers: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    reader_class: Callable[..., Any] = gguf.GGUFReader
    load_checkpoint: Callable[..., dict[str, Any]] = gguf_utils.load_gguf_checkpoint

    def ours(file: Any) -> bool:
        return Path(file).resolve() == target

    def reader(file: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not ours(file):
            return reader_class(file, *args, **kwargs)
        if "reader" not in readers:
            readers["reader"] = reader_class(file)
        return readers["reader"]

    def checkpoint(file: Any, return_tensors: bool = False, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if return_tensors or args or kwargs or not ours(file):
            return load_checkpoint(file, return_tensors, *args, **kwargs)
        if "parsed" not in metadata:
            metadata["parsed"] = load_checkpoint(file, False)
        return copy.deepcopy(metadata["parsed"])

    gguf.GGUFReader, gguf_utils.load_gguf_checkpoint = reader, checkpoint
    try:
        yield
    finally:
        gguf.GGUFReader, gguf_utils.load_gguf_checkpoint = reader_class, load_checkpoint
