"""The repetition guard inside vLLM: a logits processor that closes a looping JSON string.

The transformers engine's guard (`localjudge.engines.transformers.row_grammars`, `localjudge.repetition`): when the
string being written ends with a repeated run of words, only tokens that close the string
(those starting with a quote) stay allowed, and the grammar decides what follows. Here the same
rule runs as a vLLM (V1) batch-level logits processor. vLLM applies the grammar's mask to the
logits before its logits processors, so "allowed by the grammar" is "finite here"; it computes
the returned logprobs before them, so label probabilities are not touched.

Loaded by vLLM in its engine process (`VLLMJudge.load` names it in ``logits_processors``); it
acts only on requests that ask for it (``extra_args={"localjudge_repeat_guard": True}``).
Imports vLLM: never imported by localjudge itself.
"""

from __future__ import annotations

from typing import Any

import torch
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor
from vllm.v1.sample.logits_processor.interface import MoveDirectionality

from localjudge.engines.grammar import CONTEXT_TOKENS, closer_ids, piece_after
from localjudge.engines.vllm.judge import GUARD_ARG
from localjudge.repetition import StringTracker


class _Row:
    """One guarded request: its output tokens (vLLM's live list) read into a string tracker."""

    def __init__(self, output_ids: list[int]) -> None:
        self.output_ids = output_ids
        self.read = 0
        self.tracker = StringTracker()

    def catch_up(self, tokenizer: Any) -> None:
        ids = self.output_ids
        while self.read < len(ids) and ids[self.read] >= 0:  # (a negative id: a placeholder not yet sampled)
            before = ids[max(0, self.read - CONTEXT_TOKENS):self.read]
            self.tracker.feed(piece_after(tokenizer, before, ids[self.read]))
            self.read += 1


class RepeatGuard(LogitsProcessor):
    """Only string-closing tokens for a guarded row whose current string loops."""

    def __init__(self, vllm_config: Any, device: torch.device, is_pin_memory: bool) -> None:
        from transformers import AutoTokenizer

        model_config = vllm_config.model_config
        self.tokenizer = AutoTokenizer.from_pretrained(model_config.tokenizer, local_files_only=True,
                                                       trust_remote_code=model_config.trust_remote_code)
        size = max(model_config.get_vocab_size(), len(self.tokenizer))
        closers = torch.zeros(size, dtype=torch.bool)
        closers[closer_ids(self.tokenizer)] = True
        self.closers = closers.to(device)
        self.rows: dict[int, _Row] = {}  # batch index -> guarded request

    def is_argmax_invariant(self) -> bool:
        return False  # it changes which token greedy decoding picks

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is not None:
            for index in batch_update.removed:
                self.rows.pop(index, None)
            for index, params, _, output_ids in batch_update.added:
                if params is not None and (params.extra_args or {}).get(GUARD_ARG):
                    self.rows[index] = _Row(output_ids)
                else:
                    self.rows.pop(index, None)
            for first, second, direction in batch_update.moved:
                a, b = self.rows.pop(first, None), self.rows.pop(second, None)
                if a is not None:
                    self.rows[second] = a
                if b is not None and direction == MoveDirectionality.SWAP:
                    self.rows[first] = b
        for row in self.rows.values():
            row.catch_up(self.tokenizer)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        for index, row in self.rows.items():
            if index < len(logits) and row.tracker.looping:
                closing = torch.isfinite(logits[index]) & self.closers[: logits.shape[1]]
                if closing.any():  # else the grammar cannot end the string here yet (minLength)
                    logits[index, ~closing] = -torch.inf
        return logits
