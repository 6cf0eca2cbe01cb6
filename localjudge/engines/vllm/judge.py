"""The vLLM engine: the same judge on vLLM's scheduler, for GPU workstations and scale.

A call's rows go to vLLM in one `LLM.generate` call and vLLM schedules them: continuous
batching, automatic prefix caching (the shared instructions and worked examples are computed
once), tensor and pipeline parallelism, multi-node through Ray. What is localjudge's own:

- **The prompt.** Rendered by localjudge's chat-template rules (`localjudge.engines.chat_template`) and
  passed as token ids, so this engine and `TransformersJudge` judge exactly the same tokens.
- **The grammar.** Each row's schema goes to vLLM's "guidance" structured-output backend
  (llguidance, the grammar engine of the transformers engine) as the same spec
  (`grammar.grammar_spec`): compact JSON, bounded strings and lists, Literal verdicts.
- **Label probabilities** (`prob_score`) from vLLM's logprobs: vLLM applies the grammar's mask
  before it computes them, so at a label choice the top tokens are the allowed ones and
  `grammar.label_mass` reads them as the transformers engine reads its masked softmax.
- **The repetition guard** runs inside vLLM as a logits processor (`localjudge.engines.vllm.guard`).
- **Too-long rows** are unscored before anything runs; cut-off answers are reported as such
  (`finished=False`) and the engine (`localjudge.scoring.scorer`) retries them like any backend's.

Greedy and seeded. On CPU, vLLM computes in the checkpoint's dtype (bf16 for the models
`scripts/` saves), the transformers engine in float32: most answers agree, not all (the README
gives the measured rate); each engine's results are keyed by its own identity.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from localjudge.engines import chat_template
from localjudge.engines.grammar import CONTEXT_TOKENS, grammar_spec, literal_fields, piece_after, read_labels
from localjudge.engines.model_files import ModelPathError, check_model_dir, vllm_load_format
from localjudge.engines.options import check_max_rows, judge_identity
from localjudge.engines.vllm.schedule import compile_grammars_when_added, compile_off_here, engine_core_layout
from localjudge.judge import ChatPrompt, Generation, too_long

log = logging.getLogger(__name__)

GUARD = "localjudge.engines.vllm.guard:RepeatGuard"  # the repetition guard, as vLLM loads logits processors
GUARD_ARG = "localjudge_repeat_guard"  # the per-request switch it reads (SamplingParams.extra_args)
LOGPROBS = 20  # top logprobs per position: vLLM's default cap; a label choice allows fewer tokens
CPU_KV_CACHE_BYTES = 4 << 30  # on CPU, vLLM reserves the KV cache up front: 4 GiB unless told


class EngineMissingError(ImportError):
    """vLLM is not installed where the vLLM engine was asked for."""


class EngineStartError(RuntimeError):
    """vLLM's engine did not start (its processes logged why: a checkpoint lacking weights, memory...)."""


def _has_guard(llm: Any) -> bool:
    """Whether the engine was built with localjudge's repetition guard among its processors."""
    processors = getattr(llm.llm_engine.model_config, "logits_processors", None) or []
    return any(p == GUARD or getattr(p, "__name__", "") == "RepeatGuard" for p in processors)


