"""`evaluate_on_ray`: `evaluate`'s work on a Ray cluster, through Ray Data.

Ray schedules; localjudge judges. The driver reads and plans (`localjudge.cluster.plan`), Ray Data
hands each judge batch to a pool of actors, each holding one judge (its GPUs: `gpus_per_judge`)
and the scorers built on it, and the driver stores each batch's results as it comes back
(`iter_batches` over the mapped dataset: an interrupt loses at most the batches in flight).

Faults: an exception raised while an actor scores a batch comes back as each row's unscored
result (`judge_failed`, its line; `plan.score_batch`). An actor that dies (its process killed, its
node gone) is restarted by Ray and its batch retried, `max_retries` times. A batch that still
fails is dropped by Ray Data (`DataContext.max_errored_blocks`), found missing by the driver and
sent again one row per item; a row that kills its actor every time then ends unscored
(`judge_failed`, with why), never lost, never hanging the run, and is tried again by the next
run (transient results are not stored).

Ray is imported here only, inside functions: `import localjudge` and `localjudge.cluster` never
load it. Nothing leaves the machine: usage stats off, no dashboard, `HF_HUB_OFFLINE=1` (and the
other hubs' offline switches) in every actor; a local cluster started here listens on 127.0.0.1
only (`ray_session`). The actors' own output (an actor's traceback) goes to Ray's session logs,
not the driver's terminal, unless this module logs at DEBUG (``localjudge --debug``).
"""

from __future__ import annotations

import logging
import os
import pickle
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from typing import Any

from localjudge.cluster import address as cluster_address
from localjudge.cluster.plan import (
    Collector,
    JudgeSource,
    JudgeSpec,
    ScorerFactory,
    ScorerSpec,
    load_source,
    pack,
    score_packed,
    scorer_factory,
)
from localjudge.evaluation import (
    Columns,
    Evaluation,
    Progress,
    ResultStore,
    check_result_columns,
    plan_batches,
    resumable,
    rows_to_runs,
    to_dataset,
    with_results,
)
from localjudge.judge import FakeJudge

log = logging.getLogger(__name__)

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "RAY_USAGE_STATS_ENABLED": "0"}
RAY_MISSING = "the Ray path needs ray: pip install 'localjudge-evals[ray]' (or scripts/setup_ray.sh in a checkout)"


class RayMissingError(ImportError):
    """`ray` is not installed."""


class ClusterError(RuntimeError):
    """The run failed on the cluster (an actor could not start its judge, the cluster went away):
    one line, the error raised there; Ray's logs have the rest."""


