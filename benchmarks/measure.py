"""What the benchmark scripts share: timers, memory, judge wrappers, rows in, tables and JSON out.

A module, not a script: importing it sets no environment variable, patches nothing and imports
neither torch nor a model. Scripts run as `python benchmarks/NAME.py` find it as `import measure`;
those in `benchmarks/peers/` and `benchmarks/gpu/` put `benchmarks/` on `sys.path` first.

- `set_offline_env`: call first in a script's `main`, before torch is imported.
- `Stopwatch`, `Tally`, `ForwardTimer` (prefill vs decode, by forward hooks) and
  `timed_processor` (the grammar processor, patched only inside its `with` block).
- `peak_rss_mb`: the process's high-water mark (`ru_maxrss`).
- `RecordingJudge` (each generate call's prompts, tokens and seconds) and `CappedJudge`
  (`max_new_tokens` capped): judges that wrap a judge.
- `set_torch_threads` (`--threads`), `load_rows`, `markdown_table`, `write_json`.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, final

if TYPE_CHECKING:
    from pydantic import BaseModel

    from localjudge.judge import ChatPrompt, Generation, Judge

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "models" / "smollm2-135m-instruct"
EXAMPLE_DATA = ROOT / "examples" / "example.jsonl"
Row = dict[str, Any]  # one data row: input, output, context, run_id


def set_offline_env(extra: Mapping[str, str] | None = None) -> None:
    """No TorchDynamo warm-up (unless the caller's environment asks for it) and no hub access,
    plus `extra`. Call it before torch is imported: torch reads TORCHDYNAMO_DISABLE then."""
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
    os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(extra or {})})


# --- time and memory ---------------------------------------------------------------------


def peak_rss_mb() -> float:
    """The process's peak resident memory so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synchronize(device: Any) -> None:
    """Wait for queued GPU work, so wall-clock timers measure it (no-op on CPU)."""
    if getattr(device, "type", "cpu") == "cuda":
        import torch

        torch.cuda.synchronize(device)


@final
class Stopwatch:
    """Wall-clock seconds of a `with` block: `seconds` runs on inside it, is fixed after it."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.stopped: float | None = None

    def __enter__(self) -> Stopwatch:
        self.started, self.stopped = time.perf_counter(), None
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped = time.perf_counter()

    @property
    def seconds(self) -> float:
        return (time.perf_counter() if self.stopped is None else self.stopped) - self.started


@dataclass
class Tally:
    """Calls, seconds and items (rows, tokens or steps) accumulated by a timer."""

    calls: int = 0
    seconds: float = 0.0
    items: int = 0

    def add(self, seconds: float, items: int = 1) -> None:
        self.calls += 1
        self.seconds += seconds
        self.items += items


@final
class ForwardTimer:
    """Times every top-level forward of a model with hooks: prefill vs decode.

    A forward over more than one new position per row is prefill (the prompt, or the judge's
    shared prefix), unless it is a draft window of the judge's own decode loop (at most
    1 + `localjudge.engines.transformers.decode.MAX_DRAFT` positions over a non-empty cache): those are `window`
    (a prefill of so few uncached tokens would count there too: rare, and small); one
    position per row is a decode step. For decode steps it also adds up
    the attended length (batch x key/value positions), for a KV-cache traffic estimate. The
    hooks are on the model object only while the `with` block runs.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.device = model.device
        self.prefill = Tally()  # items: prompt tokens (batch x width)
        self.decode = Tally()  # items: rows decoded (one token each)
        self.window = Tally()  # items: positions of draft windows (batch x width)
        self.kv_positions = 0  # sum over decode steps of batch x attended length
        self.shape = (0, 0)  # of the forward in flight: batch, new positions
        self.cached = 0  # positions already in its cache
        self.attended = 0
        self.started = 0.0
        self.handles: list[Any] = []

    def __enter__(self) -> ForwardTimer:
        self.handles = [
            self.model.register_forward_pre_hook(self.before, with_kwargs=True),
            self.model.register_forward_hook(self.after, with_kwargs=True),
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def before(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        ids: Any = kwargs.get("input_ids")
        if ids is None:
            ids = args[0] if args else kwargs.get("inputs_embeds")
        self.shape = (0, 0) if ids is None else (int(ids.shape[0]), int(ids.shape[1]))
        mask: Any = kwargs.get("attention_mask")
        self.attended = int(mask.shape[-1]) if hasattr(mask, "shape") else self.shape[1]
        self.cached = self.attended - self.shape[1]
        synchronize(self.device)
        self.started = time.perf_counter()

    def after(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
        synchronize(self.device)
        seconds = time.perf_counter() - self.started
        batch, width = self.shape
        from localjudge.engines.transformers.decode import MAX_DRAFT

        if 1 < width <= 1 + MAX_DRAFT and self.cached > 0:
            self.window.add(seconds, batch * width)
        elif width > 1:
            self.prefill.add(seconds, batch * width)
        else:
            self.decode.add(seconds, batch)
            self.kv_positions += batch * self.attended


@contextmanager
def timed_processor(device: Any) -> Iterator[dict[str, Tally]]:
    """Time the row-wise grammars (`RowGrammars`, under either decoder): their construction
    (one matcher per row) and every call that masks, feeds or drafts.

    The judge builds them inside each call, so the class's methods are wrapped for the duration
    of the `with` block and put back when it ends, even on an error. "steps" adds up the calls
    of `allowed` (masks), `constrain` (masking one row's logits, label probabilities, the
    repetition guard), `feed` and `forced` (drafts).
    """
    from localjudge.engines.transformers.row_grammars import RowGrammars

    tallies = {"setup": Tally(), "steps": Tally()}
    names = ("__init__", "allowed", "constrain", "feed", "forced")
    originals = {name: getattr(RowGrammars, name) for name in names}

    def wrap(name: str) -> Any:
        original, tally = originals[name], tallies["setup" if name == "__init__" else "steps"]

        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            out = original(self, *args, **kwargs)
            if name in ("allowed", "constrain"):
                synchronize(device)
            tally.add(time.perf_counter() - start)
            return out
        return timed

    for name in names:
        setattr(RowGrammars, name, wrap(name))
    try:
        yield tallies
    finally:
        for name, original in originals.items():
            setattr(RowGrammars, name, original)


# --- judges around a judge ---------------------------------------------------------------


@dataclass
class RecordedCall:
    """One `generate` call, as a ceiling replays it."""

    prompts: list[Any]  # the chat prompts the judge generated for (context overflows left out)
    longest: int  # most new tokens any of its rows generated: the call's decode steps
    tokens: int  # new tokens over all its rows
    seconds: float
    schemas: list[Any]  # the schema of each prompt kept
    generations: list[Any]  # the judge's output for each prompt kept
    max_new_tokens: int  # the call's token budget


@final
class RecordingJudge:
    """Passes calls through to `judge`; records each call's prompts, schemas, outputs, token
    counts and time."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.calls: list[RecordedCall] = []

    @property
    def identity(self) -> str:
        return self.judge.identity

    def generate(self, prompts: Sequence[ChatPrompt], schemas: Sequence[type[BaseModel]], *,
                 max_new_tokens: int) -> list[Generation]:
        start = time.perf_counter()
        out = self.judge.generate(prompts, schemas, max_new_tokens=max_new_tokens)
        seconds = time.perf_counter() - start
        made = [(p, s, g) for p, s, g in zip(prompts, schemas, out, strict=True) if g.error is None]
        self.calls.append(RecordedCall(
            prompts=[p for p, _, _ in made],
            longest=max((g.new_tokens for _, _, g in made), default=0),
            tokens=sum(g.new_tokens for _, _, g in made),
            seconds=seconds,
            schemas=[s for _, s, _ in made],
            generations=[g for _, _, g in made],
            max_new_tokens=max_new_tokens,
        ))
        return out


def replayable_calls(judge: Any, calls: Sequence[RecordedCall]) -> list[dict[str, Any]]:
    """Recorded calls as `bench_llama.py replay` reads them: per call its token budget, per row
    the prompt's token ids (`judge.prompt_ids`), its JSON schema and the judge's answer."""
    return [{"max_new_tokens": c.max_new_tokens, "rows": [
        {"prompt_ids": judge.prompt_ids(p), "schema": s.model_json_schema(), "ours": g.text,
         "ours_finished": g.finished, "ours_tokens": g.new_tokens}
        for p, s, g in zip(c.prompts, c.schemas, c.generations, strict=True)]} for c in calls]


@final
class CappedJudge:
    """Passes calls through to `judge` with `max_new_tokens` capped (None: unchanged).

    A cap bounds each call's decode steps, so a sweep fits a time budget and row times compare
    across models; answers it cuts off are retried by the engine (capped again) and then
    recorded as unscored.
    """

    def __init__(self, judge: Judge, cap: int | None) -> None:
        self.judge, self.cap = judge, cap

    @property
    def identity(self) -> str:
        return self.judge.identity

    def generate(self, prompts: Sequence[ChatPrompt], schemas: Sequence[type[BaseModel]], *,
                 max_new_tokens: int) -> list[Generation]:
        limit = max_new_tokens if self.cap is None else min(max_new_tokens, self.cap)
        return self.judge.generate(prompts, schemas, max_new_tokens=limit)


# --- in and out ----------------------------------------------------------------------------


def set_torch_threads(threads: int | None) -> None:
    """`torch.set_num_threads(threads)` when given (`--threads`): the library leaves it alone, and
    the scripts set it as the CLI does."""
    from localjudge.engines import set_threads

    set_threads(threads)


def load_rows(path: Path, n: int) -> list[Row]:
    """`n` rows cycled from a JSONL file, `run_id` "0", "1", ...; rows with an empty output are
    left out (every scorer decides them without the model)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("output")]
    if not rows:
        raise SystemExit(f"{path}: no rows with a non-empty output")
    return [dict(rows[i % len(rows)], run_id=str(i)) for i in range(n)]


def markdown_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A markdown table: the first row's keys as the header, one line per row."""
    if not rows:
        return "(no rows)"
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(str(r[h]) for h in head) + " |" for r in rows])


def write_json(path: str | Path, data: Any, *, indent: int = 2, ensure_ascii: bool = True) -> None:
    """Write the figures to `path` as JSON (UTF-8)."""
    Path(path).write_text(json.dumps(data, indent=indent, ensure_ascii=ensure_ascii), encoding="utf-8")
