"""`localjudge score --ray [ADDRESS]`: the same scoring on a Ray cluster (docs/ray.md).

The flags map onto `localjudge.cluster.evaluate_on_ray`; the model flags become the `JudgeSpec`
every actor loads its judge by; `--out` and its resume log work as without Ray.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from localjudge.cli.model_flags import judge_spec
from localjudge.cli.shared import Bars, CliError, ScorerOptions, load_modules
from localjudge.cluster import ClusterError, RayMissingError, ScorerSpec, evaluate_on_ray
from localjudge.engines import JudgeSpec
from localjudge.evaluation import Columns, Evaluation, ResultStore

RAY_FLAGS = ("judges", "gpus_per_judge", "cpus_per_judge")


def add_ray_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Ray cluster (see docs/ray.md)")
    group.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="score on a Ray cluster through Ray Data: the cluster at ADDRESS (\"auto\", "
                            "\"ray://head:10001\"), or without one the cluster Ray finds (RAY_ADDRESS, one started "
                            "on this machine) or a new local one; every node needs the model at the same path")
    group.add_argument("--judges", type=int, default=None, metavar="N",
                       help="with --ray: actors, each loading one judge (default: 1; at most one per batch of "
                            "rows: more are capped, saying so)")
    group.add_argument("--gpus-per-judge", type=float, default=None, metavar="G",
                       help="with --ray: GPUs each judge's actor holds (default: 0, CPU; with vLLM's "
                            "--tensor-parallel-size N, give N)")
    group.add_argument("--cpus-per-judge", type=float, default=None, metavar="C",
                       help="with --ray: CPUs each judge's actor holds (default: 1); its torch threads follow")


def check_ray_flags(args: argparse.Namespace, world: int) -> None:
    """The Ray flags need --ray; --ray is not for `accelerate launch` or --threads. Before any model loads."""
    given = [flag for flag in RAY_FLAGS if getattr(args, flag) is not None]
    if args.ray is None:
        if given:
            raise CliError(f"--{given[0].replace('_', '-')} needs --ray")
        return
    if world > 1:
        raise CliError("--ray runs its own judges: start it with `localjudge score`, not `accelerate launch`")
    if args.threads is not None:
        raise CliError("--threads is not for --ray: give --cpus-per-judge (each actor's torch threads follow it)")
    if args.device_map is not None:
        raise CliError("--device-map is not for --ray: each actor uses the GPUs Ray gives it (--gpus-per-judge)")
    if args.judges is not None and args.judges < 1:
        raise CliError(f"--judges must be at least 1, got {args.judges}")
    if args.gpus_per_judge is not None and args.gpus_per_judge < 0:
        raise CliError(f"--gpus-per-judge must be at least 0, got {args.gpus_per_judge:g}")
    if args.cpus_per_judge is not None and args.cpus_per_judge <= 0:
        raise CliError(f"--cpus-per-judge must be above 0, got {args.cpus_per_judge:g}")


def score_on_ray(args: argparse.Namespace, names: list[str], options: ScorerOptions, dataset: Any,
                 columns: Columns, judged: bool) -> Evaluation:
    """Score `dataset` on the cluster, resuming from and appending to OUT.progress/ as `score` does."""
    judge = judge_spec(args) if judged else None
    if judge is not None:
        judge.check()  # a bad model path: one line, before Ray starts
    store = ResultStore(f"{args.out}.progress") if args.out and not args.no_resume else None
    modules = load_modules(getattr(args, "scorer_module", None) or [])  # loaded already: as each actor loads them
    specs = [ScorerSpec(name, args.scale, args.mode, options.get(name, {}), args.compat, modules) for name in names]
    judges = min(args.judges or 1, batch_count(len(dataset), args.batch_size))
    if args.judges is not None and judges < args.judges:
        print(f"--judges {args.judges}: {len(dataset)} row(s) make {judges} batch(es) of --batch-size "
              f"{args.batch_size}, one per actor, so {judges} actor(s); a smaller --batch-size gives more actors work",
              file=sys.stderr)
    print(f"judge: {judge.model} ({judge.engine}) in {judges} Ray actor(s)" if judge
          else "judge: none (every scorer is model-free)", file=sys.stderr)
    bars = Bars(len(dataset), not args.quiet)
    try:
        return evaluate_on_ray(dataset, specs, judge, address=args.ray or None, judges=judges,
                               gpus_per_judge=args.gpus_per_judge or 0.0, cpus_per_judge=args.cpus_per_judge or 1.0,
                               batch_size=args.batch_size, columns=columns, store=store, progress=bars)
    except (RayMissingError, ClusterError) as error:
        raise CliError(str(error)) from None
    finally:
        bars.close()


def batch_count(rows: int, batch_size: int) -> int:
    """How many judge batches `rows` rows make (`plan_batches`' count), each one Ray item."""
    return max(1, -(-rows // batch_size))


# --- sweeps: `ray:` in the config ------------------------------------------------------------

SWEEP_KEYS: dict[str, type | tuple[type, ...]] = {"address": str, "judges": int, "gpus_per_judge": (int, float),
                                                  "cpus_per_judge": (int, float)}


def sweep_ray(config: dict[str, Any], where: str) -> dict[str, Any] | None:
    """A sweep config's ``ray:`` checked: ``true`` or a mapping of `SWEEP_KEYS` (as the `--ray`,
    `--judges`, `--gpus-per-judge`, `--cpus-per-judge` flags); None without it (or ``false``)."""
    value = config.get("ray")
    if value is None or value is False:
        return None
    settings = {} if value is True else value
    if not isinstance(settings, dict):
        raise ValueError(f"{where}: 'ray' must be true or a mapping of {', '.join(SWEEP_KEYS)}")
    for key, item in settings.items():
        kind = SWEEP_KEYS.get(key)
        if kind is None or isinstance(item, bool) or not isinstance(item, kind):
            raise ValueError(f"{where}: ray: {key}: {item!r}: known keys are {', '.join(SWEEP_KEYS)} (address a "
                             "string, judges a whole number, gpus_per_judge and cpus_per_judge numbers)")
    if settings.get("judges", 1) < 1 or settings.get("gpus_per_judge", 0) < 0 or settings.get("cpus_per_judge", 1) <= 0:
        raise ValueError(f"{where}: ray: judges must be at least 1, gpus_per_judge at least 0, cpus_per_judge above 0")
    for model in config["models"]:
        if isinstance(model, dict) and model.get("threads"):
            raise ValueError(f"{where}: model entry {model!r}: threads is not for ray: give ray's cpus_per_judge")
    return dict(settings)


def sweep_cell_on_ray(settings: dict[str, Any], judge: JudgeSpec, dataset: Any, spec: ScorerSpec, *, columns: Columns,
                      batch_size: int, store: ResultStore, progress: Bars) -> Evaluation:
    """One sweep cell on the cluster (the session `ray_session` opened); its actors load the judge."""
    return evaluate_on_ray(dataset, [spec], judge, judges=settings.get("judges", 1),
                           gpus_per_judge=float(settings.get("gpus_per_judge", 0.0)),
                           cpus_per_judge=float(settings.get("cpus_per_judge", 1.0)), batch_size=batch_size,
                           columns=columns, store=store, progress=progress)