def evaluate_on_ray(
    data: Any,
    scorers: Sequence[ScorerSpec] | ScorerFactory,
    judge: JudgeSource,
    *,
    address: str | None = None,
    judges: int = 1,
    gpus_per_judge: float = 0.0,
    cpus_per_judge: float = 1.0,
    batch_size: int = 8,
    columns: Columns = Columns(),
    store: ResultStore | None = None,
    progress: Progress | None = None,
    max_retries: int = 2,
    env_vars: Mapping[str, str] | None = None,
) -> Evaluation:
    """Score every row with every scorer on a Ray cluster: `evaluate`'s rows, columns and keys.

    Args:
        data: A `datasets.Dataset` or a list of dicts (read it with `read_table`).
        scorers: `ScorerSpec`s, or a picklable function building the scorers on a judge (each
            actor calls it with its own judge).
        judge: How each actor gets its judge: a `JudgeSpec` (checked here, before anything starts),
            a picklable function returning a judge, or None when every scorer is model-free.
        address: The Ray cluster (``"auto"``, ``"ray://head:10001"``); None: the one Ray finds
            (``RAY_ADDRESS``, a cluster started on this machine) or a new local one. When Ray is
            already initialised in this process, that cluster is used and left running.
        judges: Actors, one judge each; at most one per batch (more would load judges for nothing).
        gpus_per_judge: GPUs each actor holds (0: CPU; 2 with ``tensor_parallel_size=2`` on vLLM).
        cpus_per_judge: CPUs each actor holds.
        batch_size: Rows per judge call (one Ray item, one actor call).
        columns: Where the input, output, context and run id live.
        store: Resume log: rows whose key is in it are not judged again; each batch's results are
            appended as it comes back.
        progress: Called after each batch with each scorer's name and the rows finished.
        max_retries: Times Ray retries a batch whose actor died, before the fallback.
        env_vars: More environment variables for the actors.

    Returns:
        An `Evaluation` like `evaluate`'s (its `samples` empty: the samples were made in the actors).
    """
    started = time.perf_counter()
    factory = scorer_factory(scorers)
    built = factory(FakeJudge({}))  # builds each scorer once here: a bad option fails now
    names = [s.name for s in built]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"give at least one scorer, each once; got {names}")
    dataset = to_dataset(data)
    check_result_columns(dataset.column_names, names)
    runs = rows_to_runs(dataset, columns)
    batches = plan_batches(runs, batch_size)  # checks batch_size
    if judges < 1 or gpus_per_judge < 0 or cpus_per_judge <= 0 or max_retries < 0:
        raise ValueError(f"judges must be at least 1, gpus_per_judge at least 0, cpus_per_judge above 0 and "
                         f"max_retries at least 0; got {judges}, {gpus_per_judge}, {cpus_per_judge}, {max_retries}")
    if isinstance(judge, JudgeSpec):
        judge.check()  # a bad model path: one line, before any actor starts
    if judges > len(batches):  # an actor without a batch would load a model for nothing
        log.info("%d judges asked for, %d batch(es) of rows: %d actor(s)", judges, len(batches), len(batches))
        judges = len(batches)
    done = resumable(store.load(), built) if store is not None else {}  # a score out of range: scored again
    collector = Collector(names, [run.get("run_id") for run in runs], store, done)
    with ray_session(address) as ray:
        try:
            _run(ray, runs, batches, collector, names, judge, factory, frozenset(done), judges=judges,
                 gpus=gpus_per_judge, cpus=cpus_per_judge, retries=max_retries, env={**OFFLINE_ENV, **(env_vars or {})},
                 progress=progress)
        except ray.exceptions.RayError as error:  # the cause's own line, not Ray's pages of traceback
            log.debug("the Ray run failed", exc_info=error)
            lines = [line.strip() for line in str(error).splitlines() if line.strip()]
            raise ClusterError(f"the Ray run failed: {lines[-1] if lines else type(error).__name__} "
                               "(Ray's logs have the rest)") from error
    indices = list(range(len(runs)))
    results = collector.in_order(indices)
    return Evaluation(with_results(dataset, results), collector.summary(indices, time.perf_counter() - started),
                      results)


def _run(ray: Any, runs: Sequence[Mapping[str, Any]], batches: list[list[int]], collector: Collector,
         names: Sequence[str], judge: JudgeSource, factory: ScorerFactory, done: frozenset[str], *, judges: int,
         gpus: float, cpus: float, retries: int, env: Mapping[str, str], progress: Progress | None) -> None:
    """Every batch through the actor pool, then the rows of batches Ray gave up on, one at a time."""
    if progress:
        for name in names:
            progress(name, 0)  # starts each scorer's clock, as `evaluate` does
    pool = _Pool(ray, judge, factory, done, judges=judges, gpus=gpus, cpus=cpus, retries=retries, env=env)
    for rows in pool.score([pack(batch, runs) for batch in batches]):
        _take(collector, rows, names, progress)
    missing = collector.missing(range(len(runs)))
    if missing:  # batches Ray gave up on: each row alone, so one bad row costs only itself
        log.warning("%d row(s) lost with their batches' actors; trying them one at a time", len(missing))
        for rows in pool.score([pack([i], runs) for i in missing]):
            _take(collector, rows, names, progress)
    collector.lose(collector.missing(range(len(runs))),
                   f"the Ray actor scoring this row died on each of {retries + 1} tries in its batch and "
                   f"{retries + 1} alone (see the Ray logs); the next run tries it again")


def _take(collector: Collector, rows: Sequence[tuple[int, Any]], names: Sequence[str],
          progress: Progress | None) -> None:
    fresh = [i for i, _ in rows if not collector.complete(i)]
    collector.add(rows)
    if progress:
        for name in names:
            progress(name, len(fresh))