class VLLMJudge(chat_template.TemplatePrompts):
    """A judge on a loaded `vllm.LLM`; `load` builds one from a local model folder.

    Args:
        llm: The engine. Built elsewhere, it runs as it was configured; the repetition guard is
            on when it was built with ``logits_processors=[localjudge.engines.vllm.judge.GUARD]``.
        identity: Names the weights in result keys (`load` uses the folder name and a hash of
            the weight files). The dtype, "greedy", the guard and the vLLM version are appended.
        max_context: The longest prompt plus answer to run, in tokens; a longer row is recorded
            unscored. Default and upper bound: the engine's ``max_model_len``.
    """

    def __init__(self, llm: Any, *, identity: str, max_context: int | None = None) -> None:
        import vllm

        if isinstance(llm, (str, Path)):
            raise TypeError(f"VLLMJudge takes a loaded vllm.LLM; to load {str(llm)!r} use VLLMJudge.load(path, ...)")
        self.llm = llm
        self.tokenizer = llm.get_tokenizer()
        model_config = llm.llm_engine.model_config
        limit = int(model_config.max_model_len)
        if max_context is not None and (isinstance(max_context, bool) or not isinstance(max_context, int)
                                        or not 0 < max_context <= limit):
            raise ValueError(f"max_context must be a number of tokens from 1 to the engine's max_model_len "
                             f"({limit}), got {max_context!r}")
        self.context_window = max_context or limit
        self.system_role = chat_template.system_role_supported(self.tokenizer)
        self.repeat_guard = _has_guard(llm)
        self._schemas: dict[type[BaseModel], tuple[dict[str, Any], dict[str, tuple[str, ...]]]] = {}
        self._token_text: dict[int, str] = {}
        dtype = str(model_config.dtype)
        outputs = getattr(getattr(llm.llm_engine, "vllm_config", None), "structured_outputs_config", None)
        backend = getattr(outputs, "backend", "guidance")
        if backend != "guidance":  # another grammar engine reads the spec its own way (whitespace, say)
            log.warning("the engine's structured-output backend is %r, not 'guidance' (llguidance, as the "
                        "transformers engine): answers may differ from the transformers engine's", backend)
        grammar = "" if backend == "guidance" else f"+grammar-{backend}"
        self._identity = judge_identity(identity, dtype, repeat_guard=self.repeat_guard,
                                        suffix=f"{grammar}+vllm-{vllm.__version__}")

    @classmethod
    def load(
        cls,
        model_path: str | Path,
        *,
        tensor_parallel_size: int = 1,
        pipeline_parallel_size: int = 1,
        dtype: str = "auto",
        max_context: int | None = None,
        max_rows: int | None = None,
        gpu_memory_utilization: float | None = None,
        kv_cache_memory_bytes: int | None = None,
        repeat_guard: bool = True,
        fixed_schedule: bool = True,
        enforce_eager: bool = False,
        distributed_executor_backend: str | None = None,
        load_format: str = "auto",
        trust_remote_code: bool = False,
        allow_pickle: bool = False,
        **engine_kwargs: Any,
    ) -> VLLMJudge:
        """Start a vLLM engine on local files: never downloads (the hub is set offline for it).

        Args:
            model_path: A directory holding a transformers model (safetensors, config,
                tokenizer). Hub ids and `.gguf` files are refused before vLLM is imported.
            tensor_parallel_size: GPUs one model is split over (tensor parallel).
            pipeline_parallel_size: Stages the layers are split into (over GPUs or nodes).
            dtype: ``"auto"``: the checkpoint's dtype (bf16 for most models, on CPU too), or a
                name like ``"float32"``.
            max_context: vLLM's ``max_model_len``: the longest prompt plus answer; longer rows
                are unscored. Default: the length the model declares.
            max_rows: The most rows in flight at once (vLLM's ``max_num_seqs``; its default
                depends on the device). Rows beyond it wait and take finished rows' places.
            gpu_memory_utilization: Fraction of GPU memory vLLM may take (vLLM's default 0.9).
            kv_cache_memory_bytes: KV cache size, instead of a fraction. On CPU, where vLLM's
                fraction is of the machine's memory, the default is 4 GiB.
            repeat_guard: Build the engine with localjudge's repetition guard (see
                `localjudge.engines.vllm.guard`).
            fixed_schedule: Run vLLM's engine core in this process and compile each row's grammar
                before the scheduler sees the row, so that which rows share each engine step is
                decided by the rows alone, not by timing: two runs of the same rows compute the same
                batches, and give the same results wherever the kernels are deterministic for a
                given batch (docs/engines.md "Determinism"). Off: vLLM's own layout, its engine
                core in a process of its own, where the first step takes the rows that have arrived
                by then (2, 3 or 7 of 8 in three runs here) and the rest join later steps.
            enforce_eager: Skip torch.compile and CUDA graphs (starts faster, runs slower). Forced
                on when ``TORCHDYNAMO_DISABLE=1`` is set (torch.compile cannot run then).
            distributed_executor_backend: ``"mp"`` (one node) or ``"ray"`` (several nodes).
            load_format: ``"dummy"`` gives random weights of the model's architecture, for
                speed checks without the weights.
            trust_remote_code, allow_pickle: As for `TransformersJudge.load`; off by default.
            engine_kwargs: Any other `vllm.LLM` argument, passed as is.
        """
        files = check_model_dir(model_path, allow_pickle=allow_pickle)  # before any heavy import
        if files.gguf is not None:
            raise ModelPathError(f"{model_path}: the vLLM engine loads safetensors model folders, not a .gguf "
                                 "file: convert it once (scripts/get_default_model.py's `convert`) or use "
                                 "--engine transformers")
        load_format = vllm_load_format(files, load_format, allow_pickle=allow_pickle)  # the files checked above
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # vLLM's own processes read it: local files only
        if not enforce_eager and (os.environ.get("TORCHDYNAMO_DISABLE") == "1"
                                  or (fixed_schedule and compile_off_here())):
            # vLLM compiles its model with torch.compile, which this variable turns off: its
            # start-up would fail ("aot_compile is not supported"); run eagerly instead. An engine
            # core in this process compiled with it on must also run with it on: turned off after
            # the start, the vLLM tier's first run hung twice (rows running, none scheduled).
            log.warning("torch.compile is off (TORCHDYNAMO_DISABLE=1): starting vLLM with enforce_eager=True")
            enforce_eager = True
        import torch

        try:
            from vllm import LLM
        except ImportError as error:
            raise EngineMissingError(
                f"the vLLM engine needs vllm ({error}): pip install -e '.[vllm]' beside a CUDA torch, or on CPU "
                "bash scripts/setup_vllm.sh and run .venv-vllm/bin/localjudge") from None

        kwargs: dict[str, Any] = {
            "model": str(files.directory), "tokenizer": str(files.directory), "dtype": dtype, "seed": 0,
            "tensor_parallel_size": tensor_parallel_size, "pipeline_parallel_size": pipeline_parallel_size,
            "enable_prefix_caching": True, "enforce_eager": enforce_eager, "load_format": load_format,
            "trust_remote_code": trust_remote_code, "structured_outputs_config": {"backend": "guidance"},
            "max_logprobs": LOGPROBS,
        }
        if max_context is not None:
            kwargs["max_model_len"] = max_context
        if check_max_rows(max_rows) is not None:
            kwargs["max_num_seqs"] = max_rows
        if distributed_executor_backend is not None:
            kwargs["distributed_executor_backend"] = distributed_executor_backend
        if repeat_guard:
            kwargs["logits_processors"] = [GUARD]
        if gpu_memory_utilization is not None:
            kwargs["gpu_memory_utilization"] = gpu_memory_utilization
        if kv_cache_memory_bytes is not None:
            kwargs["kv_cache_memory_bytes"] = kv_cache_memory_bytes
        elif gpu_memory_utilization is None and not torch.cuda.is_available():
            kwargs["kv_cache_memory_bytes"] = CPU_KV_CACHE_BYTES
        try:
            with engine_core_layout(in_process=fixed_schedule):
                llm = LLM(**kwargs, **engine_kwargs)
        except RuntimeError as error:  # raised in vLLM's own processes, whose log (above) names the cause
            raise EngineStartError(f"vLLM could not start its engine on {files.directory}: {error}") from error
        if fixed_schedule:
            try:
                compile_grammars_when_added(llm)
            except AttributeError as error:
                raise EngineStartError(f"this vLLM's engine core has no {error.name!r}: cannot fix its schedule; "
                                       "load with fixed_schedule=False to run with vLLM's own") from None
        return cls(llm, identity=f"{files.directory.name}@{files.fingerprint()}", max_context=max_context)

    @property
    def identity(self) -> str:
        return self._identity

    def close(self) -> None:
        """Stop vLLM's engine processes now, freeing their (GPU) memory, instead of at exit;
        the judge cannot generate afterwards."""
        self.llm.llm_engine.engine_core.shutdown()

    def generate(
        self,
        prompts: Sequence[ChatPrompt],
        schemas: Sequence[type[BaseModel]],
        *,
        max_new_tokens: int,
    ) -> list[Generation]:
        """One `LLM.generate` call for every prompt that fits; vLLM schedules the rows."""
        from vllm.inputs import TokensPrompt

        if len(prompts) != len(schemas):
            raise ValueError(f"{len(prompts)} prompts but {len(schemas)} schemas")
        token_ids = [self.prompt_ids(p) for p in prompts]
        results = [too_long(len(ids), max_new_tokens, self.context_window) for ids in token_ids]
        fit = [i for i, result in enumerate(results) if result is None]
        if fit:
            outputs = self.llm.generate([TokensPrompt(prompt_token_ids=token_ids[i]) for i in fit],
                                        [self._params(schemas[i], max_new_tokens) for i in fit], use_tqdm=False)
            for i, output in zip(fit, outputs, strict=True):
                results[i] = self._generation(output.outputs[0], self._schema(schemas[i])[1])
        return results  # type: ignore[return-value]

    def _schema(self, schema: type[BaseModel]) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
        """The grammar spec of a schema and its label fields, built once."""
        if schema not in self._schemas:
            spec = grammar_spec(schema)
            self._schemas[schema] = (spec, literal_fields(spec))
        return self._schemas[schema]

    def _params(self, schema: type[BaseModel], max_new_tokens: int) -> Any:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        spec, fields = self._schema(schema)
        return SamplingParams(
            temperature=0.0, max_tokens=max_new_tokens, seed=0, detokenize=False,
            logprobs=LOGPROBS if fields else None,
            structured_outputs=StructuredOutputsParams(json=spec),
            extra_args={GUARD_ARG: True} if self.repeat_guard else None,
        )

    def _generation(self, completion: Any, fields: dict[str, tuple[str, ...]]) -> Generation:
        ids = list(completion.token_ids)
        return Generation(
            # exactly the text the grammar accepted, decoded as the transformers engine does
            text=self.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False),
            finished=completion.finish_reason != "length",
            new_tokens=len(ids),
            label_probs=self._label_probs(ids, completion.logprobs, fields) if fields else (),
        )

    def _label_probs(
        self, ids: list[int], logprobs: Any, fields: dict[str, tuple[str, ...]]
    ) -> tuple[dict[str, float], ...]:
        """At each label choice in the answer, each label's probability (`grammar.read_labels`)
        from the position's top logprobs, which vLLM computes after the grammar's mask."""
        if not logprobs:
            return ()

        def positions() -> Iterator[tuple[str, Iterator[tuple[str, float]]]]:
            for k, token in enumerate(ids):
                top = logprobs[k] if k < len(logprobs) and logprobs[k] else {}
                yield (piece_after(self.tokenizer, ids[max(0, k - CONTEXT_TOKENS):k], token),
                       ((self._text(t), math.exp(lp.logprob)) for t, lp in top.items() if lp.logprob > -math.inf))

        return tuple(read_labels(positions(), fields).readings)

    def _text(self, token: int) -> str:
        if token not in self._token_text:
            self._token_text[token] = str(self.tokenizer.decode([token]))
        return self._token_text[token]
