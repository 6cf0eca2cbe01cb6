"""Scoring on a Ray cluster (`localjudge score --ray`): Ray Data schedules, localjudge's judges judge.

`plan` (no Ray: scorer specs, an actor's work on a batch through the one planner of
`localjudge.evaluation`, the driver's collector) and `runner` (`evaluate_on_ray`: the actor pool
through Ray Data; Ray is imported there, inside functions, so importing this folder loads no Ray).
See docs/ray.md.
"""

from localjudge.cluster.plan import (
    Collector,
    JudgeSpec,
    ScorerFactory,
    ScorerSpec,
    score_batch,
    scorer_factory,
)
from localjudge.cluster.runner import (
    OFFLINE_ENV,
    RAY_MISSING,
    ClusterError,
    JudgeActor,
    RayMissingError,
    evaluate_on_ray,
    ray_session,
)
from localjudge.evaluation import plan_batches  # the one planner's, as the driver plans with it

__all__ = ["OFFLINE_ENV", "RAY_MISSING", "ClusterError", "Collector", "JudgeActor", "JudgeSpec", "RayMissingError",
           "ScorerFactory", "ScorerSpec", "evaluate_on_ray", "plan_batches", "ray_session", "score_batch",
           "scorer_factory"]