# A local cluster localjudge starts itself listens on the loopback address only. Ray 2.60 takes a
# node's address from `services.get_node_ip_address`, which gives 127.0.0.1 only when
# `ray_constants.ENABLE_RAY_CLUSTER` is off (read from this variable when ray is imported, in
# every Ray process it starts); `_node_ip_address="127.0.0.1"` alone is turned back into the
# machine's address (`resolve_ip_for_localhost`). A cluster the user names is theirs: untouched.
LOCAL_ONLY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
LOOPBACK = "127.0.0.1"
# Without DEBUG, this driver does not print each retry of a task as it fails (an actor that cannot
# start: its traceback once per retry, on stdout); the last failure still comes back as the error.
QUIET_RETRIES_ENV = {"RAY_enable_output_error_log_if_still_retry": "0"}


@contextmanager
def ray_session(address: str | None = None) -> Iterator[Any]:
    """The `ray` module, connected: to the cluster Ray is already initialised with in this process
    (left running), else to `address` (None: the one Ray finds, or a new local one), shut down at
    the end. Usage stats off (`RAY_USAGE_STATS_ENABLED=0` while the session lasts, whatever it was
    set to), no dashboard. A new local cluster listens on 127.0.0.1 only (`LOCAL_ONLY_ENV`). A named
    address is tried first (one line when nothing answers), and one on this machine is reached as
    `ray start` set it up: token mode, a loopback-only binding (`localjudge.cluster.address`). The
    actors' output reaches this process only when this module logs at DEBUG."""
    ray = _import_ray()
    if ray.is_initialized():
        yield ray
        return
    local, debug = _starts_local(ray, address), log.isEnabledFor(logging.DEBUG)
    named, here, loopback = cluster_address.target(address), False, local
    if named is not None:
        problem = cluster_address.unreachable(named)
        if problem is not None:
            raise ClusterError(problem)
        node_ip = ray._private.services.get_node_ip_address()
        here = cluster_address.on_this_machine(named, node_ip)
        loopback = cluster_address.bound_to_loopback(named, node_ip)
    # Usage stats forced off, a user's =1 too: nothing leaves the machine.
    with _environment({"RAY_USAGE_STATS_ENABLED": "0", **(LOCAL_ONLY_ENV if loopback else {}),
                       **({} if debug else QUIET_RETRIES_ENV)}):
        with cluster_address.local_token_auth(ray) if here else nullcontext():
            with _loopback_only(ray, loopback):
                try:
                    ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING,
                             log_to_driver=debug, **({"_node_ip_address": LOOPBACK} if loopback else {}))
                except ConnectionError as error:
                    raise ClusterError(f"{error}; {cluster_address.AUTH_HINT}") from None
            try:
                yield ray
            finally:
                ray.shutdown()


def _starts_local(ray: Any, address: str | None) -> bool:
    """Whether `ray.init(address)` starts a new local cluster: no address (or ``"local"``) and none
    Ray finds (``RAY_ADDRESS``, a cluster `ray start` left on this machine): Ray's own test."""
    if address not in (None, "local"):
        return False
    return ray._private.services.canonicalize_bootstrap_address(address) is None


@contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    """`values` in `os.environ` (Ray's processes inherit them) while the block runs; then as before."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def _loopback_only(ray: Any, local: bool) -> Iterator[None]:
    """Ray's `ENABLE_RAY_CLUSTER` off in this process while a local cluster starts (ray was imported
    before `LOCAL_ONLY_ENV` was set), so its node address is 127.0.0.1; as before after."""
    if not local:
        yield
        return
    ray_constants = ray._private.ray_constants
    saved = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def _import_ray() -> Any:
    try:
        import ray
        import ray._private.ray_constants  # noqa: F401 - read by `ray_session` (ray itself loads both)
        import ray._private.services  # noqa: F401
        with suppress(ImportError):  # token authentication: Ray 2.5x and later
            import ray._private.authentication.authentication_token_setup  # noqa: F401
        import ray.data  # noqa: F401 - Ray Data is the extra's, not plain ray's
    except ImportError:
        raise RayMissingError(RAY_MISSING) from None
    return ray


class _Pool:
    """Ray Data's actor pool over packed batches: each item goes to one actor, its answer comes back."""

    def __init__(self, ray: Any, judge: JudgeSource, factory: ScorerFactory, done: frozenset[str], *, judges: int,
                 gpus: float, cpus: float, retries: int, env: Mapping[str, str]) -> None:
        self.ray, self.judge, self.factory = ray, judge, factory
        self.done_ref = ray.put(done)  # once in the object store, read by every actor
        self.judges, self.gpus, self.cpus, self.retries, self.env = judges, gpus, cpus, retries, dict(env)

    def score(self, items: list[bytes]) -> Iterator[list[tuple[int, Any]]]:
        """Each item's (row index, outcome) pairs, as actors finish them; items Ray gave up on are
        skipped (the caller finds their rows missing)."""
        if not items:
            return
        from ray.data import DataContext

        context = DataContext.get_current()
        saved = {name: getattr(context, name) for name in _CONTEXT}
        for name, value in _CONTEXT.items():
            setattr(context, name, value)
        try:
            with _ray_data_errors_to_its_log():  # the error comes back to the caller: one line
                dataset = self.ray.data.from_items([{"batch": item} for item in items], override_num_blocks=len(items))
                with warnings.catch_warnings():  # max_restarts and max_task_retries have no named parameter in 2.60
                    warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
                    mapped = dataset.map_batches(
                        JudgeActor, batch_size=1, batch_format="numpy",
                        compute=self.ray.data.ActorPoolStrategy(size=self.judges, max_tasks_in_flight_per_actor=1),
                        fn_constructor_args=(self.judge, self.factory, [self.done_ref]),
                        num_cpus=self.cpus, num_gpus=self.gpus or None, runtime_env={"env_vars": self.env},
                        max_restarts=-1, max_task_retries=self.retries,
                    )
                for batch in mapped.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=0):
                    for blob in batch["batch"]:
                        yield pickle.loads(blob)  # noqa: S301 - our own actors' answer
        finally:
            for name, value in saved.items():
                setattr(context, name, value)


class _NoErrors(logging.Filter):
    """Lets through records below ERROR only."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


@contextmanager
def _ray_data_errors_to_its_log() -> Iterator[None]:
    """Ray Data's errors kept off the terminal while a run lasts (unless this module logs at DEBUG):
    an actor that cannot start is logged by Ray Data with a whole traceback (~160 lines) on its
    console handler, before it reaches the driver as the error `evaluate_on_ray` states in one
    line. Its file handler (``ray-data.log`` in the session's logs) still gets every record."""
    if log.isEnabledFor(logging.DEBUG):
        yield
        return
    consoles = [h for h in logging.getLogger("ray.data").handlers if isinstance(h, logging.StreamHandler)]
    quiet = _NoErrors()
    for handler in consoles:
        handler.addFilter(quiet)
    try:
        yield
    finally:
        for handler in consoles:
            handler.removeFilter(quiet)


# Ray Data's settings for a run, restored after it: a batch whose actor died every time is dropped
# (not the run: its rows are found missing and sent again alone); progress is the caller's to show.
_CONTEXT = {"max_errored_blocks": -1, "enable_progress_bars": False, "print_on_execution_start": False}


class JudgeActor:
    """One Ray actor: loads its judge once, builds the scorers on it, scores the items it is given.

    Args:
        judge: How to get the judge (`JudgeSpec`, a function, or None).
        factory: Builds the scorers on the judge.
        done: A one-element list holding the object ref of the done keys (a list: Ray passes it
            as it is, and the actor reads the set from the object store itself).
    """

    def __init__(self, judge: JudgeSource, factory: ScorerFactory, done: list[Any]) -> None:
        import ray

        self.done: frozenset[str] = ray.get(done[0])
        self.scorers = list(factory(load_source(judge)))

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        answers = [score_packed(self.scorers, bytes(item), self.done) for item in batch["batch"]]
        out: Any = np.empty(len(answers), dtype=object)
        out[:] = answers
        return {"batch": out}
