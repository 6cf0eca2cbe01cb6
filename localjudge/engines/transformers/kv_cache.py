"""The decode loop's KV cache: full-attention layers in preallocated buffers, sized once.

`DynamicLayer` grows by concatenation, copying the whole cache at every pass. `GrowingLayer`
writes each pass's keys and values in place into a buffer sized, at its first write, for the
whole prompt plus what a row may still add (its token budget and a little room for rejected
drafts), and reallocates only when holes have used that room up.

The batch's rows, positions and attention mask live on the device of the model's first layer;
a model sharded over GPUs keeps each layer's cache on that layer's device. `Batch` is the rows
in flight: their cache and mask, dropped rows (`select`), joined rows (`join`) and dropped
positions (`compact`). Every index the loop hands a layer (rows to keep, positions to keep) is
moved to the layer's own device first (`on_device_of`): an index on cuda:0 cannot select from a
tensor on cuda:1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers.cache_utils import DynamicLayer


class GrowingLayer(DynamicLayer):
    """A full-attention KV cache layer in a preallocated buffer: a pass writes its keys and
    values in place, and attention reads a view of the filled part.

    Args:
        reserve: Positions allocated beyond the filled part whenever the buffer is
            (re)allocated: what a row may still write (its token budget, draft room).
        capacity: The first allocation's size at least: the longest prompt plus `reserve`, so
            that a cached prefix copied in first and the prompt's own tokens written next share
            one buffer, allocated once.
    """

    def __init__(self, reserve: int, capacity: int = 0) -> None:
        super().__init__()
        self.reserve = reserve
        self.capacity = capacity
        self.length = 0
        self.key_buffer: torch.Tensor | None = None
        self.value_buffer: torch.Tensor | None = None

    @classmethod
    def like(cls, layer: DynamicLayer, reserve: int, capacity: int = 0) -> GrowingLayer:
        """A growing layer holding what `layer` holds."""
        grown = cls(reserve, capacity)
        if layer.is_initialized and layer.get_seq_length() > 0:
            grown.update(layer.keys, layer.values)
        return grown

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
               ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self.length + key_states.shape[-2]
        if self.key_buffer is None or end > self.key_buffer.shape[-2]:
            first = self.capacity if self.key_buffer is None else 0
            self._grow(max(first, end + self.reserve), key_states, value_states)
        assert self.key_buffer is not None and self.value_buffer is not None
        self.key_buffer[:, :, self.length:end] = key_states
        self.value_buffer[:, :, self.length:end] = value_states
        self.length = end
        self.keys, self.values = self.key_buffer[:, :, :end], self.value_buffer[:, :, :end]
        return self.keys, self.values

    def _grow(self, capacity: int, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        def grown(old: torch.Tensor | None, new: torch.Tensor) -> torch.Tensor:
            shape = (*new.shape[:2], capacity, new.shape[-1])
            buffer = new.new_empty(shape)
            if old is not None:
                buffer[:, :, : self.length] = old[:, :, : self.length]
            return buffer
        self.key_buffer = grown(self.key_buffer, key_states)
        self.value_buffer = grown(self.value_buffer, value_states)

    def get_seq_length(self) -> int:
        return self.length

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        if self.key_buffer is None or self.value_buffer is None:
            return

        def selected(buffer: torch.Tensor) -> torch.Tensor:  # the filled part only, not the room after it
            out = buffer.new_empty((len(indices), *buffer.shape[1:]))
            out[:, :, : self.length] = buffer[indices, :, : self.length]
            return out

        self.key_buffer, self.value_buffer = selected(self.key_buffer), selected(self.value_buffer)
        self.keys, self.values = self.key_buffer[:, :, : self.length], self.value_buffer[:, :, : self.length]

    def stack(self, other: GrowingLayer, length: int) -> None:
        """Put `other`'s rows under this layer's, both widened with zeros (masked out by the
        caller) to `length` positions."""
        assert self.key_buffer is not None and self.value_buffer is not None
        assert other.key_buffer is not None and other.value_buffer is not None

        def stacked(mine: torch.Tensor, theirs: torch.Tensor) -> torch.Tensor:
            rows = mine.shape[0] + theirs.shape[0]
            buffer = mine.new_empty((rows, mine.shape[1], length + self.reserve, mine.shape[-1]))
            # Only the filled part is copied (and the widening zeroed): the room after it is
            # written before it is read.
            buffer[: mine.shape[0], :, : self.length] = mine[:, :, : self.length]
            buffer[: mine.shape[0], :, self.length: length] = 0
            buffer[mine.shape[0]:, :, : other.length] = theirs[:, :, : other.length]
            buffer[mine.shape[0]:, :, other.length: length] = 0
            return buffer

        self.key_buffer = stacked(self.key_buffer, other.key_buffer)
        self.value_buffer = stacked(self.value_buffer, other.value_buffer)
        self.length = length
        self.keys, self.values = self.key_buffer[:, :, :length], self.value_buffer[:, :, :length]

    def keep_positions(self, index: torch.Tensor) -> None:
        """Keep only these cache positions, in order (`index` on this layer's device)."""
        if self.key_buffer is None or self.value_buffer is None:
            return

        def kept(buffer: torch.Tensor) -> torch.Tensor:
            out = buffer.new_empty((*buffer.shape[:2], len(index) + self.reserve, buffer.shape[-1]))
            out[:, :, : len(index)] = buffer[:, :, : self.length].index_select(2, index)
            return out

        self.key_buffer, self.value_buffer = kept(self.key_buffer), kept(self.value_buffer)
        self.length = len(index)
        self.keys, self.values = self.key_buffer[:, :, : self.length], self.value_buffer[:, :, : self.length]

    def batch_repeat_interleave(self, repeats: int) -> None:
        raise NotImplementedError("a growing layer is made per call, after the prefix cache is copied")

    def crop(self, tokens_to_remove: int) -> None:
        raise NotImplementedError("the decode loop masks positions out; it never crops")


def preallocate(cache: Any, reserve: int, capacity: int, full: list[bool] | None = None) -> None:
    """Swap the cache's full-attention layers for growing ones. `full` says, per layer, which
    are full attention (`attention_windows`: a sliding window wider than the judge's context
    never slides, so that layer is full attention too); default: the plain ones. Other layer
    kinds are left as they are."""
    kinds = full if full is not None else [type(layer) is DynamicLayer for layer in cache.layers]
    cache.layers = [GrowingLayer.like(layer, reserve, capacity) if is_full and isinstance(layer, DynamicLayer)
                    else layer for layer, is_full in zip(cache.layers, kinds, strict=True)]


def on_device_of(layer: Any, index: torch.Tensor) -> torch.Tensor:
    """`index` on the device of `layer`'s cached tensors (a sharded model's layers live on
    different GPUs); unchanged for a layer that holds nothing yet."""
    held = getattr(layer, "key_buffer", None)
    if held is None:
        held = getattr(layer, "keys", None)
    if isinstance(held, torch.Tensor) and held.device != index.device:
        return index.to(held.device)
    return index


@dataclass
class Batch:
    """The rows in flight: their cache, attention mask (one column per cache position), the
    position of each row's last fed token, the token each feeds next, and which row each is."""

    cache: Any
    mask: torch.Tensor
    last: torch.Tensor
    heads: list[int]
    live: list[int]

    def select(self, keep: list[int]) -> None:
        """Keep these batch rows only (each cache layer indexed on its own device)."""
        index = torch.tensor(keep, device=self.mask.device)
        for layer in self.cache.layers:
            layer.batch_select_indices(on_device_of(layer, index))
        self.mask, self.last = self.mask[index], self.last[index]
        self.heads, self.live = [self.heads[b] for b in keep], [self.live[b] for b in keep]

    def join(self, other: Batch) -> None:
        """Take `other`'s rows in (every cache layer a `GrowingLayer`): both sides' caches are
        widened with masked columns to the longer of the two, then stacked."""
        length = max(self.mask.shape[1], other.mask.shape[1])
        for mine, theirs in zip(self.cache.layers, other.cache.layers, strict=True):
            mine.stack(theirs, length)

        def widened(mask: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.pad(mask, (0, length - mask.shape[1]))

        self.mask = torch.cat([widened(self.mask), widened(other.mask)])
        self.last = torch.cat([self.last, other.last])
        self.heads, self.live = self.heads + other.heads, self.live + other.live

    def compact(self) -> None:
        """Drop cache positions masked out in every row (a finished row's own tokens, rejected
        drafts, padding), when they are a quarter of the cache or more: attention then reads
        only what some row still sees. Positions are explicit, so nothing else moves."""
        seen = self.mask.bool().any(0)
        dead = len(seen) - int(seen.sum())
        if dead < max(32, len(seen) // 4) or not all(isinstance(layer, GrowingLayer) for layer in self.cache.layers):
            return
        index = seen.nonzero().squeeze(1)
        for layer in self.cache.layers:
            layer.keep_positions(on_device_of(layer, index))
        self.mask = self.mask[:, index]
