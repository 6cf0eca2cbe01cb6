"""The transformers engine: a locally stored model, greedy, JSON-constrained.

Every prompt of a batch goes through one call of the own decode loop (`decode`; or
`model.generate` as the fallback). Each row is constrained to its own schema by an llguidance
grammar: `RowGrammars` keeps one grammar matcher per row, so items needing different schemas
(exactly N verdicts for N claims) still share one call. Grammars are compiled once per schema
and reused; the `GRAMMARS_KEPT` last used are kept (a server's clients may send any number of
distinct schemas).
"""

from __future__ import annotations

import copy
import gc
import inspect
import json
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from pydantic import BaseModel

from localjudge.engines import chat_template
from localjudge.engines.grammar import closer_ids, grammar_spec, literal_fields
from localjudge.engines.model_files import check_model_dir, incomplete_checkpoint, mismatched_checkpoint
from localjudge.engines.options import check_max_rows, judge_identity
from localjudge.engines.transformers.gguf_reads import read_once
from localjudge.engines.transformers.model_config import (
    attention_windows,
    context_window,
    load_dtype,
    out_of_memory_error,
)
from localjudge.engines.transformers.prefix_cache import PrefixCache, prefix_groups, shared_prefix
from localjudge.engines.transformers.row_grammars import RowGrammarProcessor, RowGrammars
from localjudge.judge import ChatPrompt, Generation, JudgeOutOfMemory, too_long

if TYPE_CHECKING:  # the decode loop imports transformers: only once a model is loaded
    from localjudge.engines.transformers.decode import DecodeStats



DECODERS = ("loop", "generate")
GRAMMARS_KEPT = 1024  # compiled grammars kept, the last used (as serve keeps its schema classes)


