"""The model flags every judging command takes (``--model``, ``--engine``, ``--threads`` and the
engine options' flags, generated: `engine_flags`), and the judge they name: a `JudgeSpec` checked
before any model loads, its errors in the flags' words, and the loaded judge."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from localjudge.cli.engine_flags import CLI_WORDS, engine_flags, given_options
from localjudge.cli.errors import CliError
from localjudge.engines import ENGINES, EngineOptionError, JudgeSpec, MissingOptionError, OptionValueError
from localjudge.judge import Judge

# A group's title in --help, where it is more than the group's name (`Flag.group`).
TITLES = {"server engine": "server engine (see docs/servers.md)"}


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    groups: dict[str, Any] = {"model": parser.add_argument_group("model")}
    model = groups["model"]
    model.add_argument("--model", default=None, metavar="PATH",
                       help="local model directory (safetensors) or .gguf file; never downloaded (required, except "
                            "with --engine server, where it is the served model's tokenizer folder, as --tokenizer, "
                            "and when every scorer is model-free: code scorers and checks load no model)")
    model.add_argument("--engine", choices=ENGINES, default="transformers",
                       help="transformers: localjudge's own decode loop, any model transformers loads (the default); "
                            "vllm: vLLM's scheduler, for GPUs (needs the vllm extra; see docs); server: an "
                            "inference server you already run (--base-url)")
    for flag in engine_flags(CLI_WORDS):
        if flag.group not in groups:
            groups[flag.group] = parser.add_argument_group(TITLES.get(flag.group, flag.group))
        groups[flag.group].add_argument(flag.name, **flag.kwargs)
        if flag.option == "dtype":  # the spec's own flag (`JudgeSpec.threads`), not an engine option
            model.add_argument("--threads", type=int, default=None,
                               help="CPU threads (torch's; the vLLM CPU engine's cores)")


# What an engine cannot load without, in the flags' words (`MissingOptionError.option` -> the flag, what it is).
NEEDS_FLAG = {"model": "--model, a local model directory or .gguf file",
              "base_url": "--base-url, the server's URL (e.g. http://127.0.0.1:8000/v1)"}


def in_flags(error: ValueError) -> str:
    """A judge spec's error (`JudgeSpec.checked`) in the words of the flags that caused it."""
    if isinstance(error, EngineOptionError):
        if error.option == "threads":
            return f"--threads is a flag of the local engines, not of --engine {error.engine}"
        owners = error.owners
        return (f"--{error.option.replace('_', '-')} is a flag of the {' and '.join(owners)} "
                f"engine{'s' if len(owners) > 1 else ''}, not of --engine {error.engine}")
    if isinstance(error, MissingOptionError):
        return f"--engine {error.engine} needs {NEEDS_FLAG.get(error.option, '--' + error.option.replace('_', '-'))}"
    if isinstance(error, OptionValueError):
        return f"--{error.option.replace('_', '-')} must be {error.rule}, got {error.value!r}"
    return str(error)


def judge_spec(args: argparse.Namespace) -> JudgeSpec:
    """The judge the model flags name (only the flags given), checked against the chosen engine
    before any model loads: a flag of another engine, a missing --model or --base-url is a user
    error (`CliError`) naming the flag."""
    spec = JudgeSpec(args.model, args.engine, given_options(lambda option: getattr(args, option, None)),
                     getattr(args, "threads", None))
    try:
        spec.checked()
    except (EngineOptionError, MissingOptionError, OptionValueError) as error:
        raise CliError(in_flags(error)) from None
    return spec


def build_judge(args: argparse.Namespace, device: str | None = None) -> Judge:
    """The judge of the model flags (loads the model and its engine). `device`: this process's
    accelerator in a data-parallel run (``cuda:N``, ``cpu``), where each rank runs its own engine."""
    judge = judge_spec(args).load(device, log_level="DEBUG" if getattr(args, "debug", False) else "WARNING")
    print(f"judge: {judge.identity}", file=sys.stderr)
    return judge
