"""localjudge's own greedy decode loop: the tokens of `model.generate`, with no wasted step.

`model.generate` runs a batch until its longest row ends and pays a forward pass for every
token, even those the grammar already knows. This loop drives the model's forward itself
(the model's own KV cache, the shared-prefix cache kept) and differs in three ways only:

- **Finished rows leave.** A row that ends (EOS, or its grammar complete, after which only
  EOS can follow) is dropped from the batch and from the cache (`batch_select_indices`):
  the rows still writing stop paying for it.
- **Forced tokens are drafted.** After each chosen token the row's grammar says which tokens
  it forces next (`{"verdicts":[{"verdict":"`, `","reason":"`, closing brackets). They go into
  the same forward pass as the chosen token, and each is kept only if it is the token the
  model itself would have chosen there under the grammar (greedy, same mask, same repetition
  guard), so the output is `generate`'s, token for token. A rejected draft's position is masked
  out of the attention (a hole, like left padding) and the model's own choice is kept instead.
- **A complete grammar ends the row** without the forward pass that would only produce EOS.
- **Waiting rows join** (`max_rows`): with more rows than may be in flight, a finished row's
  place is taken by the next waiting one, prefilled in a pass of its own and stacked onto the
  batch's cache (continuous batching; full attention only).

Drafting is used where holes in the cache are exact: plain attention, and for sliding-window
layers only while the whole cache stays inside the window (`draft_fits`).

The cache of full-attention layers is written into a preallocated buffer (`localjudge.engines.transformers.kv_cache`)
instead of growing by concatenation at every pass, which copies the whole cache each time.

**Wide passes are bounded.** A pass is as wide as its widest row window, and every row pays
that width. Drafts are cut so that at least half the positions a pass carries are real tokens
(`pass_width`): at batch 1 every forced run is drafted whole; in a large batch, a few rows in a
forced run no longer make every row's pass 17 positions wide (on a GPU, with the mask's
`repeat_kv` copies, that costs more than the steps it saves).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch

from localjudge.engines.transformers.kv_cache import Batch, preallocate
from localjudge.engines.transformers.row_grammars import RowGrammars

MAX_DRAFT = 16  # forced tokens drafted per row per step


@dataclass
class DecodeStats:
    """Counters of the decode loop, summed over calls (see `TransformersJudge.decode_stats`).

    Attributes:
        calls: Batched calls decoded.
        forwards: Forward passes run, prefill included.
        row_steps: Rows times forward passes: the rows each pass carried.
        tokens: Tokens generated (an EOS that ends a row included).
        drafted: Forced tokens drafted into a forward pass.
        accepted: Drafted tokens that were the model's own choice (kept).
        generate_forwards: Forward passes `model.generate` needs for the same calls (one per
            token of the longest row of each call, or of each chunk of `max_rows` rows).
        generate_row_steps: Its rows times passes (every row stays to the end).
        joins: Times waiting rows joined a batch in flight (`max_rows`).
    """

    calls: int = 0
    forwards: int = 0
    row_steps: int = 0
    tokens: int = 0
    drafted: int = 0
    accepted: int = 0
    generate_forwards: int = 0
    generate_row_steps: int = 0
    joins: int = 0

    def add(self, other: DecodeStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def draft_fits(windows: Sequence[int | None] | None, cache_length: int, width: int, max_new_tokens: int) -> bool:
    """Whether drafting `width` tokens now keeps the cache exact: no layer's sliding window
    (None: full attention) can ever drop a position, even if every later step adds one."""
    if windows is None:
        return False
    finite = [w for w in windows if w is not None]
    return not finite or cache_length + width + max_new_tokens <= min(finite)


def refills(windows: Sequence[int | None] | None) -> bool:
    """Whether waiting rows can join a batch in flight: every layer is full attention (a
    joiner's cache is widened with masked positions, which a sliding window would count)."""
    return windows is not None and all(w is None for w in windows)


@torch.inference_mode()
def greedy_decode(
    model: Any,
    grammars: RowGrammars,
    inputs_of: Callable[[list[int]], dict[str, Any]],
    rows: int,
    *,
    cache_kw: str,
    eos: int,
    pad: int,
    max_new_tokens: int,
    windows: Sequence[int | None] | None,
    max_rows: int | None = None,
) -> tuple[list[tuple[list[int], bool]], DecodeStats]:
    """Greedy constrained decoding of `rows` prompts, at most `max_rows` of them at a time.

    With more rows than `max_rows`, a finished row's place is taken by the next waiting one
    (continuous batching): the waiting rows are prefilled in a pass of their own, and their
    cache is stacked onto the batch's, widened with masked positions to the same length. Passes
    then carry `max_rows` rows until the last ones run out, instead of each chunk of rows
    running until its longest ends. This needs every layer to be full attention.

    Args:
        model: The causal LM.
        grammars: The rows' grammars (fed every kept token).
        inputs_of: The model inputs of some rows: ``input_ids`` and ``attention_mask``,
            left-padded, and the shared prefix's cache under `cache_kw` when there is one (it
            is extended in place).
        rows: How many rows.
        cache_kw: The forward's name for the cache argument.
        eos, pad: Token ids.
        max_new_tokens: The most tokens a row generates.
        windows: Per layer, its attention window (None: full), as `attention_windows` reads
            them; None for an architecture where drafting is never exact.
        max_rows: The most rows in flight; None: all at once.

    Returns:
        Per row, its tokens (without the EOS that ended it) and whether it finished; and the
        counters of the call.
    """
    cap = rows if max_rows is None else max(1, min(max_rows, rows))
    if cap < rows and not refills(windows):
        raise ValueError("refilling the batch needs full attention in every layer")
    tokens: list[list[int]] = [[] for _ in range(rows)]
    finished = [False] * rows
    stats = DecodeStats(calls=1)
    pending = list(range(rows))
    batch: Batch | None = None
    while pending or batch is not None:
        free = cap - (len(batch.live) if batch is not None else 0)
        if pending and free > 0:
            group, pending = pending[:free], pending[free:]
            joining = _start(model, grammars, inputs_of(group), group, tokens, finished, stats, cache_kw=cache_kw,
                             eos=eos, pad=pad, max_new_tokens=max_new_tokens, windows=windows)
            if batch is None:
                batch = joining
                continue  # a new batch: its first pass was just run
            if joining is not None:
                batch.join(joining)
                stats.joins += 1
        if batch is not None:
            batch = _step(model, grammars, batch, tokens, finished, stats, cache_kw=cache_kw, eos=eos, pad=pad,
                          max_new_tokens=max_new_tokens, windows=windows)
    # What `generate` would need for the same rows, a chunk of `cap` rows at a time.
    for start in range(0, rows, cap):
        chunk = range(start, min(start + cap, rows))
        longest = max(len(tokens[r]) + int(finished[r]) for r in chunk)
        stats.generate_forwards += longest
        stats.generate_row_steps += longest * len(chunk)
    return list(zip(tokens, finished, strict=True)), stats


def _start(
    model: Any, grammars: RowGrammars, inputs: dict[str, Any], group: list[int], tokens: list[list[int]],
    finished: list[bool], stats: DecodeStats, **kw: Any,
) -> Batch | None:
    """The first pass of some rows: the rest of their prompts after the cached prefix, with
    each row's first window. Returns the rows that go on, or None."""
    from transformers import DynamicCache

    cache = inputs.get(kw["cache_kw"])
    if cache is None:
        cache = DynamicCache(config=model.config)
    prompt, mask = inputs["input_ids"], inputs["attention_mask"]
    # Room for the whole prompt (a cached prefix's positions included: they are in `prompt`'s
    # width), the token budget, and the holes of two rejected draft windows; more only if holes
    # use it up.
    reserve = kw["max_new_tokens"] + 2 * (1 + MAX_DRAFT)
    windows = kw["windows"]
    full = [w is None for w in windows] if windows is not None and len(windows) == len(cache.layers) else None
    preallocate(cache, reserve=reserve, capacity=prompt.shape[1] + reserve, full=full)
    # Positions as `generate` numbers them: real tokens counted, padding at 0.
    positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
    past = cache.get_seq_length()  # the shared prefix, already cached
    batch = Batch(cache, mask[:, :-1], positions[:, -1] - 1, prompt[:, -1].tolist(), list(group))
    before = (prompt[:, past:-1], positions[:, past:-1])
    return _step(model, grammars, batch, tokens, finished, stats, before=before, **kw)


def _step(
    model: Any,
    grammars: RowGrammars,
    batch: Batch,
    tokens: list[list[int]],
    finished: list[bool],
    stats: DecodeStats,
    *,
    cache_kw: str,
    eos: int,
    pad: int,
    max_new_tokens: int,
    windows: Sequence[int | None] | None,
    before: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> Batch | None:
    """One forward pass of the batch: each row feeds a window, its last token then its drafts
    (after `before`, the prompts' uncached tokens, on a first pass). Returns the rows that go
    on, or None."""
    device = batch.mask.device
    live = batch.live
    fits = draft_fits(windows, batch.mask.shape[1], 1 + MAX_DRAFT, max_new_tokens)
    drafts = [grammars.forced(row, min(MAX_DRAFT, max_new_tokens - len(tokens[row]) - 1)) if fits else []
              for row in live]
    width = pass_width([1 + len(d) for d in drafts])
    drafts = [d[: width - 1] for d in drafts]
    window = [[head, *d] for head, d in zip(batch.heads, drafts, strict=True)]
    ids = torch.tensor([w + [pad] * (width - len(w)) for w in window], device=device)
    new = torch.tensor([[1] * len(w) + [0] * (width - len(w)) for w in window], device=device,
                       dtype=batch.mask.dtype)
    mask = torch.cat([batch.mask, new], dim=1)
    window_positions = batch.last.unsqueeze(1) + 1 + torch.arange(width, device=device).unsqueeze(0)
    if before is not None:  # a first pass: the rest of the prompt goes first
        ids = torch.cat([before[0], ids], dim=1)
        window_positions = torch.cat([before[1], window_positions], dim=1)
    out = model(input_ids=ids, attention_mask=mask, position_ids=window_positions,
                use_cache=True, logits_to_keep=width, **{cache_kw: batch.cache})
    logits = out.logits.float()  # rows x window x vocab; `generate` also reads float32
    stats.forwards += 1
    stats.row_steps += len(live)
    stats.drafted += sum(len(d) for d in drafts)
    kept = _choose(grammars, logits, live, drafts, tokens, stats)
    # The window's kept inputs advance the row; its rejected drafts and padding stay in the
    # cache as holes, masked out like left padding.
    count = torch.tensor(kept, device=device)
    if width > 1:
        columns = torch.arange(width, device=device).unsqueeze(0) < count.unsqueeze(1)
        mask = torch.cat([mask[:, :-width], columns.to(mask.dtype)], dim=1)
    batch.mask, batch.last = mask, batch.last + count
    # Each row has kept its accepted drafts and one own choice: does it go on?
    stay: list[int] = []
    for b, row in enumerate(live):
        if tokens[row][-1] == eos:
            tokens[row].pop()
            finished[row] = True
        elif len(tokens[row]) >= max_new_tokens:
            pass  # cut off, as `generate` cuts it
        elif grammars.stopped(row):  # only EOS can follow: no pass needed to produce it
            finished[row] = True
            stats.tokens += 1
        else:
            stay.append(b)
    if not stay:
        return None
    batch.heads = [tokens[row][-1] for row in live]
    if len(stay) < len(live):
        batch.select(stay)
        batch.compact()
    return batch


def pass_width(lengths: Sequence[int]) -> int:
    """How wide a pass may be, given each row's window length (1 + its drafts): the widest at
    which at least half the positions the pass carries are real (every row carries the width;
    a row's real positions are its window, cut to the width)."""
    rows = len(lengths)
    for width in range(max(lengths), 1, -1):
        if 2 * sum(min(n, width) for n in lengths) >= rows * width:
            return width
    return 1


def _choose(
    grammars: RowGrammars,
    logits: torch.Tensor,
    live: list[int],
    drafts: list[list[int]],
    tokens: list[list[int]],
    stats: DecodeStats,
) -> list[int]:
    """Verify each live row's drafts against the model's own greedy choices under its grammar
    (in rounds across rows: one masked fill over the round's rows, one device sync), keep the
    agreeing prefix and the first own choice; return, per batch row, how many of the pass's
    inputs were kept."""
    allowed = grammars.allowed(list(zip(live, drafts, strict=True)), logits.device, logits.shape[-1])
    starts = [0]
    for d in drafts:
        starts.append(starts[-1] + 1 + len(d))
    open_rows = list(range(len(live)))  # batch rows still verifying
    kept = [1] * len(live)  # the token fed at the pass's first input is always kept
    depth = 0
    while open_rows:
        if depth == 0:
            round_logits = logits[:, 0]
            round_allowed = allowed[starts[:-1]] if len(allowed) > len(live) else allowed
        else:
            index = torch.tensor(open_rows, device=logits.device)
            round_logits = logits[index, depth]
            round_allowed = allowed[torch.tensor([starts[b] + depth for b in open_rows], device=logits.device)]
        masked = grammars.constrain_rows([live[b] for b in open_rows], round_logits, round_allowed)
        choices = masked.argmax(-1).tolist()
        still = []
        for b, choice in zip(open_rows, choices, strict=True):
            row = live[b]
            tokens[row].append(choice)
            stats.tokens += 1
            grammars.feed(row, choice)
            if depth < len(drafts[b]) and choice == drafts[b][depth]:
                stats.accepted += 1
                kept[b] += 1
                still.append(b)
        open_rows = still
        depth += 1
    return kept