class TransformersJudge(chat_template.TemplatePrompts):
    """A judge on a Hugging Face causal LM and its tokenizer, already loaded; `load` loads one
    from a local folder or `.gguf` file.

    Building it has no global side effects: the caller's tokenizer is copied (the judge pads on
    the left, with EOS when there is no pad token), torch's thread count is left alone (set it
    with `torch.set_num_threads`; the CLI's ``--threads`` does).

    Args:
        model: A transformers causal LM on its device (put in eval mode).
        tokenizer: Its fast tokenizer, with a chat template.
        identity: Names the weights in result keys: change it whenever they change (`load`
            uses the folder name and a hash of the weight files). The dtype and "greedy" are
            appended.
        prefix_cache: Prefill the instructions and worked examples shared by a call's prompts
            once per process and reuse their KV cache (exact: the cached prefix is the same
            tokens the full prompt starts with). Used only where it is exact for the
            architecture (see `attention_windows`); False always prefills full prompts.
        max_context: The longest prompt plus answer to run, in tokens; a longer row is recorded
            unscored. Default: the length the model declares; required when it declares none.
        repeat_guard: Close a free-text field (a reason, a claim) that starts repeating a run
            of words, instead of letting it loop to the token budget (see
            `localjudge.engines.transformers.row_grammars.repeats`). Part of the identity: results with and without it
            are kept apart.
        decoder: ``"loop"`` (default): localjudge's own greedy loop (`localjudge.engines.transformers.decode`):
            finished rows leave the batch, grammar-forced tokens are checked in one forward
            pass; the tokens are `model.generate`'s. ``"generate"``: `model.generate` with a
            logits processor, the fallback (``+generate`` in the identity: the same tokens,
            label probabilities equal to rounding). Architectures that are not plain
            attention (recurrent, convolutional layers) always use ``"generate"``.
        max_rows: The most rows decoded at once; None (default): every row of a call. A call
            with more rows keeps `max_rows` in flight: under the loop, on models whose layers
            are all full attention, each finished row's place is taken by the next waiting one
            (continuous batching: a call of 32 rows at ``max_rows=8`` runs far fewer passes
            than four calls of 8, since each call waits for its longest row); otherwise the
            call runs in chunks of `max_rows`. The same tokens either way (label
            probabilities to rounding), so it is not part of the identity. It also bounds
            the memory a call's cache takes.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        identity: str,
        prefix_cache: bool = True,
        max_context: int | None = None,
        repeat_guard: bool = True,
        decoder: str = "loop",
        max_rows: int | None = None,
        _share: TransformersJudge | None = None,
    ) -> None:
        import llguidance.hf

        if isinstance(model, (str, Path)):
            raise TypeError(f"TransformersJudge takes a loaded model; to load {str(model)!r} use "
                            "TransformersJudge.load(path, ...)")
        self.model = model.eval()
        self._weights = identity
        self._options = {"prefix_cache": prefix_cache, "max_context": max_context, "repeat_guard": repeat_guard,
                         "decoder": decoder, "max_rows": max_rows}
        if _share is not None:  # a variant (`variant`): the same model, tokenizer and vocabulary index
            self.tokenizer = _share.tokenizer
        else:
            self.tokenizer = copy.deepcopy(tokenizer)
            if self.tokenizer.pad_token is None:
                self.tokenizer.pad_token = self.tokenizer.eos_token
            self.tokenizer.padding_side = "left"  # decoder-only batching pads on the left
        self.context_window = context_window(self.model.config, self.tokenizer, max_context)
        self.system_role = chat_template.system_role_supported(self.tokenizer)
        if decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, got {decoder!r}")
        self._layer_windows = attention_windows(self.model.config, self.context_window)
        self._windows = self._layer_windows if prefix_cache else None
        # The own loop where the cache is plain attention; else `generate`.
        self.decoder = decoder if self._layer_windows is not None else "generate"
        self.max_rows = check_max_rows(max_rows)
        from localjudge.engines.transformers.decode import DecodeStats, refills

        self._refills = self.decoder == "loop" and refills(self._layer_windows)

        self.decode_stats: DecodeStats = DecodeStats()  # the own loop's counters, summed over calls
        # llguidance indexes the vocabulary once: the model's rows
        # (padded: Qwen 151936 for 151665 tokens) or the tokenizer's (Gemma 3 1B: 262145 tokens
        # for 262144 rows), whichever is larger; the mask is cut to the logits.
        n_vocab = max(self.model.config.get_text_config(decoder=True).vocab_size, len(self.tokenizer))
        self._llg_tokenizer: Any = _share._llg_tokenizer if _share is not None else \
            llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=n_vocab)
        self._grammars: OrderedDict[type[BaseModel], tuple[str, dict[str, tuple[str, ...]]]] = \
            _share._grammars if _share is not None else OrderedDict()
        # transformers 5.2x renamed `past_key_values` to `cache`; use whichever this one takes.
        forward_params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in forward_params else "past_key_values"
        self.prefixes = PrefixCache(self.model, self._cache_kw, self.tokenizer.pad_token_id)
        self.repeat_guard = repeat_guard
        self._closers: torch.Tensor | None = _share._closers if _share is not None else None  # found once
        # The loop's tokens are generate's; its label probabilities can differ by rounding
        # (a multi-token pass rounds differently), so the fallback's results are kept apart.
        fallback = "+generate" if self.decoder == "generate" else ""
        self._identity = judge_identity(identity, self.model.dtype, repeat_guard=repeat_guard, suffix=fallback)

    @classmethod
    def load(
        cls,
        model_path: str | Path,
        *,
        device_map: str | dict[str, Any] | None = None,
        dtype: str = "auto",
        trust_remote_code: bool = False,
        allow_pickle: bool = False,
        prefix_cache: bool = True,
        max_context: int | None = None,
        repeat_guard: bool = True,
        decoder: str = "loop",
        max_rows: int | None = None,
    ) -> TransformersJudge:
        """Load a judge from local files: never downloads, safetensors unless pickle is allowed.

        Args:
            model_path: A directory holding a transformers model (safetensors weights, config,
                tokenizer), or a `.gguf` file. Hub ids are refused.
            device_map: Passed to `from_pretrained` through accelerate: ``"cpu"``, ``"cuda"``,
                ``"auto"`` (shard a large model over the GPUs and CPU), or a dict. Default: the
                first GPU if there is one, else the CPU.
            dtype: ``"auto"``: float32 on CPU (there, batched results equal one-by-one results
                bit for bit; bf16 padding changes them, at the same speed), the checkpoint's
                dtype on GPU. Or a torch dtype name like ``"bfloat16"`` (a 7B model on a CPU with
                under 32 GB of memory needs it).
            trust_remote_code: Run code shipped with the model. Off unless you opt in.
            allow_pickle: Accept pickle (`.bin`/`.pt`) weights. Off unless you opt in: loading
                a pickle can run arbitrary code.
            prefix_cache, max_context, repeat_guard, decoder, max_rows: As for the constructor.
        """
        files = check_model_dir(model_path, allow_pickle=allow_pickle)  # before any heavy import
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if device_map is None:
            device_map = "cuda" if torch.cuda.is_available() else "cpu"
        places = set(device_map.values()) if isinstance(device_map, dict) else {device_map}
        on_cpu = all(str(place).split(":")[0] == "cpu" for place in places)
        torch_dtype = load_dtype(dtype, on_cpu=on_cpu, gguf=files.gguf is not None)
        common: dict[str, Any] = {"local_files_only": True, "trust_remote_code": trust_remote_code}
        if files.gguf is not None:
            common["gguf_file"] = files.gguf.name
        folder = str(files.directory)
        with read_once(files.gguf) if files.gguf is not None else nullcontext():
            tokenizer = AutoTokenizer.from_pretrained(folder, **common)
            model, loading = AutoModelForCausalLM.from_pretrained(
                folder,
                dtype=torch_dtype,
                device_map=device_map,
                use_safetensors=None if allow_pickle or files.gguf else True,
                output_loading_info=True,
                ignore_mismatched_sizes=True,  # reported in `loading`, refused below in one line, not a traceback
                **common,
            )
        if loading.get("mismatched_keys"):  # another model's checkpoint beside this config: random in their place
            raise mismatched_checkpoint(files.directory, loading["mismatched_keys"])
        if loading["missing_keys"]:  # transformers would fill them with random numbers: a judge at random
            raise incomplete_checkpoint(files.directory, loading["missing_keys"])
        return cls(model, tokenizer, identity=f"{files.directory.name}@{files.fingerprint()}",
                   prefix_cache=prefix_cache, max_context=max_context, repeat_guard=repeat_guard,
                   decoder=decoder, max_rows=max_rows)

    def variant(self, **options: Any) -> TransformersJudge:
        """This judge with other decoding options (`prefix_cache`, `max_context`, `repeat_guard`,
        `decoder`, `max_rows`), on the same model: it shares the tokenizer, the grammar engine's
        vocabulary index and the compiled grammars instead of building them again (seconds each
        on a 150k-token vocabulary). Its identity follows its options, as a new judge's would."""
        unknown = set(options) - set(self._options)
        if unknown:
            raise TypeError(f"variant() takes {', '.join(sorted(self._options))}, not {', '.join(sorted(unknown))}")
        return TransformersJudge(self.model, self.tokenizer, identity=self._weights, **{**self._options, **options},
                                 _share=self)

    def closers(self) -> torch.Tensor:
        """Bool vector over the vocabulary: tokens whose text starts with a quote (built once)."""
        if self._closers is None:
            size = max(self.model.config.get_text_config(decoder=True).vocab_size, len(self.tokenizer))
            closers = torch.zeros(size, dtype=torch.bool)
            closers[closer_ids(self.tokenizer)] = True
            self._closers = closers
        return self._closers

    @property
    def identity(self) -> str:
        return self._identity

    def _grammar(self, schema: type[BaseModel]) -> tuple[str, dict[str, tuple[str, ...]]]:
        """The llguidance grammar for a schema (compact JSON, no whitespace), built once and kept
        while it is among the `GRAMMARS_KEPT` last used."""
        if schema in self._grammars:
            self._grammars.move_to_end(schema)
            return self._grammars[schema]
        import llguidance

        spec = grammar_spec(schema)
        grammar = llguidance.LLMatcher.grammar_from_json_schema(json.dumps(spec))
        self._grammars[schema] = (grammar, literal_fields(spec))
        while len(self._grammars) > GRAMMARS_KEPT:
            self._grammars.popitem(last=False)
        return self._grammars[schema]

    def _shared_prefix(
        self, prompts: Sequence[ChatPrompt], token_ids: list[list[int]], max_new_tokens: int
    ) -> list[int]:
        return shared_prefix(self.tokenizer, self.system_role, self._windows, prompts, token_ids, max_new_tokens)

    def generate(
        self,
        prompts: Sequence[ChatPrompt],
        schemas: Sequence[type[BaseModel]],
        *,
        max_new_tokens: int,
    ) -> list[Generation]:
        """One batched, greedy, constrained decode of all prompts that fit: per group of prompts
        sharing their instructions (`prefix_groups`: a call of several scorers' steps is several
        groups), on that group's cached prefix."""
        token_ids = [self.prompt_ids(p) for p in prompts]
        results: list[Generation | None] = [None] * len(prompts)
        fit = []
        for i, ids in enumerate(token_ids):
            results[i] = too_long(len(ids), max_new_tokens, self.context_window)
            if results[i] is None:
                fit.append(i)
        if fit:
            out_of_memory = None
            try:
                for prefix, group in prefix_groups(self.tokenizer, self.system_role, self._windows, prompts,
                                                   token_ids, fit, max_new_tokens):
                    generated = self._generate(prefix, [token_ids[i][len(prefix):] for i in group],
                                               [schemas[i] for i in group], max_new_tokens)
                    for i, generation in zip(group, generated, strict=True):
                        results[i] = generation
            except RuntimeError as error:  # torch.OutOfMemoryError is one
                if not out_of_memory_error(error):
                    raise
                out_of_memory = f"{type(error).__name__}: {error}"  # the message only: not the frames
            if out_of_memory is not None:
                # Past the `except`: the failed attempt's frames (its cache, activations) are freed
                # now, so the allocator can return their memory before the engine retries in halves.
                gc.collect()
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                raise JudgeOutOfMemory(f"out of memory generating for {len(fit)} prompts: {out_of_memory}")
        return results  # type: ignore[return-value]

    @property
    def _prefix_caches(self) -> dict[tuple[int, ...], Any]:
        return self.prefixes.entries

    def batch_inputs(self, prefix: list[int], suffixes: list[list[int]]) -> dict[str, Any]:
        """Model inputs of one call (see `PrefixCache.inputs`)."""
        return self.prefixes.inputs(prefix, suffixes)

    @torch.inference_mode()
    def _generate(
        self, prefix: list[int], suffixes: list[list[int]], schemas: list[type[BaseModel]], max_new_tokens: int
    ) -> list[Generation]:
        """One constrained greedy decode of `batch_inputs`, by the judge's decoder, `max_rows`
        rows at a time (refilled as rows finish, or in chunks)."""
        step = self.max_rows or len(suffixes)
        if len(suffixes) > step and not self._refills:
            return [g for start in range(0, len(suffixes), step)
                    for g in self._generate(prefix, suffixes[start:start + step], schemas[start:start + step],
                                            max_new_tokens)]
        compiled = [self._grammar(s) for s in schemas]
        closers = self.closers() if self.repeat_guard else None
        pad, eos = self.tokenizer.pad_token_id, self.tokenizer.eos_token_id
        grammars = RowGrammars(self._llg_tokenizer, [g for g, _ in compiled], [f for _, f in compiled],
                               self.tokenizer, closers)
        if self.decoder == "loop":
            from localjudge.engines.transformers.decode import greedy_decode

            def inputs_of(group: list[int]) -> dict[str, Any]:
                return self.batch_inputs(prefix, [suffixes[i] for i in group])

            rows, stats = greedy_decode(self.model, grammars, inputs_of, len(suffixes), cache_kw=self._cache_kw,
                                        eos=eos, pad=pad, max_new_tokens=max_new_tokens,
                                        windows=self._layer_windows, max_rows=self.max_rows)
            self.decode_stats.add(stats)
        else:
            rows = []
            inputs = self.batch_inputs(prefix, suffixes)
            processor = RowGrammarProcessor(grammars)
            generated = self._model_generate(inputs, processor, max_new_tokens).tolist()
            if all(generated):
                processor.flush([ids[-1] for ids in generated])
            for ids in generated:
                finished = eos in ids
                rows.append((ids[: ids.index(eos)] if finished else ids, finished))
        return [
            Generation(
                # exactly the text the grammar accepted: no clean-up of spaces before punctuation
                text=self.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False),
                finished=finished,
                new_tokens=len(ids) + int(finished),
                label_probs=tuple(grammars.labels[row].readings),
            )
            for row, (ids, finished) in enumerate(rows)
        ]

    def _model_generate(self, inputs: dict[str, Any], processor: RowGrammarProcessor, max_new_tokens: int) -> Any:
        """`model.generate`, greedy, under the processor: the new tokens of each row."""
        from transformers import LogitsProcessorList

        output = self.model.generate(
            **inputs,
            logits_processor=LogitsProcessorList([processor]),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            num_beams=1,
            temperature=None,
            top_p=None,
            top_k=None,
            eos_token_id=self.tokenizer.eos_token_id,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        return output[:, inputs["input_ids"].shape[1]:]
