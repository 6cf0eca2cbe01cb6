"""The coded scorers: Mastra's code scorers and checks, scored by a formula with no judge, one
file per scorer (`checks/`: the quick checks, one file each), and the kit they share.

The kit: `code_scorer` (`CodeScorer`, what a model-free scorer adds to `Scorer`), `js_strings`
(JavaScript's string rules, as Mastra's code reads text), `trajectory_compare` (Mastra's
trajectory measures) and `lexicons/` (the AFINN-165 word list `tone` reads). This module lists
what the registry (`localjudge.scorers.registry`) reads: the factories.
"""

from __future__ import annotations

from localjudge.scorers.coded import checks
from localjudge.scorers.coded.checks import CHECKS
from localjudge.scorers.coded.code_scorer import CodeScorer
from localjudge.scorers.coded.code_tool_call_accuracy import code_tool_call_accuracy_scorer
from localjudge.scorers.coded.code_trajectory import code_trajectory_scorer
from localjudge.scorers.coded.code_trajectory_accuracy import code_trajectory_accuracy_scorer
from localjudge.scorers.coded.completeness import completeness_scorer
from localjudge.scorers.coded.content_similarity import content_similarity_scorer
from localjudge.scorers.coded.keyword_coverage import keyword_coverage_scorer
from localjudge.scorers.coded.textual_difference import textual_difference_scorer
from localjudge.scorers.coded.tone import tone_scorer

__all__ = ["CHECKS", "CodeScorer", "checks", "code_tool_call_accuracy_scorer", "code_trajectory_accuracy_scorer",
           "code_trajectory_scorer", "completeness_scorer", "content_similarity_scorer", "keyword_coverage_scorer",
           "textual_difference_scorer", "tone_scorer"]
