"""A judge spec: which judge to load, as one frozen value (a model path, an engine, its options,
its CPU threads), and how it is placed in the process that loads it.

Every door builds one and loads through it: `localjudge score` and the other commands (their
flags), a sweep's model entry, the pytest plugin's options and each Ray actor (a spec travels
pickled). `checked` refuses what cannot load with typed errors (`choice.EngineOptionError`,
`MissingOptionError`, `OptionValueError`) that each door words in its own terms (a flag, a key,
a plugin option); `check` adds the model path's files (`ModelPathError`); `load` places this
process (`placement`: threads, a data-parallel rank's GPUs or cores, the environment vLLM reads)
and returns the judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localjudge.engines.choice import ENGINE_OF, check_judge, check_threads
from localjudge.engines.model_files import check_model_dir
from localjudge.judge import Judge


@dataclass(frozen=True)
class JudgeSpec:
    """How to load a judge: `load_judge(model, engine=engine, **options)`, placed by `threads`.

    The model is a local path (on a cluster: the same on every node, or on a shared mount);
    nothing is downloaded. On the server engine it is the served model's tokenizer folder, or None.
    `threads`: CPU threads of a local engine in the process that loads it (torch's; the cores
    vLLM's CPU engine binds); None: the engine's default.
    """

    model: str | Path | None
    engine: str = "transformers"
    options: Mapping[str, Any] = field(default_factory=dict)
    threads: int | None = None

    def checked(self) -> dict[str, Any]:
        """The options that are set (not None), after every check that reads no file
        (`choice.check_judge`: its typed errors, in its order)."""
        return check_judge(self.model, self.engine, self.options, self.threads)

    def check(self) -> None:
        """`checked`, and a local engine's model path is a model (`ModelPathError`, one line): a
        bad path fails here, not in every Ray actor or after a sweep's first model."""
        given = self.checked()
        if self.model is not None and ENGINE_OF[self.engine].needs == "model":
            check_model_dir(self.model, allow_pickle=bool(given.get("allow_pickle")))

    def load(self, rank: str | None = None, *, log_level: str | None = None) -> Judge:
        """The judge, loaded in this process once it is placed for the engine.

        Args:
            rank: This process's device in a data-parallel run (``cuda:N``, ``cpu``), where each
                rank runs its own engine: its GPUs or its share of the cores. None: not a rank.
            log_level: The engine's own log lines go to stderr at this level (vLLM's); None: as
                the engine sets them.
        """
        given = self.checked()
        engine = ENGINE_OF[self.engine]
        if engine.place is not None:
            engine.place(given, threads=self.threads, rank=rank, log_level=log_level)
        return engine.load(self.model, given)


JudgeSource = JudgeSpec | Callable[[], Judge] | None  # a spec, a picklable function, or no judge


def load_source(judge: JudgeSource) -> Judge | None:
    """The judge of a source, loaded (in a Ray actor)."""
    if judge is None:
        return None
    return judge.load() if isinstance(judge, JudgeSpec) else judge()


def set_threads(threads: int | None, engine: str = "transformers") -> None:
    """An engine's CPU threads in this process, as `JudgeSpec.load` sets them (for scripts that
    load their judge another way)."""
    check_threads(threads)
    engine_of = ENGINE_OF[engine]
    if engine_of.place is not None:
        engine_of.place({}, threads=threads, rank=None, log_level=None)
