"""The shared prefix of a call's prompts (instructions and worked examples), prefilled once per
process: which tokens it is (`shared_prefix`), how a call mixing several scorers' prompts splits
into groups that each share one (`prefix_groups`), its KV cache and the call's model inputs built
on it (`PrefixCache`). Exact: the cached prefix is the same tokens every full prompt starts
with, and it is used only where the architecture's attention makes that so."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch

from localjudge.engines import chat_template
from localjudge.judge import ChatPrompt

MIN_PREFIX = 16  # tokens: less is not worth a cache entry
KEEP = 8  # prefixes cached per process (one per scorer step, a few scorers)


def shared_prefix(tokenizer: Any, system_role: bool, windows: Sequence[int | None] | None,
                  prompts: Sequence[ChatPrompt], token_ids: list[list[int]], max_new_tokens: int) -> list[int]:
    """Token ids of the instructions and worked examples that every row of the call starts
    with, when caching them is exact (`windows`: the layers' attention windows, None where a
    cached prefix is never exact); else []."""
    if windows is None or len(prompts[0]) < 2:
        return []
    head = chat_template.head_ids(tokenizer, prompts[0], system_role=system_role)
    prefix = head[: chat_template.common_prefix(head, token_ids)]
    if len(prefix) < MIN_PREFIX:
        return []
    # Rows are [prefix][padding][own tokens]: a sliding window that does not reach back over
    # the whole row would count the padding as positions and see less of the prefix.
    span = max(len(ids) for ids in token_ids) + max_new_tokens
    if any(window is not None and window < span for window in windows):
        return []
    return prefix


def prefix_groups(tokenizer: Any, system_role: bool, windows: Sequence[int | None] | None,
                  prompts: Sequence[ChatPrompt], token_ids: list[list[int]], rows: Sequence[int],
                  max_new_tokens: int) -> list[tuple[list[int], list[int]]]:
    """`rows` (indices into `prompts`) split into decode groups, each with its shared prefix.

    A call of one schedule round holds several scorers' prompts (issue 47): their instructions
    differ, so one prefix for the whole call would be a few template tokens and every row would
    prefill its scorer's instructions again. Rows are grouped by the messages before their last
    user message (which alone decide the head); a group with a prefix worth caching decodes on
    its own cache, and the rows of every other group decode together without one. Groups come
    in the order of their first row; rows keep their order within a group."""
    by_head: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for i in rows:
        by_head.setdefault(tuple((m["role"], m["content"]) for m in prompts[i][:-1]), []).append(i)
    groups: list[tuple[list[int], list[int]]] = []
    plain: list[int] = []
    for group in by_head.values():
        prefix = shared_prefix(tokenizer, system_role, windows, [prompts[i] for i in group],
                               [token_ids[i] for i in group], max_new_tokens)
        if prefix:
            groups.append((prefix, group))
        else:
            plain += group
    if plain:
        groups.append(([], sorted(plain)))
    return groups


class PrefixCache:
    """The KV caches of shared prefixes, by their tokens (the last `KEEP` kept), and the model
    inputs of a call built on one."""

    def __init__(self, model: Any, cache_kw: str, pad: int) -> None:
        self.model = model
        self.cache_kw = cache_kw  # the forward's name for its cache argument
        self.pad = pad
        self.entries: dict[tuple[int, ...], Any] = {}

    def copy_for(self, prefix: list[int], batch: int) -> Any:
        """The prefix's KV cache, computed once per process, copied for `batch` rows."""
        key = tuple(prefix)
        if key not in self.entries:
            from transformers import DynamicCache

            cache = DynamicCache(config=self.model.config)
            ids = torch.tensor([prefix], device=self.model.device)
            # Only the cache is wanted: one position's logits, not a [prefix, vocab] tensor.
            self.model(input_ids=ids, use_cache=True, logits_to_keep=1, **{self.cache_kw: cache})
            if len(self.entries) >= KEEP:
                self.entries.pop(next(iter(self.entries)))
            self.entries[key] = cache
        cache = copy.deepcopy(self.entries[key])
        cache.batch_repeat_interleave(batch)
        return cache

    @torch.inference_mode()
    def inputs(self, prefix: list[int], suffixes: list[list[int]]) -> dict[str, Any]:
        """Model inputs of one call: rows are [shared prefix][left padding][own tokens], the
        prefix's KV cache copied in; plain left padding without a prefix."""
        width = max(len(s) for s in suffixes)
        rows = [prefix + [self.pad] * (width - len(s)) + s for s in suffixes]
        masks = [[1] * len(prefix) + [0] * (width - len(s)) + [1] * len(s) for s in suffixes]
        inputs: dict[str, Any] = {
            "input_ids": torch.tensor(rows, device=self.model.device),
            "attention_mask": torch.tensor(masks, device=self.model.device),
        }
        if prefix:
            inputs[self.cache_kw] = self.copy_for(prefix, len(rows))
        return inputs
