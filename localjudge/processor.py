"""A row-wise grammar logits processor for batched constrained generation.

Outlines' processors constrain every row of a batch to one grammar. Scorers need one schema per
item (exactly N verdicts for N claims), so this processor keeps one llguidance matcher per row,
each built from that row's compiled grammar, and masks the batch's logits in one vectorised
operation (no `torch.compile`: its 5-20 s warm-up costs more than it saves at these sizes).

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
from collections.abc import Sequence
from typing import Any

import torch
from outlines.processors.base_logits_processor import OutlinesLogitsProcessor

from localjudge.repetition import StringTracker

log = logging.getLogger(__name__)

class RowGrammarProcessor(OutlinesLogitsProcessor):
    """Constrain row `i` of a generate call to `grammars[i]` and record label probabilities.

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

        super().__init__("torch")
        self.matchers = [llguidance.LLMatcher(llg_tokenizer, g) for g in grammars]
        for matcher in self.matchers:
            if matcher.is_error():
                raise ValueError(f"invalid grammar: {matcher.get_error()}")
        self.executor = llguidance.LLExecutor()
        self.tokenizer = tokenizer
        self.triggers = [{f'"{key}":': labels for key, labels in fields.items()} for fields in literal_fields]
        self.tails = ["" for _ in grammars]  # last characters generated per row
        self.closers = closers
        self.strings = [StringTracker() for _ in grammars]
        self.closed_loops = [0 for _ in grammars]  # strings the guard closed, per row
        self.label_probs: list[list[dict[str, float]]] = [[] for _ in grammars]
        words = (llg_tokenizer.vocab_size + 31) // 32
        self.bitmask = torch.zeros((len(grammars), words), dtype=torch.int32)
        self.bits = torch.arange(32, dtype=torch.int32)
        self.started = False

    def process_logits(self, input_ids: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        import llguidance.torch

        if self.started:  # feed each live row the token chosen at the previous step
            last = input_ids[:, -1].tolist()  # one device-to-host copy for the whole batch
            for row, matcher in enumerate(self.matchers):
                if matcher.is_stopped():
                    continue
                token = last[row]
                if not matcher.consume_token(token):
                    log.warning("row %d left its grammar: %s", row, matcher.get_error())
                if self.triggers[row] or self.closers is not None:
                    piece = self.tokenizer.decode([token])
                    self.tails[row] = (self.tails[row] + piece)[-40:]
                    self.strings[row].feed(piece)
        self.started = True

        llguidance.torch.fill_next_token_bitmask_par(
            self.executor, [(m, row) for row, m in enumerate(self.matchers)], self.bitmask
        )
        # Unpack the bits where the logits live: only the packed mask crosses to the device.
        packed = self.bitmask.to(logits.device)  # blocking: the host buffer is refilled next step
        allowed = ((packed.unsqueeze(-1) >> self.bits.to(logits.device)) & 1).bool().view(len(self.matchers), -1)
        vocab = logits.shape[-1]
        if allowed.shape[1] < vocab:
            allowed = torch.nn.functional.pad(allowed, (0, vocab - allowed.shape[1]))
        allowed = allowed[:, :vocab]
        if self.closers is not None:
            for row, string in enumerate(self.strings):
                if string.looping and not self.matchers[row].is_stopped():
                    closing = allowed[row] & self.closers[:vocab].to(allowed.device)
                    if closing.any():  # else the grammar cannot end the string here yet (minLength)
                        allowed[row] = closing
                        self.closed_loops[row] += 1
        logits = logits.masked_fill(~allowed, float("-inf"))
        for row, triggers in enumerate(self.triggers):
            tail = self.tails[row]
            for trigger, labels in triggers.items():
                # The label's first token may or may not carry the opening quote.
                quote = "" if tail.endswith(trigger + '"') else '"' if tail.endswith(trigger) else None
                if quote is not None and not self.matchers[row].is_stopped():
                    probs = self._label_probs(logits[row], allowed[row], labels, quote)
                    if probs:
                        self.label_probs[row].append(probs)
        return logits

    def _label_probs(
        self, logits: torch.Tensor, allowed: torch.Tensor, labels: tuple[str, ...], quote: str
    ) -> dict[str, float] | None:
        """Probability of each label: the softmax mass of allowed tokens that begin it.

        None when no allowed token starts a label (the grammar only allows the quote here).
        """
        ids = allowed.nonzero().flatten()
        probs = torch.softmax(logits[ids].float(), dim=-1).tolist()
        mass = dict.fromkeys(labels, 0.0)
        for token_id, p in zip(ids.tolist(), probs, strict=True):
            piece = self.tokenizer.decode([token_id])
            if not piece.startswith(quote) or not (piece := piece[len(quote):]):
                continue
            for label in labels:
                if label.startswith(piece) or piece.startswith(label):
                    mass[label] += p
        total = sum(mass.values())
        return {label: round(m / total, 6) for label, m in mass.items()} if total > 0 else None
