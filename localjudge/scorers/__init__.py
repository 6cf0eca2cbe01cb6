"""The scorers, by kind, and the registry that names them for the CLI, `bench` and sweeps.

- `judged/`: the scorers that ask the judge, one file each, and their kit (claims, statements,
  verdicts, direct and ensemble modes).
- `coded/`: Mastra's code scorers and checks, scored by a formula with no judge, and their kit.
- `registry`: `SCORERS` (every scorer by name), `register_scorer`, `build_scorer` and what the
  CLI asks of a name (`scorer_options`, `needs_judge`...); `discovery`: scorers from a module the
  user names or an installed entry point of the group ``localjudge.scorers``.

A new scorer is one file in its kind's folder plus one line in `SCORERS` (or, from outside the
package, one `register_scorer` call). This module lists the public names.
"""

from __future__ import annotations

from localjudge.scorers.coded import (
    CodeScorer,
    checks,
    code_tool_call_accuracy_scorer,
    code_trajectory_accuracy_scorer,
    code_trajectory_scorer,
    completeness_scorer,
    content_similarity_scorer,
    keyword_coverage_scorer,
    textual_difference_scorer,
    tone_scorer,
)
from localjudge.scorers.discovery import ENTRY_POINT_GROUP
from localjudge.scorers.judged import (
    MODES,
    WORDS_PER_CLAIM,
    EnsembleScorer,
    answer_relevancy_scorer,
    answer_similarity_scorer,
    bias_scorer,
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
from localjudge.scorers.registry import (
    CODE_SCORERS,
    SCORER_MODES,
    SCORERS,
    build_scorer,
    check_options,
    get_scorer_factory,
    load_scorer_modules,
    needs_judge,
    register_scorer,
    scorer_options,
    uses_judge,
)

__all__ = ["CODE_SCORERS", "ENTRY_POINT_GROUP", "MODES", "SCORERS", "SCORER_MODES", "WORDS_PER_CLAIM", "CodeScorer",
           "EnsembleScorer",
           "answer_relevancy_scorer", "answer_similarity_scorer", "bias_scorer", "build_scorer", "check_options",
           "checks", "code_tool_call_accuracy_scorer", "code_trajectory_accuracy_scorer", "code_trajectory_scorer",
           "completeness_scorer", "content_similarity_scorer", "context_precision_scorer", "context_recall_scorer",
           "context_relevance_scorer", "faithfulness_scorer", "get_scorer_factory", "hallucination_scorer",
           "keyword_coverage_scorer", "load_scorer_modules", "multi_turn_judge_scorer", "needs_judge",
           "noise_sensitivity_scorer", "prompt_alignment_scorer", "register_scorer", "rubric_scorer",
           "scorer_options", "summarization_scorer", "textual_difference_scorer", "tone_scorer",
           "tool_call_accuracy_scorer", "toxicity_scorer", "trajectory_accuracy_scorer", "uses_judge"]
