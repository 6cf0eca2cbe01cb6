"""The decode loop's KV cache (`localjudge.engines.transformers.kv_cache`) on hand-made tensors:
compaction keeps exactly the positions some row sees, joining rows are stacked under the batch
with masked zeros, and every layer is indexed on its own device."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def growing(keys: Any, headroom: int = 4) -> Any:
    from localjudge.engines.transformers.kv_cache import GrowingLayer

    layer = GrowingLayer(headroom)
    layer.update(keys, -keys)
    return layer


def test_compaction_keeps_exactly_the_positions_some_row_sees() -> None:
    import torch

    from localjudge.engines.transformers.kv_cache import Batch

    keys = torch.arange(2 * 80, dtype=torch.float32).reshape(2, 1, 80, 1)
    mask = torch.zeros(2, 80, dtype=torch.long)
    mask[:, :10] = 1  # a shared prefix
    mask[0, 70:] = 1  # row 0's own tokens
    mask[1, 40] = 1  # one position only row 1 sees
    seen = [*range(10), 40, *range(70, 80)]
    layer = growing(keys)
    batch = Batch(SimpleNamespace(layers=[layer]), mask.clone(), torch.tensor([20, 11]), [5, 6], [0, 1])
    batch.compact()
    assert torch.equal(layer.keys, keys[:, :, seen]) and torch.equal(layer.values, -keys[:, :, seen])
    assert torch.equal(batch.mask, mask[:, seen]) and layer.get_seq_length() == len(seen)
    layer.update(torch.ones(2, 1, 1, 1), torch.ones(2, 1, 1, 1))  # the next pass writes after them
    assert layer.get_seq_length() == len(seen) + 1 and layer.keys[0, 0, -1, 0] == 1
    few = torch.ones(2, 80, dtype=torch.long)
    few[:, 50:60] = 0  # 10 dead positions: not worth a copy
    untouched = growing(keys)
    Batch(SimpleNamespace(layers=[untouched]), few, torch.tensor([1, 1]), [5, 6], [0, 1]).compact()
    assert untouched.get_seq_length() == 80


def test_joining_rows_are_stacked_under_the_batch_with_masked_zeros() -> None:
    import torch

    from localjudge.engines.transformers.kv_cache import Batch

    old, new = torch.full((2, 1, 6, 1), 7.0), torch.full((1, 1, 4, 1), 3.0)
    a, b = growing(old), growing(new)
    batch = Batch(SimpleNamespace(layers=[a]), torch.ones(2, 6, dtype=torch.long), torch.tensor([5, 5]), [1, 2],
                   [0, 1])
    batch.join(Batch(SimpleNamespace(layers=[b]), torch.ones(1, 4, dtype=torch.long), torch.tensor([3]), [9], [4]))
    assert a.keys.shape == (3, 1, 6, 1) and a.get_seq_length() == 6
    assert torch.equal(a.keys[:2], old) and torch.equal(a.keys[2, 0, :4, 0], torch.full((4,), 3.0))
    assert torch.equal(a.keys[2, 0, 4:, 0], torch.zeros(2)), "the joining row's extra positions are zeros"
    assert batch.mask.tolist() == [[1] * 6, [1] * 6, [1] * 4 + [0] * 2], "and masked out"
    assert batch.live == [0, 1, 4] and batch.heads == [1, 2, 9] and batch.last.tolist() == [5, 5, 3]
    a2, b2 = growing(new.expand(2, 1, 4, 1).clone()), growing(old[:1].clone())
    wider = Batch(SimpleNamespace(layers=[a2]), torch.ones(2, 4, dtype=torch.long), torch.tensor([3, 3]), [1, 2],
                   [0, 1])
    wider.join(Batch(SimpleNamespace(layers=[b2]), torch.ones(1, 6, dtype=torch.long), torch.tensor([5]), [9], [2]))
    assert wider.mask.tolist() == [[1] * 4 + [0] * 2] * 2 + [[1] * 6], "a longer joiner widens the batch"
    assert torch.equal(a2.keys[:2, 0, 4:, 0], torch.zeros(2, 2))


class FarLayer:
    """A cache layer on another GPU of a sharded model (here the meta device): like a CUDA
    tensor, it refuses an index that is not on its own device or the CPU."""

    def __init__(self) -> None:
        import torch

        self.key_buffer = torch.empty(2, 1, 8, 1, device="meta")
        self.seen: list[str] = []

    def _take(self, index: Any) -> None:
        if index.device != self.key_buffer.device:
            raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor")
        self.seen.append(index.device.type)

    batch_select_indices = keep_positions = _take


def test_every_cache_layer_is_indexed_on_its_own_device() -> None:
    """A model sharded over GPUs keeps each layer's cache on its own device, while the batch's
    mask lives with the first layer: rows and positions to keep reach each layer on its device."""
    import torch

    from localjudge.engines.transformers.kv_cache import Batch, GrowingLayer

    near = growing(torch.arange(2 * 80, dtype=torch.float32).reshape(2, 1, 80, 1))
    far = FarLayer()
    far.__class__ = type("FarGrowingLayer", (FarLayer, GrowingLayer), {})  # compaction needs growing layers
    mask = torch.zeros(2, 80, dtype=torch.long)
    mask[:, :10] = 1
    mask[:, 60:] = 1
    batch = Batch(SimpleNamespace(layers=[near, far]), mask, torch.tensor([5, 6]), [1, 2], [0, 1])
    batch.compact()
    assert far.seen == ["meta"] and near.get_seq_length() == 30
    batch.select([1])
    assert far.seen == ["meta", "meta"] and near.keys.shape[0] == 1 and batch.live == [1]
