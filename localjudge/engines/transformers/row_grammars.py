"""Row-wise grammars for batched constrained generation.

A grammar per batch would constrain every row to one schema. Scorers need one schema per
item (exactly N verdicts for N claims), so `RowGrammars` keeps one llguidance matcher per row,
each built from that row's compiled grammar, computes the rows' token masks in one parallel
call, and offers the tokens a row's grammar forces next (drafts for `localjudge.engines.transformers.decode`).
`RowGrammarProcessor` wraps it as a logits processor for `model.generate` (on Outlines'
processor base: Outlines stays a dependency because the product's stack names it, though it is
this one base class; see docs/decisions/outlines-stays.md).

It also reads, at each point where the grammar lets the judge choose a Literal label (a
verdict), the probability the model gave to each label: the basis of probability scores.

And it keeps free text from looping: a small model's reason often turns into "The score is 1.
The score is 1. ..." until the token budget runs out. `StringTracker` follows each row's JSON
text; when the string being written ends with a repeated run of words (`repeats`), only tokens
that close the string (those starting with a quote) stay allowed, and the grammar decides what
follows: the JSON structure is never touched, only that field ends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from outlines.processors.base_logits_processor import OutlinesLogitsProcessor

from localjudge.engines.grammar import CONTEXT_TOKENS, LabelReader, piece_after
from localjudge.repetition import StringTracker

log = logging.getLogger(__name__)

class RowGrammars:
    """Per-row grammar state of one batched call, shared by the two decoders (`model.generate`
    through `RowGrammarProcessor`, and `localjudge.engines.transformers.decode`).

    Row `i` is constrained to `grammars[i]`; at every choice between Literal labels the label
    probabilities are recorded; the repetition guard closes a looping string.

    Args:
        llg_tokenizer: The llguidance tokenizer of the model.
        grammars: One compiled llguidance grammar per row.
        literal_fields: Per row, the JSON keys whose values are Literal labels: key -> labels.
        tokenizer: The Hugging Face tokenizer (to read the text generated so far).
        closers: Bool vector over the vocabulary: the tokens whose text starts with a quote
            (they can end a string). None turns the repetition guard off.
    """

    def __init__(
        self,
        llg_tokenizer: Any,
        grammars: Sequence[str],
        literal_fields: Sequence[dict[str, tuple[str, ...]]],
        tokenizer: Any,
        closers: torch.Tensor | None = None,
    ) -> None:
        import llguidance

        self.matchers = [llguidance.LLMatcher(llg_tokenizer, g) for g in grammars]
        for matcher in self.matchers:
            if matcher.is_error():
                raise ValueError(f"invalid grammar: {matcher.get_error()}")
        self.executor = llguidance.LLExecutor()
        self.tokenizer = tokenizer
        self.labels = [LabelReader(fields) for fields in literal_fields]  # each row's label readings
        self.recent: list[list[int]] = [[] for _ in grammars]  # last tokens per row, to decode in context
        self.closers = closers
        self.strings = [StringTracker() for _ in grammars]
        self.closed_loops = [0 for _ in grammars]  # strings the guard closed, per row
        self.words = (llg_tokenizer.vocab_size + 31) // 32
        self.bits = torch.arange(32, dtype=torch.int32)

    def stopped(self, row: int) -> bool:
        """Whether the row's grammar is complete: only EOS can follow."""
        return bool(self.matchers[row].is_stopped())

    def feed(self, row: int, token: int) -> None:
        """Advance the row by the token just chosen for it."""
        matcher = self.matchers[row]
        if matcher.is_stopped():
            return
        if not matcher.consume_token(token):
            log.warning("row %d left its grammar: %s", row, matcher.get_error())
        if self.labels[row].choices or self.closers is not None:
            piece = self.piece(row, token)
            self.labels[row].feed(piece)
            self.strings[row].feed(piece)

    def piece(self, row: int, token: int) -> str:
        """The text `token` adds after the row's previous tokens (see `grammar.piece_after`)."""
        before = self.recent[row]
        self.recent[row] = (before + [token])[-CONTEXT_TOKENS:]
        return piece_after(self.tokenizer, before, token)

    def forced(self, row: int, limit: int) -> list[int]:
        """Up to `limit` tokens the row's grammar forces next (JSON structure, a key): drafts
        that the decode loop checks against the model's own choices in one forward pass."""
        if limit <= 0 or self.matchers[row].is_stopped():
            return []
        return list(self.matchers[row].compute_ff_tokens()[:limit])

    def allowed(self, rows: Sequence[tuple[int, Sequence[int]]], device: torch.device, vocab: int) -> torch.Tensor:
        """Bool masks over the vocabulary: for each (row, drafts), one for the row's next
        position and one after each draft token (the matchers are left where they were);
        rows' masks follow one another."""
        import llguidance.torch

        sizes = [1 + len(drafts) for _, drafts in rows]
        bitmask = torch.zeros((sum(sizes), self.words), dtype=torch.int32)
        starts = [sum(sizes[:i]) for i in range(len(rows))]
        slots = list(zip(rows, starts, strict=True))
        with_drafts = [(self.matchers[row], start, list(drafts)) for (row, drafts), start in slots if drafts]
        plain = [(self.matchers[row], start) for (row, drafts), start in slots if not drafts]
        if with_drafts:  # (the llguidance call refuses an empty draft list)
            llguidance.torch.fill_next_token_bitmask_par_with_draft_tokens(self.executor, with_drafts, bitmask)
        if plain:
            llguidance.torch.fill_next_token_bitmask_par(self.executor, plain, bitmask)
        # Unpack the bits where the logits live: only the packed mask crosses to the device.
        packed = bitmask.to(device)
        allowed = ((packed.unsqueeze(-1) >> self.bits.to(device)) & 1).bool().view(len(bitmask), -1)
        if allowed.shape[1] < vocab:
            allowed = torch.nn.functional.pad(allowed, (0, vocab - allowed.shape[1]))
        return allowed[:, :vocab]

    def constrain_rows(self, rows: Sequence[int], logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """The rows' logits at their next positions ([rows, vocab]), masked in one fill to what
        each row's grammar allows there (and to closing a string the guard found looping);
        label probabilities recorded. Python runs per row only for the rows that need it: a
        looping string, a label choice."""
        live = [(i, row) for i, row in enumerate(rows) if not self.matchers[row].is_stopped()]
        looping = [i for i, row in live if self.closers is not None and self.strings[row].looping]
        if looping:
            assert self.closers is not None
            if self.closers.device != allowed.device:
                self.closers = self.closers.to(allowed.device)  # once per call
            allowed = allowed.clone()
            for i in looping:
                closing = allowed[i] & self.closers[: allowed.shape[1]]
                if closing.any():  # else the grammar cannot end the string here yet (minLength)
                    allowed[i] = closing
                    self.closed_loops[rows[i]] += 1
        logits = logits.masked_fill(~allowed, float("-inf"))
        for i, row in live:  # the label's first token may carry the opening quote
            self.labels[row].read(self._candidates(logits, allowed, i))
        return logits

    def _candidates(self, logits: torch.Tensor, allowed: torch.Tensor, i: int) -> Iterator[tuple[str, float]]:
        """Row `i`'s allowed tokens: their texts and softmax probabilities (`grammar.LabelReader`
        reads them at a label choice; elsewhere this generator is never started: nothing computed)."""
        ids = allowed[i].nonzero().flatten()
        probs = torch.softmax(logits[i][ids].float(), dim=-1).tolist()
        yield from ((self.tokenizer.decode([t]), p) for t, p in zip(ids.tolist(), probs, strict=True))


class RowGrammarProcessor(OutlinesLogitsProcessor):
    """`RowGrammars` as a logits processor for `model.generate` (the fallback decoder)."""

    def __init__(self, rows: RowGrammars) -> None:
        super().__init__("torch")
        self.rows = rows
        self.started = False

    def process_logits(self, input_ids: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        if self.started:  # feed each row the token chosen at the previous step
            for row, token in enumerate(input_ids[:, -1].tolist()):  # one device-to-host copy
                self.rows.feed(row, token)
        self.started = True
        allowed = self.rows.allowed([(row, ()) for row in range(len(logits))], logits.device, logits.shape[-1])
        return self.rows.constrain_rows(range(len(logits)), logits, allowed)

    def flush(self, last: list[int]) -> None:
        """Feed each row the token chosen at the last step, which no later step fed: the
        grammars then stand where the own loop leaves them (a label read where only the
        opening quote was then written is dropped on both decoders)."""
        if self.started:
            for row, token in enumerate(last):
                self.rows.feed(row, token)
