"""Placing a local engine in this process: its CPU threads, a data-parallel rank's share of the
GPUs or cores, the environment vLLM reads. Process-wide settings, made by `JudgeSpec.load` only
(the commands, a sweep), never by `load_judge`: the library leaves the process alone.

A data-parallel rank (`accelerate launch`) is named by its device: ``cuda:N`` (its local rank N)
or ``cpu`` (its share of the cores, by LOCAL_RANK and LOCAL_WORLD_SIZE). Each engine's `place`
has one signature (`Place`); the server engine has none (a server's GPUs and threads are its own).
Light: torch is imported only to set its threads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Protocol

CORES_BIND = "VLLM_CPU_OMP_THREADS_BIND"  # the cores vLLM's CPU engine binds (a user's value stays)


class Place(Protocol):
    """An engine's placement: sets this process up, and puts what its loader needs of the rank
    into `options` (the checked options, changed in place)."""

    def __call__(self, options: dict[str, Any], *, threads: int | None, rank: str | None,
                 log_level: str | None) -> None: ...


def place_transformers(options: dict[str, Any], *, threads: int | None, rank: str | None,
                       log_level: str | None) -> None:
    """torch's threads (`threads`, else a CPU rank's share of the cores), and a rank's device as
    the model's `device_map`. `log_level`: the engine logs through localjudge's own logging."""
    if not threads and rank == "cpu":
        threads = len(rank_cores()) or None  # more ranks than cores: they share them
    if threads:
        import torch  # heavy: only when asked

        torch.set_num_threads(threads)
    if rank is not None:
        options["device_map"] = rank


def place_vllm(options: dict[str, Any], *, threads: int | None, rank: str | None, log_level: str | None) -> None:
    """vLLM's CPU engine binds its own process to cores (`CORES_BIND`, unless already set): the
    first `threads`, else a CPU rank's share; a GPU rank's GPUs (``CUDA_VISIBLE_DEVICES``, set
    before its engine's processes start: tensor x pipeline parallel GPUs each); its log lines
    to stderr at `log_level` (None: vLLM's own settings)."""
    if threads:
        os.environ.setdefault(CORES_BIND, f"0-{threads - 1}")
    elif rank == "cpu" and (cores := rank_cores()):
        os.environ.setdefault(CORES_BIND, ",".join(map(str, cores)))
    if log_level is not None:  # stdout keeps the results
        os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
        os.environ.setdefault("VLLM_LOGGING_LEVEL", log_level)
    if rank is not None and rank.startswith("cuda"):
        per_rank = (options.get("tensor_parallel_size") or 1) * (options.get("pipeline_parallel_size") or 1)
        local_rank = int(rank.split(":")[1]) if ":" in rank else 0
        os.environ["CUDA_VISIBLE_DEVICES"] = rank_gpus(local_rank, per_rank, os.environ.get("CUDA_VISIBLE_DEVICES"))


def rank_cores() -> list[int]:
    """This data-parallel rank's share of this process's cores (`rank_cpus`; LOCAL_RANK and
    LOCAL_WORLD_SIZE as `accelerate launch` sets them; none set: every core)."""
    return rank_cpus(int(os.environ.get("LOCAL_RANK", "0")), int(os.environ.get("LOCAL_WORLD_SIZE", "1")),
                     os.sched_getaffinity(0))


def rank_gpus(local_rank: int, per_rank: int, visible: str | None) -> str:
    """The GPUs (a ``CUDA_VISIBLE_DEVICES`` value) of one data-parallel rank whose engine takes
    `per_rank` GPUs (tensor x pipeline parallel): the rank's consecutive share of `visible`
    (the current ``CUDA_VISIBLE_DEVICES``; None: all, numbered from 0)."""
    start = local_rank * per_rank
    if visible:
        devices = [d.strip() for d in visible.split(",") if d.strip()]
        if start + per_rank > len(devices):
            raise ValueError(f"rank {local_rank} needs GPUs {start}..{start + per_rank - 1} but only "
                             f"{len(devices)} are visible ({visible})")
        return ",".join(devices[start:start + per_rank])
    return ",".join(str(i) for i in range(start, start + per_rank))


def rank_cpus(local_rank: int, local_world: int, allowed: Iterable[int]) -> list[int]:
    """The CPU cores of one data-parallel rank on a machine without GPUs: its consecutive, equal
    share of `allowed` (this process's cores), so that the ranks' engines do not bind the same
    cores (vLLM's CPU build binds every engine to the first cores it sees). Empty when there are
    more ranks than cores: the ranks then share them."""
    cores = sorted(allowed)
    share = len(cores) // local_world if local_world > 0 else 0
    return cores[local_rank * share:(local_rank + 1) * share] if share else []
