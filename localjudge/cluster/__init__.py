"""Scoring on a Ray cluster (`localjudge score --ray`): Ray Data schedules, localjudge's judges judge.

`plan` (no Ray: judge and scorer specs, the batch plan, an actor's work on a batch, the driver's
collector) and `runner` (`evaluate_on_ray`: the actor pool through Ray Data; Ray is imported there,
inside functions, so importing this folder loads no Ray). See docs/ray.md.
"""

from localjudge.cluster.plan import (
    Collector,
    JudgeSpec,
    ScorerFactory,
    ScorerSpec,
    plan_batches,
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

__all__ = ["OFFLINE_ENV", "RAY_MISSING", "ClusterError", "Collector", "JudgeActor", "JudgeSpec", "RayMissingError",
           "ScorerFactory", "ScorerSpec", "evaluate_on_ray", "plan_batches", "ray_session", "score_batch",
           "scorer_factory"]
