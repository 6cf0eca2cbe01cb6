"""A judge spec: which judge to load, as one frozen value (a model path, an engine, its options).

Every door builds one and loads through it: `localjudge score` (its flags), a sweep's model entry,
the pytest plugin's options and each Ray actor (a spec travels pickled). `check` refuses what
cannot load (an engine's option given to another, `EngineOptionError`; a path that is not a
model, `ModelPathError`) before anything starts; `load` returns the judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localjudge.engines.choice import check_engine, load_judge
from localjudge.engines.model_files import check_model_dir
from localjudge.judge import Judge


@dataclass(frozen=True)
class JudgeSpec:
    """How to load a judge: `load_judge(model, engine=engine, **options)`.

    The model is a local path (on a cluster: the same on every node, or on a shared mount);
    nothing is downloaded. On the server engine it is the served model's folder, or None.
    """

    model: str | None
    engine: str = "transformers"
    options: Mapping[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """The options fit the engine and a local engine's model path is a model (`ModelPathError`,
        one line): a bad path fails here, not in every actor."""
        check_engine(self.engine, dict(self.options))
        if self.engine != "server":
            if self.model is None:
                raise ValueError(f"the {self.engine} engine needs a local model path")
            check_model_dir(self.model, allow_pickle=bool(self.options.get("allow_pickle")))
        elif "base_url" not in self.options:
            raise ValueError("the server engine needs base_url (the server's URL, e.g. http://127.0.0.1:8000/v1)")

    def load(self) -> Judge:
        return load_judge(None if self.model is None else str(Path(self.model)), engine=self.engine,
                          **dict(self.options))


JudgeSource = JudgeSpec | Callable[[], Judge] | None  # a spec, a picklable function, or no judge


def load_source(judge: JudgeSource) -> Judge | None:
    """The judge of a source, loaded (in a Ray actor)."""
    if judge is None:
        return None
    return judge.load() if isinstance(judge, JudgeSpec) else judge()
