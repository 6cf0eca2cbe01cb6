"""localjudge: offline LLM-as-judge scorers on locally stored models.

Importing the package is light: torch, transformers and llguidance load only when a
`TransformersJudge` is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localjudge.evaluation import (
    Columns,
    Evaluation,
    ItemResult,
    ResultStore,
    RunEvalsResult,
    RunSummary,
    ScorerSummary,
    ThresholdResult,
    evaluate,
    run_evals,
    score_runs,
)
from localjudge.judge import FakeJudge, Generation, Judge, JudgeOutOfMemory, UnscriptedCallError
from localjudge.live import LiveScorer
from localjudge.result import ScoreResult
from localjudge.samples import InvalidRunError, Sample, ToolCall, extract_tool_calls, extract_tool_results
from localjudge.scorers import (
    SCORERS,
    answer_relevancy_scorer,
    answer_similarity_scorer,
    bias_scorer,
    build_scorer,
    context_precision_scorer,
    context_recall_scorer,
    context_relevance_scorer,
    faithfulness_scorer,
    hallucination_scorer,
    multi_turn_judge_scorer,
    noise_sensitivity_scorer,
    prompt_alignment_scorer,
    rubric_scorer,
    summarization_scorer,
    tool_call_accuracy_scorer,
    toxicity_scorer,
    trajectory_accuracy_scorer,
)
from localjudge.scoring import (
    Classifier,
    JudgeStep,
    Scorer,
    UnscorableError,
    create_classifier_scorer,
    create_scorer,
    filter_run,
    not_scorable,
)

if TYPE_CHECKING:
    from localjudge.bench import run_bench
    from localjudge.engines.transformers import TransformersJudge

__version__ = "0.1.0"

__all__ = [
    "SCORERS",
    "Classifier",
    "Columns",
    "Evaluation",
    "FakeJudge",
    "Generation",
    "InvalidRunError",
    "ItemResult",
    "JudgeStep",
    "Judge",
    "JudgeOutOfMemory",
    "LiveScorer",
    "ResultStore",
    "RunEvalsResult",
    "RunSummary",
    "ScoreResult",
    "Sample",
    "Scorer",
    "ScorerSummary",
    "ThresholdResult",
    "ToolCall",
    "TransformersJudge",
    "UnscorableError",
    "UnscriptedCallError",
    "answer_relevancy_scorer",
    "answer_similarity_scorer",
    "bias_scorer",
    "build_scorer",
    "context_precision_scorer",
    "context_recall_scorer",
    "context_relevance_scorer",
    "create_classifier_scorer",
    "create_scorer",
    "evaluate",
    "extract_tool_calls",
    "extract_tool_results",
    "faithfulness_scorer",
    "filter_run",
    "hallucination_scorer",
    "multi_turn_judge_scorer",
    "noise_sensitivity_scorer",
    "not_scorable",
    "prompt_alignment_scorer",
    "rubric_scorer",
    "run_bench",
    "run_evals",
    "score_runs",
    "summarization_scorer",
    "tool_call_accuracy_scorer",
    "toxicity_scorer",
    "trajectory_accuracy_scorer",
]


def __getattr__(name: str) -> Any:
    if name == "TransformersJudge":  # heavy: torch, transformers, llguidance
        from localjudge.engines.transformers import TransformersJudge

        return TransformersJudge
    if name == "run_bench":  # numpy, matplotlib
        from localjudge.bench import run_bench

        return run_bench
    raise AttributeError(f"module 'localjudge' has no attribute {name!r}")
